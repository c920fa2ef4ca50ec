/**
 * A local stand-in for an OpenAI-compatible API, for development and tests only (never bundled into
 * a Worker). It listens on 127.0.0.1 (a random port by default) and answers
 * - `POST /v1/embeddings` with deterministic vectors from the offline hashing embedder;
 * - `POST /v1/chat/completions` (json_schema response format required) by running the offline
 *   dependency heuristic on the tasks in the prompt, or with a scripted answer;
 * and lets tests script faults: failed requests, malformed answers, a wrong key (401 in OpenAI's
 * error shape). Every request is logged.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { detectDependencies } from '../shared/providers/dependency-heuristic.ts';
import { embedText, HASHING_EMBEDDER_DIMENSIONS } from '../shared/providers/hashing-embedder.ts';
import type { ChatMessage, LlmAnswer, PromptPayload } from '../shared/providers/llm-detection.ts';
import { keepIdleConnections } from './keep-alive.ts';

export interface OpenAiStandInOptions {
  /** The only key accepted. */
  apiKey?: string;
  /** 0 picks a free port. */
  port?: number;
}

/** A scripted failure: the status, and optionally the body (default: OpenAI's error shape) and headers. */
export interface ScriptedFailure {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RecordedRequest {
  method: string;
  /** e.g. '/v1/embeddings' */
  path: string;
  /** The Authorization header as sent. */
  authorization: string | undefined;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: unknown;
}

export interface OpenAiStandIn {
  /** Base URL including /v1, e.g. 'http://127.0.0.1:43210/v1'. */
  url: string;
  apiKey: string;
  /** The next `count` requests (any endpoint, before the key is checked) answer with `failure`. */
  failNext(count: number, failure: ScriptedFailure): void;
  /** The next chat completion answers with `content` verbatim; calls queue up in order. */
  answerNextChatWith(content: string): void;
  /** Every request received, oldest first; clear it with `requests.length = 0`. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export const DEFAULT_STAND_IN_API_KEY = 'sk-stand-in-0123456789abcdef';

/** OpenAI's own limit on inputs per embeddings request. */
const MAX_EMBEDDING_INPUTS = 2048;
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Starts the stand-in; `close()` stops it. */
export async function startOpenAiStandIn({
  apiKey = DEFAULT_STAND_IN_API_KEY,
  port = 0,
}: OpenAiStandInOptions = {}): Promise<OpenAiStandIn> {
  const failures: ScriptedFailure[] = [];
  const chatAnswers: string[] = [];
  const requests: RecordedRequest[] = [];

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendError(response, 500, `Stand-in failure: ${(error as Error).message}`, 'server_error');
      else response.destroy();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const text = await readBody(request);
    const path = new URL(request.url ?? '/', 'http://stand-in').pathname;
    const body = parseJson(text);
    requests.push({ method: request.method ?? 'GET', path, authorization: request.headers.authorization, body });

    const failure = failures.shift();
    if (failure) {
      const payload = failure.body ?? {
        error: { message: `Scripted failure with status ${failure.status}.`, type: 'server_error', param: null, code: null },
      };
      send(response, failure.status, payload, failure.headers);
      return;
    }
    if (refusedCredential(response, request.headers.authorization, apiKey)) return;
    if (request.method !== 'POST' || (path !== '/v1/embeddings' && path !== '/v1/chat/completions')) {
      sendError(response, 404, `Invalid URL (${request.method} ${path})`, 'invalid_request_error');
      return;
    }
    if (typeof body !== 'object' || body === null) {
      sendError(response, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error');
      return;
    }
    if (path === '/v1/embeddings') answerEmbeddings(response, body as Record<string, unknown>);
    else answerChat(response, body as Record<string, unknown>, () => chatAnswers.shift(), `chatcmpl-stand-in-${requests.length}`);
  }

  keepIdleConnections(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${address.port}/v1`,
    apiKey,
    failNext(count, failure) {
      for (let i = 0; i < count; i++) failures.push(failure);
    },
    answerNextChatWith(content) {
      chatAnswers.push(content);
    },
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Answers 401 as OpenAI does for a missing or wrong key, and says whether it did. */
function refusedCredential(response: ServerResponse, authorization: string | undefined, apiKey: string): boolean {
  const presented = /^Bearer (.+)$/.exec(authorization ?? '')?.[1];
  if (presented === undefined) {
    sendError(
      response,
      401,
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
      'invalid_request_error',
    );
    return true;
  }
  if (presented !== apiKey) {
    // Quotes the wrong key on purpose: the adapters must never pass such a message on.
    sendError(
      response,
      401,
      `Incorrect API key provided: ${presented}. You can find your API key at https://platform.openai.com/account/api-keys.`,
      'invalid_request_error',
      'invalid_api_key',
    );
    return true;
  }
  return false;
}

/** `POST /v1/embeddings`: the offline embedder's vectors, checked as OpenAI checks the request. */
function answerEmbeddings(response: ServerResponse, body: Record<string, unknown>): void {
  const { model, input, dimensions } = body;
  const inputs = typeof input === 'string' ? [input] : input;
  if (typeof model !== 'string' || model === '')
    return sendError(response, 400, 'you must provide a model parameter', 'invalid_request_error');
  if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every((x) => typeof x === 'string' && x !== '')) {
    return sendError(
      response,
      400,
      "'$.input' is invalid: expected a non-empty string or array of non-empty strings.",
      'invalid_request_error',
    );
  }
  if (inputs.length > MAX_EMBEDDING_INPUTS) {
    return sendError(response, 400, `'$.input' is too long: at most ${MAX_EMBEDDING_INPUTS} inputs per request.`, 'invalid_request_error');
  }
  if (
    dimensions !== undefined &&
    (!Number.isInteger(dimensions) || (dimensions as number) < 1 || (dimensions as number) > HASHING_EMBEDDER_DIMENSIONS)
  ) {
    return sendError(response, 400, `'dimensions' must be an integer from 1 to ${HASHING_EMBEDDER_DIMENSIONS}.`, 'invalid_request_error');
  }
  const size = (dimensions as number | undefined) ?? HASHING_EMBEDDER_DIMENSIONS;
  const tokens = (inputs as string[]).reduce((sum, text) => sum + text.split(/\s+/).length, 0);
  send(response, 200, {
    object: 'list',
    data: (inputs as string[]).map((text, index) => ({ object: 'embedding', index, embedding: Array.from(embedText(text, size)) })),
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

/**
 * `POST /v1/chat/completions` with a JSON-schema answer: the next scripted one when the test set one
 * (taken only by a valid request), else the offline heuristic's answer to the prompt's tasks.
 */
function answerChat(response: ServerResponse, body: Record<string, unknown>, scripted: () => string | undefined, id: string): void {
  const {
    model,
    messages,
    response_format: format,
  } = body as {
    model?: unknown;
    messages?: unknown;
    response_format?: { type?: unknown; json_schema?: { name?: unknown; schema?: unknown } };
  };
  if (typeof model !== 'string' || model === '')
    return sendError(response, 400, 'you must provide a model parameter', 'invalid_request_error');
  if (!Array.isArray(messages) || messages.length === 0)
    return sendError(response, 400, "'messages' must be a non-empty array.", 'invalid_request_error');
  if (format?.type !== 'json_schema' || typeof format.json_schema?.name !== 'string' || typeof format.json_schema.schema !== 'object') {
    return sendError(
      response,
      400,
      "The stand-in answers only with response_format { type: 'json_schema', json_schema: { name, schema } }.",
      'invalid_request_error',
    );
  }
  const content = scripted() ?? JSON.stringify(heuristicAnswer(messages as ChatMessage[]));
  send(response, 200, {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  });
}

/** Runs the offline heuristic on the tasks of the first user message (the adapters' prompt payload). */
function heuristicAnswer(messages: ChatMessage[]): LlmAnswer {
  const prompt = parseJson(messages.find((m) => m.role === 'user')?.content ?? '') as Partial<PromptPayload> | undefined;
  const titles = new Map((prompt?.documents ?? []).map((d) => [d.id, d.title]));
  const tasks = (prompt?.tasks ?? []).map((t) => ({
    id: t.id,
    text: t.text,
    position: t.position,
    documentId: t.document,
    documentTitle: titles.get(t.document) ?? '',
  }));
  return {
    relationships: detectDependencies(tasks).map((r) => ({
      source: r.sourceTaskId,
      target: r.targetTaskId,
      type: r.type,
      confidence: r.confidence,
      rationale: r.rationale,
    })),
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) request.destroy(new Error('request body too large'));
      else chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

function sendError(response: ServerResponse, status: number, message: string, type: string, code: string | null = null): void {
  send(response, status, { error: { message, type, param: null, code } });
}
