/**
 * Chooses the providers from the worker's variables. Both default to the offline adapters, which
 * need no network and no key.
 *
 * | variable | values | default |
 * |---|---|---|
 * | EMBEDDINGS_PROVIDER | offline, openai, workers-ai | offline |
 * | LLM_PROVIDER | offline, openai, workers-ai | offline |
 * | OPENAI_BASE_URL | any OpenAI-compatible API, up to the version | https://api.openai.com/v1 |
 * | OPENAI_API_KEY | a secret (`wrangler secret put OPENAI_API_KEY`) | required for openai |
 * | EMBEDDINGS_MODEL | the provider's model | text-embedding-3-small / @cf/baai/bge-base-en-v1.5 |
 * | EMBEDDINGS_DIMENSIONS | 1..1536: shortens OpenAI vectors; the vector size of an unknown model | the model's own |
 * | EMBEDDINGS_THRESHOLD | 0..1: semantic-search's default threshold | the provider's own (`defaultThreshold`) |
 * | LLM_MODEL | the provider's chat model | gpt-4o-mini / @cf/meta/llama-3.1-8b-instruct |
 *
 * workers-ai needs the `AI` binding (`[ai] binding = "AI"` in wrangler.toml).
 */
import * as z from 'zod';
import { fail, FailureError, type Failure, type FieldError } from '../core/contract.ts';
import { offlineDependencyDetector, offlineEmbeddings } from './offline.ts';
import {
  createOpenAiDependencyDetector,
  createOpenAiEmbeddings,
  DEFAULT_OPENAI_BASE_URL,
  DEFAULT_OPENAI_EMBEDDINGS_MODEL,
  OPENAI_NATIVE_DIMENSIONS,
} from './openai.ts';
import { STORED_DIMENSIONS } from './types.ts';
import type { Providers } from '../core/providers.ts';
import {
  createWorkersAiDependencyDetector,
  createWorkersAiEmbeddings,
  DEFAULT_WORKERS_AI_EMBEDDINGS_MODEL,
  WORKERS_AI_NATIVE_DIMENSIONS,
  type AiBinding,
} from './workers-ai.ts';

export type { AiBinding } from './workers-ai.ts';

export const PROVIDER_KINDS = ['offline', 'openai', 'workers-ai'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** The validated provider settings (see the table above for the variables they come from). */
export interface ProviderConfig {
  embeddingsProvider: ProviderKind;
  llmProvider: ProviderKind;
  openAiBaseUrl: string;
  openAiApiKey?: string;
  embeddingsModel?: string;
  embeddingsDimensions?: number;
  /** Overrides the embeddings provider's own default threshold. */
  embeddingsThreshold?: number;
  llmModel?: string;
}

/** Unset and empty variables are the same: wrangler and .dev.vars make empty strings easily. */
const unsetIfEmpty = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);

const providerKind = (variable: string) =>
  z.preprocess(
    (value) => (typeof value === 'string' ? unsetIfEmpty(value.trim().toLowerCase()) : value),
    z
      .enum(PROVIDER_KINDS, {
        error: (issue) => `${variable} must be one of: ${PROVIDER_KINDS.join(', ')}, but it is ${JSON.stringify(issue.input)}.`,
      })
      .default('offline'),
  );

const optionalText = (variable: string) =>
  z.preprocess(
    unsetIfEmpty,
    z
      .string({ error: `${variable} must be a string.` })
      .trim()
      .optional(),
  );

/**
 * The provider variables, checked together: each message names the variable to fix. Parses the
 * whole worker `env` (other keys are ignored; `AI` is only checked for presence).
 */
export const providerConfigSchema = z
  .object({
    EMBEDDINGS_PROVIDER: providerKind('EMBEDDINGS_PROVIDER'),
    LLM_PROVIDER: providerKind('LLM_PROVIDER'),
    OPENAI_BASE_URL: z.preprocess(
      unsetIfEmpty,
      z
        .url({
          protocol: /^https?$/,
          error: 'OPENAI_BASE_URL must be an http(s) URL up to the API version, e.g. https://api.openai.com/v1.',
        })
        .default(DEFAULT_OPENAI_BASE_URL),
    ),
    OPENAI_API_KEY: optionalText('OPENAI_API_KEY'),
    EMBEDDINGS_MODEL: optionalText('EMBEDDINGS_MODEL'),
    EMBEDDINGS_DIMENSIONS: z.preprocess(
      (value) => (typeof value === 'string' ? (unsetIfEmpty(value) === undefined ? undefined : Number(value)) : value),
      z
        .int({ error: `EMBEDDINGS_DIMENSIONS must be a whole number from 1 to ${STORED_DIMENSIONS}.` })
        .min(1, `EMBEDDINGS_DIMENSIONS must be a whole number from 1 to ${STORED_DIMENSIONS}.`)
        .max(
          STORED_DIMENSIONS,
          `EMBEDDINGS_DIMENSIONS must be at most ${STORED_DIMENSIONS}: vectors are stored as vector(${STORED_DIMENSIONS}).`,
        )
        .optional(),
    ),
    EMBEDDINGS_THRESHOLD: z.preprocess(
      (value) => (typeof value === 'string' ? (unsetIfEmpty(value) === undefined ? undefined : Number(value)) : value),
      z
        .number({ error: 'EMBEDDINGS_THRESHOLD must be a number from 0 to 1.' })
        .min(0, 'EMBEDDINGS_THRESHOLD must be a number from 0 to 1.')
        .max(1, 'EMBEDDINGS_THRESHOLD must be a number from 0 to 1.')
        .optional(),
    ),
    LLM_MODEL: optionalText('LLM_MODEL'),
    AI: z.unknown().optional(),
  })
  .superRefine((env, context) => {
    const problem = (variable: string, message: string) => context.addIssue({ code: 'custom', path: [variable], message });
    /** "EMBEDDINGS_PROVIDER is", "EMBEDDINGS_PROVIDER and LLM_PROVIDER are", or '' when neither uses `kind`. */
    const usersOf = (kind: ProviderKind) => {
      const names = (['EMBEDDINGS_PROVIDER', 'LLM_PROVIDER'] as const).filter((name) => env[name] === kind);
      return names.length === 0 ? '' : `${names.join(' and ')} ${names.length === 1 ? 'is' : 'are'}`;
    };

    const openAiUsers = usersOf('openai');
    if (openAiUsers && !env.OPENAI_API_KEY) {
      problem(
        'OPENAI_API_KEY',
        `${openAiUsers} 'openai' but OPENAI_API_KEY is not set; set it with \`wrangler secret put OPENAI_API_KEY\` (locally in .dev.vars), or choose the offline provider.`,
      );
    }
    const workersAiUsers = usersOf('workers-ai');
    if (workersAiUsers && typeof (env.AI as Partial<AiBinding> | undefined)?.run !== 'function') {
      problem(
        'AI',
        `${workersAiUsers} 'workers-ai' but the worker has no AI binding; add \`[ai] binding = "AI"\` to wrangler.toml, or choose another provider.`,
      );
    }

    const dimensions = env.EMBEDDINGS_DIMENSIONS;
    if (env.EMBEDDINGS_PROVIDER === 'openai') {
      const model = env.EMBEDDINGS_MODEL ?? DEFAULT_OPENAI_EMBEDDINGS_MODEL;
      const native = OPENAI_NATIVE_DIMENSIONS[model];
      if (dimensions === undefined && native === undefined) {
        problem(
          'EMBEDDINGS_DIMENSIONS',
          `EMBEDDINGS_MODEL '${model}' has no known vector size; set EMBEDDINGS_DIMENSIONS to it (at most ${STORED_DIMENSIONS}).`,
        );
      } else if (dimensions === undefined && native !== undefined && native > STORED_DIMENSIONS) {
        problem(
          'EMBEDDINGS_DIMENSIONS',
          `EMBEDDINGS_MODEL '${model}' makes ${native}-dimensional vectors, more than the ${STORED_DIMENSIONS} that can be stored; set EMBEDDINGS_DIMENSIONS=${STORED_DIMENSIONS} (the model shortens them) or choose a smaller model.`,
        );
      }
    }
    if (env.EMBEDDINGS_PROVIDER === 'workers-ai') {
      const model = env.EMBEDDINGS_MODEL ?? DEFAULT_WORKERS_AI_EMBEDDINGS_MODEL;
      const native = WORKERS_AI_NATIVE_DIMENSIONS[model];
      if (dimensions === undefined && native === undefined) {
        problem(
          'EMBEDDINGS_DIMENSIONS',
          `EMBEDDINGS_MODEL '${model}' has no known vector size; set EMBEDDINGS_DIMENSIONS to it (at most ${STORED_DIMENSIONS}).`,
        );
      } else if (dimensions !== undefined && native !== undefined && dimensions !== native) {
        problem(
          'EMBEDDINGS_DIMENSIONS',
          `Workers AI cannot shorten vectors: EMBEDDINGS_MODEL '${model}' makes ${native}-dimensional vectors, but EMBEDDINGS_DIMENSIONS is ${dimensions}; remove EMBEDDINGS_DIMENSIONS.`,
        );
      }
    }
  })
  .transform((env): ProviderConfig => ({
    embeddingsProvider: env.EMBEDDINGS_PROVIDER,
    llmProvider: env.LLM_PROVIDER,
    openAiBaseUrl: env.OPENAI_BASE_URL,
    openAiApiKey: env.OPENAI_API_KEY,
    embeddingsModel: env.EMBEDDINGS_MODEL,
    embeddingsDimensions: env.EMBEDDINGS_DIMENSIONS,
    embeddingsThreshold: env.EMBEDDINGS_THRESHOLD,
    llmModel: env.LLM_MODEL,
  }));

/**
 * Reads the provider settings from the worker's `env`; a wrong setting is a CONFIG_ERROR whose
 * message names every variable to fix (never a secret's value).
 */
export function readProviderConfig(env: Record<string, unknown>): { ok: true; config: ProviderConfig } | Failure {
  const result = providerConfigSchema.safeParse(env);
  if (result.success) return { ok: true, config: result.data };
  const fields: FieldError[] = result.error.issues.map((issue) => ({
    field: issue.path.map(String).join('.'),
    message: issue.message,
    code: issue.code,
  }));
  return fail('CONFIG_ERROR', `The deployment's provider configuration is wrong: ${fields.map((f) => f.message).join(' ')}`, {
    details: { fields },
  });
}

/**
 * The providers configured by a worker's variables (`env`, with the `AI` binding when there is
 * one). A tool that uses providers names this function in its definition (`providers:
 * providersFromEnv`); the pipeline calls it on the first read of `context.providers`. Only the
 * workers of such tools bundle the adapters. A wrong setting throws a CONFIG_ERROR (FailureError).
 */
export function providersFromEnv(env: Record<string, unknown>): Providers {
  const config = readProviderConfig(env);
  if (!config.ok) throw new FailureError(config);
  return createProviders(config.config, env.AI as AiBinding | undefined);
}

/**
 * Builds the configured providers. `ai` is the worker's `AI` binding, needed only for workers-ai
 * (readProviderConfig has checked it is there).
 */
export function createProviders(config: ProviderConfig, ai?: AiBinding): Providers {
  const openAi = { apiKey: config.openAiApiKey ?? '', baseUrl: config.openAiBaseUrl };
  const binding = () => {
    if (!ai) throw new Error("The workers-ai provider needs the worker's AI binding; pass env.AI to createProviders.");
    return ai;
  };
  const embeddingsModel = { model: config.embeddingsModel, dimensions: config.embeddingsDimensions };
  const embeddings =
    config.embeddingsProvider === 'openai'
      ? createOpenAiEmbeddings({ ...openAi, ...embeddingsModel })
      : config.embeddingsProvider === 'workers-ai'
        ? createWorkersAiEmbeddings({ ai: binding(), ...embeddingsModel })
        : offlineEmbeddings;
  return {
    embeddings: config.embeddingsThreshold === undefined ? embeddings : { ...embeddings, defaultThreshold: config.embeddingsThreshold },
    dependencies:
      config.llmProvider === 'openai'
        ? createOpenAiDependencyDetector({ ...openAi, model: config.llmModel })
        : config.llmProvider === 'workers-ai'
          ? createWorkersAiDependencyDetector({ ai: binding(), model: config.llmModel })
          : offlineDependencyDetector,
  };
}
