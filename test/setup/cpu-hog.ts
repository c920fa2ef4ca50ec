/**
 * A CPU hog the integration tests start and stop over HTTP (they run inside workerd and cannot
 * spawn processes): one busy-looping child process per core, so that everything else on the
 * machine (workerd, the stand-ins) competes for CPU.
 *
 *   POST {controlUrl} {"action": "start"}   starts the hog (once; a second start changes nothing)
 *   POST {controlUrl} {"action": "stop"}    kills its processes, by process id
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { startControlServer } from './control-server.ts';

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

  const control = await startControlServer({
    start: () => {
      start();
      return { processes: spinners.map((child) => child.pid) };
    },
    stop,
  });
  return {
    controlUrl: control.url,
    close: async () => {
      stop();
      await control.close();
    },
  };
}
