/**
 * Adapters for any OpenAI-compatible HTTP API (OpenAI itself, Azure-style gateways, local
 * servers): embeddings via `POST {baseUrl}/embeddings`, dependency detection via
 * `POST {baseUrl}/chat/completions` with strict JSON-schema output.
 *
 * Failures become {@link ProviderError}s: HTTP 408/429/5xx, network errors and timeouts are
 * retryable; 400/401/403/404 are not, and say what to fix. The API key never appears in a message.
 */
import * as z from 'zod';
import { detectWithLlm, type LlmDetectionLimits } from './llm-detection.ts';
import { ProviderError, STORED_DIMENSIONS, UNCALIBRATED_THRESHOLD } from './types.ts';
import type { DependencyDetector, EmbeddingProvider } from '../core/providers.ts';
import {
  assertStorableDimensions,
  DEFAULT_TIMEOUT_MS,
  embedInBatches,
  isRetryableStatus,
  withDeadline,
  type BatchEmbedding,
} from './upstream.ts';

/** OPENAI_BASE_URL when unset. */
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** EMBEDDINGS_MODEL when unset (1536-d, so no padding). */
export const DEFAULT_OPENAI_EMBEDDINGS_MODEL = 'text-embedding-3-small';
/** LLM_MODEL when unset: supports strict JSON-schema output. */
export const DEFAULT_OPENAI_LLM_MODEL = 'gpt-4o-mini';
/** OpenAI refuses more inputs than this in one embeddings request. */
export const MAX_OPENAI_EMBEDDING_INPUTS = 2048;

/** Vector sizes of the models whose size is known; any other model needs `dimensions`. */
export const OPENAI_NATIVE_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

/**
 * semantic-search's default threshold per model; other models get {@link UNCALIBRATED_THRESHOLD}.
 * Not measured here (these models cannot be called offline); from published measurements:
 * - text-embedding-3-small/-large: unrelated texts score about 0.1–0.2 and related short texts
 *   about 0.4–0.5 (a relevant question against an article 0.44, an irrelevant one 0.08; "apple" /
 *   "orange" 0.45–0.47, "Jamaica" / "apple" about 0.2): 0.3 sits between them.
 * - text-embedding-ada-002: its similarities are compressed near 1 (unrelated queries reported at
 *   0.77–0.79, everyday use around 0.85 for "similar"): the seed's 0.7 let everything through.
 */
export const OPENAI_THRESHOLDS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 0.3,
  'text-embedding-3-large': 0.3,
  'text-embedding-ada-002': 0.8,
};

export interface OpenAiConnection {
  apiKey: string;
  /** Up to and including the version, e.g. 'https://api.openai.com/v1'. */
  baseUrl?: string;
  /** Per request. */
  timeoutMs?: number;
}

export interface OpenAiEmbeddingsOptions extends OpenAiConnection {
  model?: string;
  /**
   * Asked of the model (text-embedding-3 models shorten their vectors) and required for models not
   * in {@link OPENAI_NATIVE_DIMENSIONS}; at most 1536. Unset, the request carries no `dimensions`.
   */
  dimensions?: number;
  /** Texts per request; more are split over several requests. */
  maxBatchSize?: number;
}

export interface OpenAiDetectorOptions extends OpenAiConnection, LlmDetectionLimits {
  model?: string;
}

/**
 * Embeddings from an OpenAI-compatible API. The id is `openai:<model>`, or `openai:<model>@<dims>`
 * when `dimensions` shortens the vectors (shortened vectors are not comparable with full ones).
 */
export function createOpenAiEmbeddings({
  apiKey,
  baseUrl = DEFAULT_OPENAI_BASE_URL,
  timeoutMs = DEFAULT_TIMEOUT_MS,
  model = DEFAULT_OPENAI_EMBEDDINGS_MODEL,
  dimensions: requested,
  maxBatchSize = MAX_OPENAI_EMBEDDING_INPUTS,
}: OpenAiEmbeddingsOptions): EmbeddingProvider {
  const dimensions = requested ?? OPENAI_NATIVE_DIMENSIONS[model];
  assertStorableDimensions(model, dimensions);
  const id = requested !== undefined && requested !== OPENAI_NATIVE_DIMENSIONS[model] ? `openai:${model}@${requested}` : `openai:${model}`;
  const endpoint = {
    provider: id,
    apiKey,
    baseUrl: trimSlash(baseUrl),
    timeoutMs,
    purpose: 'embeddings',
    modelVariable: 'EMBEDDINGS_MODEL',
    model,
  } as const;
  const batches: BatchEmbedding = {
    id,
    dimensions,
    batchSize: Math.min(maxBatchSize, MAX_OPENAI_EMBEDDING_INPUTS),
    async fetchBatch(input, signal) {
      const body = { model, input, encoding_format: 'float', ...(requested === undefined ? {} : { dimensions: requested }) };
      const parsed = EMBEDDINGS_RESPONSE.safeParse(await post(endpoint, '/embeddings', body, signal));
      if (!parsed.success) return undefined;
      const items = parsed.data.data.toSorted((a, b) => a.index - b.index);
      // Vectors are matched to texts by `index`; a gap or a repeat means they cannot be.
      return items.every((item, i) => item.index === i) ? items.map((item) => item.embedding) : undefined;
    },
    shapeHint: 'check OPENAI_BASE_URL points at an OpenAI-compatible API.',
    dimensionsHint: `set EMBEDDINGS_DIMENSIONS to the model's vector size (at most ${STORED_DIMENSIONS}).`,
  };

  return {
    id,
    dimensions,
    defaultThreshold: OPENAI_THRESHOLDS[model] ?? UNCALIBRATED_THRESHOLD,
    embed: (texts, signal) => embedInBatches(batches, texts, signal),
  };
}

/** Dependency detection with a chat model of an OpenAI-compatible API; id `llm:openai:<model>`. */
export function createOpenAiDependencyDetector({
  apiKey,
  baseUrl = DEFAULT_OPENAI_BASE_URL,
  timeoutMs = DEFAULT_TIMEOUT_MS,
  model = DEFAULT_OPENAI_LLM_MODEL,
  ...limits
}: OpenAiDetectorOptions): DependencyDetector {
  const id = `llm:openai:${model}`;
  const endpoint = {
    provider: id,
    apiKey,
    baseUrl: trimSlash(baseUrl),
    timeoutMs,
    purpose: 'LLM',
    modelVariable: 'LLM_MODEL',
    model,
  } as const;

  return {
    id,
    detect: (tasks, options) =>
      detectWithLlm(
        tasks,
        options,
        id,
        async (messages, format, signal) => {
          const body = {
            model,
            messages,
            temperature: 0,
            response_format: { type: 'json_schema', json_schema: { name: format.name, strict: true, schema: format.schema } },
          };
          const parsed = CHAT_RESPONSE.safeParse(await post(endpoint, '/chat/completions', body, signal));
          const message = parsed.success ? parsed.data.choices[0]?.message : undefined;
          if (!message) {
            throw new ProviderError(
              `The LLM provider ${id} answered without a chat completion; check OPENAI_BASE_URL points at an OpenAI-compatible API.`,
              {
                provider: id,
                retryable: false,
              },
            );
          }
          if (message.refusal) {
            throw new ProviderError(`The model ${model} refused to analyse these tasks: ${message.refusal}`, {
              provider: id,
              retryable: false,
            });
          }
          // A missing content is treated like malformed output: it gets the repair round.
          return message.content ?? '';
        },
        limits,
      ),
  };
}

const EMBEDDINGS_RESPONSE = z.object({
  data: z.array(z.object({ index: z.int().min(0), embedding: z.array(z.number()) })),
});

const CHAT_RESPONSE = z.object({
  choices: z.array(
    z.object({
      message: z.object({ content: z.string().nullish(), refusal: z.string().nullish() }),
    }),
  ),
});

/** Upstream error texts are quoted up to this length. */
const MAX_UPSTREAM_MESSAGE_CHARS = 300;

interface Endpoint {
  provider: string;
  apiKey: string;
  baseUrl: string;
  timeoutMs: number;
  /** 'embeddings' or 'LLM': named in messages. */
  purpose: string;
  /** The variable that picks the model, named in messages. */
  modelVariable: string;
  model: string;
}

/** POSTs JSON and returns the parsed JSON answer, or throws a ProviderError saying what to do. */
async function post(endpoint: Endpoint, path: string, body: unknown, signal: AbortSignal | undefined): Promise<unknown> {
  const { provider, apiKey, baseUrl, timeoutMs, purpose } = endpoint;
  let answer: { status: number; headers: Headers; text: string };
  try {
    answer = await withDeadline(provider, timeoutMs, signal, async (deadline) => {
      const response = await fetch(baseUrl + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: deadline,
      });
      return { status: response.status, headers: response.headers, text: await response.text() };
    });
  } catch (error) {
    if (error instanceof ProviderError) throw error;
    throw new ProviderError(`Could not reach the ${purpose} provider at ${baseUrl} (${networkReason(error)}); this is usually temporary.`, {
      provider,
      retryable: true,
      cause: error,
    });
  }
  if (answer.status < 200 || answer.status > 299) throw httpError(endpoint, path, answer);
  try {
    return JSON.parse(answer.text);
  } catch {
    throw new ProviderError(`The ${purpose} provider at ${baseUrl} answered with something that is not JSON; check OPENAI_BASE_URL.`, {
      provider,
      status: answer.status,
      retryable: false,
    });
  }
}

function httpError(
  { provider, apiKey, baseUrl, purpose, modelVariable, model }: Endpoint,
  path: string,
  { status, headers, text }: { status: number; headers: Headers; text: string },
): ProviderError {
  const upstream = upstreamError(text, apiKey);
  const quoted = upstream.message ? `: ${upstream.message}` : '';
  const retryAfterMs = retryAfter(headers);
  let message: string;
  let retryable = isRetryableStatus(status);
  if (status === 401) {
    // The upstream text may quote the key, masked or not: never pass it on.
    message = `The ${purpose} provider rejected the API key (HTTP 401); set OPENAI_API_KEY to a valid key for ${baseUrl}.`;
  } else if (status === 403) {
    message = `The ${purpose} provider refused access to model '${model}' (HTTP 403)${quoted}; check that the API key may use it, or set ${modelVariable} to another model.`;
  } else if (status === 404) {
    message = `The ${purpose} provider at ${baseUrl} has no model '${model}' or no ${path} endpoint (HTTP 404)${quoted}; check ${modelVariable} and OPENAI_BASE_URL (it includes the version, e.g. /v1).`;
  } else if (status === 429 && upstream.code === 'insufficient_quota') {
    // Out of credit is not a rate limit: waiting two seconds will not help.
    retryable = false;
    message = `The ${purpose} provider's account has no quota left (HTTP 429)${quoted}; check its billing, or choose another provider.`;
  } else if (status === 429) {
    message = `The ${purpose} provider is rate limiting requests (HTTP 429)${retryAfterMs === undefined ? '' : `; it asks to wait ${Math.ceil(retryAfterMs / 1000)} s`}${quoted}.`;
  } else if (retryable) {
    message = `The ${purpose} provider failed (HTTP ${status})${quoted}; this is usually temporary.`;
  } else {
    message = `The ${purpose} provider rejected the request (HTTP ${status})${quoted}; check ${modelVariable} and the provider settings.`;
  }
  return new ProviderError(message, { provider, status, retryable, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
}

/** The upstream's own explanation, from OpenAI's `{ error: { message, code } }` shape or plain text, without the key. */
function upstreamError(text: string, apiKey: string): { message?: string; code?: unknown } {
  let message: unknown = text;
  let code: unknown;
  try {
    const error = (JSON.parse(text) as { error?: { message?: unknown; code?: unknown } | string }).error;
    message = typeof error === 'object' ? error.message : error;
    code = typeof error === 'object' ? error.code : undefined;
  } catch {
    // Not JSON: quote the text itself.
  }
  if (typeof message !== 'string' || message.trim() === '') return { code };
  const clean = (apiKey ? message.replaceAll(apiKey, '[redacted]') : message).replace(/\s+/g, ' ').trim();
  return { code, message: clean.length > MAX_UPSTREAM_MESSAGE_CHARS ? `${clean.slice(0, MAX_UPSTREAM_MESSAGE_CHARS)}…` : clean };
}

/** `retry-after-ms` (OpenAI), or `retry-after` in seconds or as an HTTP date. */
function retryAfter(headers: Headers): number | undefined {
  const ms = Number(headers.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (value.trim() !== '' && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Why fetch failed, e.g. 'ECONNREFUSED' (Node puts the reason in `cause`). */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
