/**
 * `npm run conformance -- [--url <mcp url>] [--key <api key>] [--output-dir <dir>] [scenario ...]`: runs the official MCP
 * conformance suite (`@modelcontextprotocol/conformance`, a pinned dev dependency) against a running
 * server, by default `npm run dev`'s gateway at http://127.0.0.1:PORT/mcp (8787 unless PORT is set)
 * with the key in `KEY`.
 *
 * The suite's client sends no credentials, and every request to /mcp needs an API key, so the
 * suite is pointed at a proxy on 127.0.0.1 that adds `Authorization: Bearer <key>` and passes
 * everything else through unchanged (the Host and Origin headers included, for the DNS-rebinding
 * scenario).
 *
 * Without scenarios it runs those that apply to a server of tools without resources, prompts,
 * completions, logging, sampling or elicitation: the others need the suite's own fixture tools
 * and features (`test_simple_text`, `test_image_content`, prompts, resources, ...).
 *
 * `npm run conformance -- --authorization [--url <mcp url>]` runs the suite's authorization-server
 * scenarios instead (metadata, and the authorization code grant with PKCE and the MCP URL as the
 * resource): it registers a client whose redirect is the suite's callback on 127.0.0.1, and prints
 * the consent page's URL for you to open and approve with an API key. No key is needed here.
 * `--output-dir` keeps each scenario's checks (checks.json) there.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from './wrangler-dev.ts';

/** The suite's command, installed at the version package.json pins: its scenarios change between versions. */
const SUITE = fileURLToPath(new URL('../node_modules/.bin/conformance', import.meta.url));
const APPLICABLE = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection', 'http-header-validation'];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: 'string', default: `http://127.0.0.1:${process.env.PORT ?? 8787}/mcp` },
    key: { type: 'string', default: process.env.KEY },
    authorization: { type: 'boolean', default: false },
    'output-dir': { type: 'string' },
  },
});
const target = new URL(values.url);

/** Runs the suite with `args` (and the output directory, if given); resolves with its exit code (the caller's event loop keeps running). */
async function runSuite(args: string[]): Promise<number | null> {
  const output = values['output-dir'] ? ['--output-dir', values['output-dir']] : [];
  const suite = spawn(SUITE, [...args, ...output], { stdio: 'inherit' });
  const [code] = (await once(suite, 'exit')) as [number | null];
  return code;
}

if (values.authorization) {
  const port = await freePort();
  const registered = await fetch(new URL('/oauth/register', target), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'MCP conformance suite',
      redirect_uris: [`http://127.0.0.1:${port}/callback`],
      token_endpoint_auth_method: 'none',
    }),
  });
  if (registered.status !== 201) {
    console.error(
      `Registering the suite's client at ${target.origin}/oauth/register answered ${registered.status}: ${await registered.text()}`,
    );
    process.exit(1);
  }
  const { client_id } = (await registered.json()) as { client_id: string };
  // `--name=value`: a client id may begin with '-' (its alphabet is base64url), which the suite's
  // command-line parser would otherwise read as options of its own ('-V…' prints its version and stops).
  const args = ['authorization', `--url=${target.origin}`, `--client-id=${client_id}`, `--resource=${target.href}`, `--port=${port}`];
  process.exit((await runSuite(args)) === 0 ? 0 : 1);
}
if (!values.key) {
  console.error('Give the API key with --key or KEY (npm run dev prints one).');
  process.exit(2);
}

// Forwards every request to the server with the key added; the answer goes back as it came.
const proxy = createServer(async (request, response) => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined && !['host', 'content-length', 'connection'].includes(name)) headers.set(name, String(value));
  }
  headers.set('authorization', `Bearer ${values.key}`);
  const answer = await fetch(new URL(request.url ?? '/', target), {
    method: request.method,
    headers,
    body: chunks.length ? Buffer.concat(chunks) : undefined,
  });
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
  if ((await runSuite(['server', '--url', proxied, '--scenario', scenario])) !== 0) failed++;
}
proxy.close();
process.exit(failed ? 1 : 0);
