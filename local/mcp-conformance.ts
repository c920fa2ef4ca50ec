/**
 * `npm run conformance -- [--url <mcp url>] [--key <api key>] [scenario ...]`: runs the official MCP
 * conformance suite (`@modelcontextprotocol/conformance`, through npx) against a running server,
 * by default `npm run dev`'s gateway at http://127.0.0.1:PORT/mcp (8787 unless PORT is set) with the key in `KEY`.
 *
 * The suite's client sends no credentials, and every request to /mcp needs an API key, so the
 * suite is pointed at a proxy on 127.0.0.1 that adds `Authorization: Bearer <key>` and passes
 * everything else through unchanged (the Host and Origin headers included, for the DNS-rebinding
 * scenario).
 *
 * Without scenarios it runs those that apply to a server of tools without resources, prompts,
 * completions, logging, sampling or elicitation: the others need the suite's own fixture tools
 * and features (`test_simple_text`, `test_image_content`, prompts, resources, ...).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';

/** The suite's version, pinned: its scenarios change between versions. */
const SUITE = '@modelcontextprotocol/conformance@0.1.16';
const APPLICABLE = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { url: { type: 'string', default: `http://127.0.0.1:${process.env.PORT ?? 8787}/mcp` }, key: { type: 'string', default: process.env.KEY } },
});
if (!values.key) {
  console.error('Give the API key with --key or KEY (npm run dev prints one).');
  process.exit(2);
}
const target = new URL(values.url);

// Forwards every request to the server with the key added; the answer goes back as it came.
const proxy = createServer(async (request, response) => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined && !['host', 'content-length', 'connection'].includes(name)) headers.set(name, String(value));
  }
  headers.set('authorization', `Bearer ${values.key}`);
  const answer = await fetch(new URL(request.url ?? '/', target), { method: request.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
  const out: Record<string, string> = {};
  // fetch has decoded the body: its length and encoding are the proxy's to set.
  answer.headers.forEach((value, name) => {
    if (!['content-encoding', 'content-length', 'transfer-encoding', 'connection'].includes(name)) out[name] = value;
  });
  response.writeHead(answer.status, out);
  response.end(Buffer.from(await answer.arrayBuffer()));
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
const proxied = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${target.pathname}`;

let failed = 0;
for (const scenario of positionals.length ? positionals : APPLICABLE) {
  // Not spawnSync: the proxy answers from this process's event loop meanwhile.
  const suite = spawn('npx', ['--yes', SUITE, 'server', '--url', proxied, '--scenario', scenario], { stdio: 'inherit' });
  const [code] = (await once(suite, 'exit')) as [number | null];
  if (code !== 0) failed++;
}
proxy.close();
process.exit(failed ? 1 : 0);
