/**
 * The provider configuration read from the worker's variables: the offline providers by default,
 * the remote ones as configured, each embeddings provider's default threshold, and CONFIG_ERROR
 * naming the variable for every mistake, never quoting the API key.
 */
import { describe, expect, it } from 'vitest';
import { detectDependencies } from '../../shared/providers/dependency-heuristic.ts';
import { embedText, HASHING_EMBEDDER_ID, HASHING_EMBEDDER_THRESHOLD } from '../../shared/providers/hashing-embedder.ts';
import { createProviders, readProviderConfig, type ProviderConfig } from '../../shared/providers/index.ts';
import { UNCALIBRATED_THRESHOLD } from '../../shared/providers/types.ts';
import type { AiBinding } from '../../shared/providers/workers-ai.ts';
import { TASKS } from './providers-fixture.ts';

describe('provider configuration', () => {
  const configError = (env: Record<string, unknown>) => {
    const result = readProviderConfig(env);
    if (result.ok) throw new Error(`expected a config error for ${JSON.stringify(env)}`);
    expect(result.error).toMatchObject({ code: 'CONFIG_ERROR', retryable: false });
    return result.error;
  };
  const config = (env: Record<string, unknown>): ProviderConfig => {
    const result = readProviderConfig(env);
    if (!result.ok) throw new Error(result.error.message);
    return result.config;
  };
  const ai: AiBinding = { run: async () => ({}) };

  it('defaults to the offline providers, which need nothing', async () => {
    expect(config({})).toMatchObject({ embeddingsProvider: 'offline', llmProvider: 'offline', openAiBaseUrl: 'https://api.openai.com/v1' });
    const providers = createProviders(config({ EMBEDDINGS_PROVIDER: '', LLM_PROVIDER: '  ' }));
    expect(providers.embeddings).toMatchObject({ id: HASHING_EMBEDDER_ID, dimensions: 1536 });
    expect(providers.dependencies.id).toBe('offline-heuristic-v1');
    expect(await providers.embeddings.embed(['deploy the API'])).toEqual([embedText('deploy the API')]);
    expect(await providers.dependencies.detect(TASKS, {})).toEqual(detectDependencies(TASKS));
  });

  it('builds the configured remote providers', () => {
    const openAi = createProviders(
      config({
        EMBEDDINGS_PROVIDER: 'OpenAI',
        LLM_PROVIDER: 'openai',
        OPENAI_API_KEY: 'sk-x',
        LLM_MODEL: 'gpt-4.1-mini',
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1/',
      }),
    );
    expect(openAi.embeddings).toMatchObject({ id: 'openai:text-embedding-3-small', dimensions: 1536 });
    expect(openAi.dependencies.id).toBe('llm:openai:gpt-4.1-mini');

    const large = createProviders(
      config({
        EMBEDDINGS_PROVIDER: 'openai',
        OPENAI_API_KEY: 'sk-x',
        EMBEDDINGS_MODEL: 'text-embedding-3-large',
        EMBEDDINGS_DIMENSIONS: '1536',
      }),
    );
    expect(large.embeddings).toMatchObject({ id: 'openai:text-embedding-3-large@1536', dimensions: 1536 });

    const workersAi = createProviders(
      config({ EMBEDDINGS_PROVIDER: 'workers-ai', LLM_PROVIDER: 'workers-ai', AI: ai, EMBEDDINGS_MODEL: '@cf/baai/bge-small-en-v1.5' }),
      ai,
    );
    expect(workersAi.embeddings).toMatchObject({ id: 'workers-ai:@cf/baai/bge-small-en-v1.5', dimensions: 384 });
    expect(workersAi.dependencies.id).toBe('llm:workers-ai:@cf/meta/llama-3.1-8b-instruct');

    const custom = config({
      EMBEDDINGS_PROVIDER: 'workers-ai',
      AI: ai,
      EMBEDDINGS_MODEL: '@cf/some/new-embedder',
      EMBEDDINGS_DIMENSIONS: 896,
    });
    expect(createProviders(custom, ai).embeddings.dimensions).toBe(896);
  });

  it('gives each embeddings provider its own default threshold, which EMBEDDINGS_THRESHOLD overrides', () => {
    const openAi = { EMBEDDINGS_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-x' };
    const threshold = (env: Record<string, unknown>) => createProviders(config(env), ai).embeddings.defaultThreshold;
    expect(threshold({})).toBe(HASHING_EMBEDDER_THRESHOLD);
    expect(threshold(openAi)).toBe(0.3);
    expect(threshold({ ...openAi, EMBEDDINGS_MODEL: 'text-embedding-ada-002' })).toBe(0.8);
    expect(threshold({ ...openAi, EMBEDDINGS_MODEL: 'nomic-embed-text', EMBEDDINGS_DIMENSIONS: '768' })).toBe(UNCALIBRATED_THRESHOLD);
    expect(threshold({ EMBEDDINGS_PROVIDER: 'workers-ai', AI: ai })).toBe(0.6);
    expect(threshold({ EMBEDDINGS_PROVIDER: 'workers-ai', AI: ai, EMBEDDINGS_MODEL: '@cf/baai/bge-m3' })).toBe(0.5);

    expect(threshold({ EMBEDDINGS_THRESHOLD: '0.25' })).toBe(0.25);
    expect(threshold({ ...openAi, EMBEDDINGS_THRESHOLD: '0.42' })).toBe(0.42);
    expect(threshold({ EMBEDDINGS_THRESHOLD: ' ' })).toBe(HASHING_EMBEDDER_THRESHOLD);
    // The override keeps the provider itself: its id and its vectors.
    const overridden = createProviders(config({ EMBEDDINGS_THRESHOLD: '0.25' })).embeddings;
    expect(overridden).toMatchObject({ id: HASHING_EMBEDDER_ID, dimensions: 1536 });
    for (const bad of ['high', '1.5', '-0.1'])
      expect(configError({ EMBEDDINGS_THRESHOLD: bad }).message).toMatch(/EMBEDDINGS_THRESHOLD must be a number from 0 to 1/);
  });

  it('names OPENAI_API_KEY when openai is chosen without it', () => {
    const error = configError({ EMBEDDINGS_PROVIDER: 'openai', LLM_PROVIDER: 'openai' });
    expect(error.message).toMatch(/EMBEDDINGS_PROVIDER and LLM_PROVIDER are 'openai' but OPENAI_API_KEY is not set/);
    expect(error.details?.fields).toEqual([expect.objectContaining({ field: 'OPENAI_API_KEY' })]);
  });

  it('rejects unknown providers, bad URLs and bad dimensions with the variable named', () => {
    expect(configError({ LLM_PROVIDER: 'anthropic' }).message).toMatch(
      /LLM_PROVIDER must be one of: offline, openai, workers-ai, but it is "anthropic"/,
    );
    expect(configError({ OPENAI_BASE_URL: 'ftp://example.com/v1' }).message).toMatch(/OPENAI_BASE_URL must be an http\(s\) URL/);
    expect(configError({ OPENAI_BASE_URL: 'not a url' }).message).toMatch(/OPENAI_BASE_URL/);
    expect(configError({ EMBEDDINGS_DIMENSIONS: 'many' }).message).toMatch(/EMBEDDINGS_DIMENSIONS must be a whole number from 1 to 1536/);
    expect(configError({ EMBEDDINGS_DIMENSIONS: '0' }).message).toMatch(/EMBEDDINGS_DIMENSIONS must be a whole number/);
    expect(configError({ EMBEDDINGS_DIMENSIONS: 3072 }).message).toMatch(/at most 1536: vectors are stored as vector\(1536\)/);
    const several = configError({ EMBEDDINGS_PROVIDER: 'cohere', LLM_PROVIDER: 'gemini' });
    expect(several.details?.fields?.map((f) => f.field)).toEqual(['EMBEDDINGS_PROVIDER', 'LLM_PROVIDER']);
  });

  it('requires dimensions that fit vector(1536) and match the model', () => {
    expect(configError({ EMBEDDINGS_PROVIDER: 'openai', OPENAI_API_KEY: 'k', EMBEDDINGS_MODEL: 'text-embedding-3-large' }).message).toMatch(
      /makes 3072-dimensional vectors.*set EMBEDDINGS_DIMENSIONS=1536/,
    );
    expect(configError({ EMBEDDINGS_PROVIDER: 'openai', OPENAI_API_KEY: 'k', EMBEDDINGS_MODEL: 'nomic-embed-text' }).message).toMatch(
      /'nomic-embed-text' has no known vector size; set EMBEDDINGS_DIMENSIONS/,
    );
    expect(configError({ EMBEDDINGS_PROVIDER: 'workers-ai', AI: ai, EMBEDDINGS_DIMENSIONS: '512' }).message).toMatch(
      /Workers AI cannot shorten vectors/,
    );
  });

  it('requires the AI binding for workers-ai', () => {
    const error = configError({ LLM_PROVIDER: 'workers-ai' });
    expect(error.message).toMatch(/LLM_PROVIDER is 'workers-ai' but the worker has no AI binding/);
    expect(error.details?.fields).toEqual([expect.objectContaining({ field: 'AI' })]);
  });

  it('never quotes the API key in a config error', () => {
    const error = configError({ EMBEDDINGS_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-secret-value-123', OPENAI_BASE_URL: 'nope' });
    expect(JSON.stringify(error)).not.toContain('sk-secret-value-123');
  });
});
