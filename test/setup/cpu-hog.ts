/**
 * A CPU hog the integration tests start and stop over HTTP (they run inside workerd and cannot
 * spawn processes): one busy-looping child process per core, so that everything else on the
 * machine (workerd, the stand-ins) competes for CPU.
 *
 *   POST {controlUrl} {"action": "start"}   starts the hog (once; a second start changes nothing)
 *   POST {controlUrl} {"action": "stop"}    kills its processes, by process id
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';

export interface CpuHog {
  controlUrl: string;
  close(): Promise<void>;
}

/** Starts the control endpoint on 127.0.0.1; the hog itself starts when a test asks. */
export async function startCpuHogControl(): Promise<CpuHog> {
  let spinners: ChildProcess[] = [];
  const stop = () => {
    for (const child of spinners) if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
    spinners = [];
  };
  const start = () => {
    if (spinners.length > 0) return;
    spinners = Array.from({ length: availableParallelism() }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let action: unknown;
      try {
        action = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { action?: unknown }).action;
      } catch {
        action = undefined;
      }
      if (action === 'start') start();
      else if (action === 'stop') stop();
      else {
        response.writeHead(400, { 'content-type': 'application/json' });
        return response.end(JSON.stringify({ error: 'the body must be {"action": "start" | "stop"}' }));
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ok: true, action, processes: spinners.map((child) => child.pid) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    controlUrl: `http://127.0.0.1:${port}/`,
    close: async () => {
      stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
