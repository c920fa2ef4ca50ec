/**
 * Counts tokens for the tests that run inside workerd: `POST {url}` with any text answers
 * `{"tokens": n}`, the length of the text in OpenAI's o200k_base encoding (js-tiktoken), in Node.
 * js-tiktoken's encoding is a 5.6 MB module whose rank table takes hundreds of MiB to build: loaded
 * into workerd's test isolates, two suites doing it at once brought the test worker down.
 */
import { createServer } from 'node:http';
import { getEncoding, type Tiktoken } from 'js-tiktoken';
import { serveOnLoopback } from './control-server.ts';

/** A running token counter on 127.0.0.1. */
export interface TokenCounter {
  url: string;
  close(): Promise<void>;
}

/** Serves the counter on an ephemeral port of 127.0.0.1; the encoding is built on the first count. */
export async function startTokenCounter(): Promise<TokenCounter> {
  let encoding: Tiktoken | undefined;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      encoding ??= getEncoding('o200k_base');
      const tokens = encoding.encode(Buffer.concat(chunks).toString('utf8')).length;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ tokens }));
    });
  });
  return serveOnLoopback(server);
}
