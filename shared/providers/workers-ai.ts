/**
 * Adapters for Workers AI through the `AI` binding: embeddings (default '@cf/baai/bge-base-en-v1.5',
 * 768-d, zero-padded to 1536) and dependency detection with a text-generation model in JSON mode.
 *
 * The binding throws errors whose message starts with an internal code ("3040: Capacity
 * temporarily exceeded"); they become {@link ProviderError}s, retryable for timeouts, lack of
 * capacity and connection failures.
 */
import * as z from 'zod';
import { detectWithLlm, type LlmDetectionLimits } from './llm-detection.ts';
import { ProviderError, UNCALIBRATED_THRESHOLD } from './types.ts';
import type { DependencyDetector, EmbeddingProvider } from '../core/providers.ts';
import {
  assertStorableDimensions,
  DEFAULT_TIMEOUT_MS,
  embedInBatches,
  isRetryableStatus,
  withDeadline,
  type BatchEmbedding,
} from './upstream.ts';

/** The part of the Workers AI binding (`env.AI`) the adapters use. */
export interface AiBinding {
  run(model: string, inputs: unknown, options?: { signal?: AbortSignal }): Promise<unknown>;
}

/** EMBEDDINGS_MODEL when unset: 768-d, zero-padded to 1536. */
export const DEFAULT_WORKERS_AI_EMBEDDINGS_MODEL = '@cf/baai/bge-base-en-v1.5';
/** LLM_MODEL when unset. Cloudflare's model page marks it deprecated: set LLM_MODEL to a current model. */
export const DEFAULT_WORKERS_AI_LLM_MODEL = '@cf/meta/llama-3.1-8b-instruct';
/** Texts per embeddings call: the bge models take at most 100. */
export const DEFAULT_WORKERS_AI_BATCH_SIZE = 100;
/** Workers AI answers with 256 tokens unless told otherwise: too few for a list of relationships. */
export const DEFAULT_WORKERS_AI_MAX_TOKENS = 2_048;

/** Vector sizes of the embedding models whose size is known; any other model needs `dimensions`. */
export const WORKERS_AI_NATIVE_DIMENSIONS: Readonly<Record<string, number>> = {
  '@cf/baai/bge-small-en-v1.5': 384,
  '@cf/baai/bge-base-en-v1.5': 768,
  '@cf/baai/bge-large-en-v1.5': 1024,
  '@cf/baai/bge-m3': 1024,
  '@cf/qwen/qwen3-embedding-0.6b': 1024,
  '@cf/google/embeddinggemma-300m': 768,
};

/**
 * semantic-search's default threshold per model; other models get {@link UNCALIBRATED_THRESHOLD}.
 * Not measured here (the AI binding needs Cloudflare); from the models' own cards: BGE models are
 * trained with a low temperature, so their similarities sit high ("about in the interval [0.6, 1]"
 * for v1, "alleviated" by v1.5; the card suggests 0.8–0.9 to keep only near-duplicates): 0.6 keeps
 * related texts. bge-m3's card example scores related pairs about 0.63–0.68 and unrelated ones
 * about 0.35: 0.5.
 */
export const WORKERS_AI_THRESHOLDS: Readonly<Record<string, number>> = {
  '@cf/baai/bge-small-en-v1.5': 0.6,
  '@cf/baai/bge-base-en-v1.5': 0.6,
  '@cf/baai/bge-large-en-v1.5': 0.6,
  '@cf/baai/bge-m3': 0.5,
};

export interface WorkersAiEmbeddingsOptions {
  ai: AiBinding;
  model?: string;
  /** The model's vector size; required for models not in {@link WORKERS_AI_NATIVE_DIMENSIONS}. */
  dimensions?: number;
  maxBatchSize?: number;
  /** Per call. */
  timeoutMs?: number;
}

export interface WorkersAiDetectorOptions extends LlmDetectionLimits {
  ai: AiBinding;
  model?: string;
  maxTokens?: number;
  /** Per call. */
  timeoutMs?: number;
}

/** Embeddings from a Workers AI model; id `workers-ai:<model>`. */
export function createWorkersAiEmbeddings({
  ai,
  model = DEFAULT_WORKERS_AI_EMBEDDINGS_MODEL,
  dimensions = WORKERS_AI_NATIVE_DIMENSIONS[model],
  maxBatchSize = DEFAULT_WORKERS_AI_BATCH_SIZE,
  timeoutMs = DEFAULT_TIMEOUT_MS,
}: WorkersAiEmbeddingsOptions): EmbeddingProvider {
  assertStorableDimensions(model, dimensions);
  const id = `workers-ai:${model}`;
  const context = { provider: id, model, modelVariable: 'EMBEDDINGS_MODEL' };
  const batches: BatchEmbedding = {
    id,
    dimensions,
    batchSize: maxBatchSize,
    async fetchBatch(text, signal) {
      const parsed = EMBEDDINGS_OUTPUT.safeParse(await run(ai, context, { text }, timeoutMs, signal));
      return parsed.success ? parsed.data.data : undefined;
    },
    shapeHint: 'check that EMBEDDINGS_MODEL is an embeddings model.',
    dimensionsHint: "set EMBEDDINGS_DIMENSIONS to the model's vector size.",
  };

  return {
    id,
    dimensions,
    defaultThreshold: WORKERS_AI_THRESHOLDS[model] ?? UNCALIBRATED_THRESHOLD,
    embed: (texts, signal) => embedInBatches(batches, texts, signal),
  };
}

/** Dependency detection with a Workers AI text-generation model in JSON mode; id `llm:workers-ai:<model>`. */
export function createWorkersAiDependencyDetector({
  ai,
  model = DEFAULT_WORKERS_AI_LLM_MODEL,
  maxTokens = DEFAULT_WORKERS_AI_MAX_TOKENS,
  timeoutMs = DEFAULT_TIMEOUT_MS,
  ...limits
}: WorkersAiDetectorOptions): DependencyDetector {
  const id = `llm:workers-ai:${model}`;
  const context = { provider: id, model, modelVariable: 'LLM_MODEL' };

  return {
    id,
    detect: (tasks, options) =>
      detectWithLlm(
        tasks,
        options,
        id,
        async (messages, format, signal) => {
          const inputs = {
            messages,
            max_tokens: maxTokens,
            temperature: 0,
            // Workers AI takes the bare schema where OpenAI wraps it with a name.
            response_format: { type: 'json_schema', json_schema: format.schema },
          };
          const output = await run(ai, context, inputs, timeoutMs, signal);
          // In JSON mode `response` is usually the parsed object already; a string is parsed later.
          const response = (output as { response?: unknown } | null)?.response;
          return response ?? '';
        },
        limits,
      ),
  };
}

const EMBEDDINGS_OUTPUT = z.object({ data: z.array(z.array(z.number())) });

/** HTTP statuses of the binding's internal error codes (developers.cloudflare.com/workers-ai/platform/errors). */
const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  '3003': 400,
  '3006': 413,
  '3007': 408,
  '3008': 408,
  '3023': 403,
  '3036': 429,
  '3039': 400,
  '3040': 429,
  '3041': 403,
  '3042': 404,
  '5004': 400,
  '5005': 405,
  '5007': 400,
  '5016': 403,
  '5018': 403,
  '5019': 405,
};
/** The daily free allocation is used up: a 429 that retrying in seconds cannot cure. */
const ALLOCATION_EXHAUSTED = '3036';
const NO_SUCH_MODEL = new Set(['3042', '5007']);
/** Failures without a code that are worth retrying: a lost connection or an upstream hiccup. */
const TRANSIENT_MESSAGE =
  /network connection lost|connection (reset|closed|refused)|internal server error|service unavailable|InferenceUpstreamError|temporarily/i;
const MAX_UPSTREAM_MESSAGE_CHARS = 300;

interface RunContext {
  provider: string;
  model: string;
  modelVariable: string;
}

async function run(
  ai: AiBinding,
  context: RunContext,
  inputs: unknown,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  try {
    return await withDeadline(context.provider, timeoutMs, signal, (deadline) => ai.run(context.model, inputs, { signal: deadline }));
  } catch (error) {
    throw error instanceof ProviderError ? error : bindingError(context, error);
  }
}

function bindingError({ provider, model, modelVariable }: RunContext, error: unknown): ProviderError {
  const raw = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
  const upstream = raw.length > MAX_UPSTREAM_MESSAGE_CHARS ? `${raw.slice(0, MAX_UPSTREAM_MESSAGE_CHARS)}…` : raw;
  const code = /\b([35]\d{3}):/.exec(raw)?.[1];
  const status = code === undefined ? undefined : STATUS_OF_CODE[code];
  const common = { provider, cause: error, ...(status === undefined ? {} : { status }) };

  if (code === ALLOCATION_EXHAUSTED) {
    return new ProviderError(
      `Workers AI refused ${model}: the account's daily free allocation is used up (${upstream}); upgrade to Workers Paid, or choose another provider.`,
      {
        ...common,
        retryable: false,
      },
    );
  }
  if (code !== undefined && NO_SUCH_MODEL.has(code)) {
    return new ProviderError(`Workers AI has no model '${model}' (${upstream}); set ${modelVariable} to a current Workers AI model.`, {
      ...common,
      retryable: false,
    });
  }
  const retryable = status === undefined ? code === undefined && TRANSIENT_MESSAGE.test(raw) : isRetryableStatus(status);
  return new ProviderError(
    retryable
      ? `Workers AI model ${model} failed (${upstream}); this is usually temporary.`
      : `Workers AI model ${model} rejected the request (${upstream}); check ${modelVariable} and the inputs.`,
    { ...common, retryable },
  );
}
