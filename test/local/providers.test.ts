import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { detectDependencies } from '../../shared/providers/dependency-heuristic.ts';
import { startOpenAiStandIn, type OpenAiStandIn } from '../../local/openai-stand-in.ts';
import { statusOf } from '../../shared/core/contract.ts';
import { embedText, HASHING_EMBEDDER_ID, HASHING_EMBEDDER_THRESHOLD } from '../../shared/providers/hashing-embedder.ts';
import { createProviders, readProviderConfig, type ProviderConfig } from '../../shared/providers/index.ts';
import type { LlmAnswer } from '../../shared/providers/llm-detection.ts';
import { createOpenAiDependencyDetector, createOpenAiEmbeddings } from '../../shared/providers/openai.ts';
import { ProviderError, providerFailure, UNCALIBRATED_THRESHOLD } from '../../shared/providers/types.ts';
import type { DependencyTask, DetectedRelationship } from '../../shared/core/providers.ts';
import { createWorkersAiDependencyDetector, createWorkersAiEmbeddings, type AiBinding } from '../../shared/providers/workers-ai.ts';
import { isTransient, withRetries } from '../../shared/runtime/retry.ts';

const TASKS: DependencyTask[] = [
  { id: 'task-migrate', text: 'Run the database migration', documentId: 'doc-launch', documentTitle: 'Launch plan', position: 0 },
  {
    id: 'task-deploy',
    text: 'Deploy the API after the database migration',
    documentId: 'doc-launch',
    documentTitle: 'Launch plan',
    position: 1,
  },
  {
    id: 'task-announce',
    text: 'Announce the launch once the API is deployed',
    documentId: 'doc-launch',
    documentTitle: 'Launch plan',
    position: 2,
  },
];

/** A valid answer in the aliases the adapters show the model (T1.. in input order). */
const VALID_ANSWER: LlmAnswer = {
  relationships: [{ source: 'T1', target: 'T2', type: 'prerequisite', confidence: 0.9, rationale: 'The deploy waits for the migration.' }],
};
const EXPECTED_EDGE: DetectedRelationship = {
  sourceTaskId: 'task-migrate',
  targetTaskId: 'task-deploy',
  type: 'prerequisite',
  confidence: 0.9,
  rationale: 'The deploy waits for the migration.',
};

const norm = (v: Float32Array) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
const byEdge = (a: DetectedRelationship, b: DetectedRelationship) =>
  `${a.sourceTaskId}/${a.targetTaskId}/${a.type}`.localeCompare(`${b.sourceTaskId}/${b.targetTaskId}/${b.type}`);

/** Awaits a rejection and returns it as a ProviderError (fails the test otherwise). */
async function providerError(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe('OpenAI adapters against the local stand-in', () => {
  let standIn: OpenAiStandIn;
  const connection = () => ({ baseUrl: standIn.url, apiKey: standIn.apiKey });
  const chatRequests = () => standIn.requests.filter((r) => r.path === '/v1/chat/completions');

  beforeAll(async () => {
    standIn = await startOpenAiStandIn();
  });
  afterAll(async () => {
    await standIn?.close();
  });
  beforeEach(() => {
    standIn.requests.length = 0;
  });

  it('embeds in batches, in input order, one normalised 1536-d vector per text', async () => {
    const texts = ['deploy the API', 'run the migration', 'announce the launch', 'hire two engineers', 'write the docs'];
    const provider = createOpenAiEmbeddings({ ...connection(), maxBatchSize: 2 });
    expect(provider).toMatchObject({ id: 'openai:text-embedding-3-small', dimensions: 1536 });

    const vectors = await provider.embed(texts);
    expect(standIn.requests.map((r) => (r.body as { input: string[] }).input.length)).toEqual([2, 2, 1]);
    expect(standIn.requests[0]).toMatchObject({ path: '/v1/embeddings', authorization: `Bearer ${standIn.apiKey}` });
    expect(standIn.requests[0]!.body).not.toHaveProperty('dimensions');
    expect(vectors).toHaveLength(5);
    for (const [i, vector] of vectors.entries()) {
      expect(vector).toHaveLength(1536);
      expect(norm(vector)).toBeCloseTo(1, 5);
      expect(vector).toEqual(embedText(texts[i]!));
    }
    expect(await provider.embed([])).toEqual([]);
  });

  it('asks for shortened vectors and zero-pads them to 1536 without changing cosine similarity', async () => {
    const provider = createOpenAiEmbeddings({ ...connection(), dimensions: 512 });
    expect(provider).toMatchObject({ id: 'openai:text-embedding-3-small@512', dimensions: 512 });

    const [a, b] = await provider.embed(['deploy the API after the migration', 'deploy the API']);
    expect(standIn.requests[0]!.body).toMatchObject({ dimensions: 512 });
    expect(a).toHaveLength(1536);
    expect(a!.subarray(512).every((x) => x === 0)).toBe(true);
    expect(norm(a!)).toBeCloseTo(1, 5);
    const [nativeA, nativeB] = [embedText('deploy the API after the migration', 512), embedText('deploy the API', 512)];
    expect(dot(a!, b!)).toBeCloseTo(dot(nativeA, nativeB) / (norm(nativeA) * norm(nativeB)), 5);
  });

  it('detects dependencies through chat completions with a strict JSON schema of the given task ids', async () => {
    const detector = createOpenAiDependencyDetector({ ...connection(), model: 'gpt-4o-mini' });
    expect(detector.id).toBe('llm:openai:gpt-4o-mini');

    const found = await detector.detect(TASKS, { documentContext: new Map([['doc-launch', '# Launch plan\nShip it.']]) });
    expect(found.length).toBeGreaterThan(0);
    expect(found.toSorted(byEdge)).toEqual(detectDependencies(TASKS).toSorted(byEdge));

    const [request] = chatRequests();
    const body = request!.body as {
      response_format: { type: string; json_schema: { name: string; strict: boolean; schema: Record<string, any> } };
      messages: { role: string; content: string }[];
    };
    expect(body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'task_dependencies', strict: true } });
    const schema = body.response_format.json_schema.schema;
    expect(schema).not.toHaveProperty('$schema');
    expect(schema).toMatchObject({ type: 'object', additionalProperties: false, required: ['relationships'] });
    const item = schema.properties.relationships.items;
    expect(item).toMatchObject({ additionalProperties: false, required: ['source', 'target', 'type', 'confidence', 'rationale'] });
    expect(item.properties.source.enum).toEqual(['T1', 'T2', 'T3']);
    expect(item.properties.confidence).toMatchObject({ minimum: 0, maximum: 1 });
    expect(JSON.parse(body.messages[1]!.content)).toMatchObject({
      documents: [{ id: 'D1', title: 'Launch plan', excerpt: '# Launch plan\nShip it.' }],
      tasks: [{ id: 'T1', document: 'D1', position: 0, text: 'Run the database migration' }, {}, {}],
    });
  });

  it('needs no model call for fewer than two tasks', async () => {
    expect(await createOpenAiDependencyDetector(connection()).detect(TASKS.slice(0, 1), {})).toEqual([]);
    expect(standIn.requests).toHaveLength(0);
  });

  it('refuses more tasks than one call may compare, before calling the model', async () => {
    const many = Array.from({ length: 4 }, (_, i) => ({ ...TASKS[0]!, id: `t${i}`, position: i }));
    const error = await providerError(createOpenAiDependencyDetector({ ...connection(), maxTasks: 3 }).detect(many, {}));
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/at most 3 tasks in one call, but received 4/);
    expect(standIn.requests).toHaveLength(0);
  });

  it('repairs malformed output once: the problems go back to the model, the second answer is used', async () => {
    standIn.answerNextChatWith('{"relationships": [ oops');
    standIn.answerNextChatWith(JSON.stringify(VALID_ANSWER));
    const found = await createOpenAiDependencyDetector(connection()).detect(TASKS, {});
    expect(found).toEqual([EXPECTED_EDGE]);

    const [, repair] = chatRequests();
    const messages = (repair!.body as { messages: { role: string; content: string }[] }).messages;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(messages[2]!.content).toBe('{"relationships": [ oops');
    expect(messages[3]!.content).toMatch(/not valid JSON/);
  });

  it('repairs schema violations: unknown ids, self-edges and confidence out of range are named to the model', async () => {
    const bad = {
      relationships: [
        { source: 'T9', target: 'T2', type: 'prerequisite', confidence: 0.5, rationale: 'x' },
        { source: 'T2', target: 'T2', type: 'related', confidence: 0.5, rationale: 'x' },
        { source: 'T1', target: 'T3', type: 'prerequisite', confidence: 1.5, rationale: 'x' },
      ],
    };
    standIn.answerNextChatWith(JSON.stringify(bad));
    standIn.answerNextChatWith(JSON.stringify(VALID_ANSWER));
    expect(await createOpenAiDependencyDetector(connection()).detect(TASKS, {})).toEqual([EXPECTED_EDGE]);

    const feedback = (chatRequests()[1]!.body as { messages: { content: string }[] }).messages[3]!.content;
    expect(feedback).toContain('relationships[0].source');
    expect(feedback).toContain('source and target must be different tasks');
    expect(feedback).toContain('relationships[2].confidence');
  });

  it('fails for good, not retryable, when the repaired answer is malformed too', async () => {
    standIn.answerNextChatWith('not json');
    standIn.answerNextChatWith('{"relationships": "none"}');
    const error = await providerError(createOpenAiDependencyDetector(connection()).detect(TASKS, {}));
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/invalid dependency JSON twice/);
    expect(chatRequests()).toHaveLength(2);
  });

  it('deduplicates repeated edges, keeping the most confident', async () => {
    const edge = VALID_ANSWER.relationships[0]!;
    standIn.answerNextChatWith(JSON.stringify({ relationships: [{ ...edge, confidence: 0.4 }, edge, { ...edge, confidence: 0.7 }] }));
    expect(await createOpenAiDependencyDetector(connection()).detect(TASKS, {})).toEqual([EXPECTED_EDGE]);
  });

  it('turns HTTP 429 into a retryable error carrying retry-after, which the pipeline retries', async () => {
    standIn.failNext(1, {
      status: 429,
      headers: { 'retry-after': '2' },
      body: { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } },
    });
    const error = await providerError(createOpenAiEmbeddings(connection()).embed(['a']));
    expect(error).toMatchObject({ retryable: true, status: 429, retryAfterMs: 2000, provider: 'openai:text-embedding-3-small' });
    expect(error.message).toMatch(/rate limiting.*wait 2 s.*Rate limit reached/);

    const failure = providerFailure(error);
    expect(failure.error).toMatchObject({
      code: 'UPSTREAM_ERROR',
      retryable: true,
      details: { provider: 'openai:text-embedding-3-small', status: 429, retry_after_ms: 2000 },
    });
    expect(statusOf(failure)).toBe(502);
    expect(isTransient(failure)).toBe(true);
  });

  it('does not retry an exhausted quota (a 429 that waiting does not cure)', async () => {
    standIn.failNext(1, {
      status: 429,
      body: { error: { message: 'You exceeded your current quota.', type: 'insufficient_quota', code: 'insufficient_quota' } },
    });
    const error = await providerError(createOpenAiEmbeddings(connection()).embed(['a']));
    expect(error).toMatchObject({ retryable: false, status: 429 });
    expect(error.message).toMatch(/no quota left/);
  });

  it('turns HTTP 500 into a retryable error; the retry policy then succeeds', async () => {
    standIn.failNext(2, { status: 500 });
    const provider = createOpenAiEmbeddings(connection());
    const { outcome, attempts } = await withRetries(
      async () => {
        try {
          return { ok: true as const, data: await provider.embed(['a']), message: 'embedded' };
        } catch (error) {
          if (error instanceof ProviderError) return providerFailure(error);
          throw error;
        }
      },
      { delayMs: 0 },
    );
    expect(outcome.ok).toBe(true);
    expect(attempts).toBe(3);
  });

  it('turns HTTP 400 into a non-retryable error quoting the provider', async () => {
    standIn.failNext(1, {
      status: 400,
      body: { error: { message: 'This model does not support specifying dimensions.', type: 'invalid_request_error', code: null } },
    });
    const error = await providerError(createOpenAiEmbeddings(connection()).embed(['a']));
    expect(error).toMatchObject({ retryable: false, status: 400 });
    expect(error.message).toContain('does not support specifying dimensions');
  });

  it('turns HTTP 404 into a message naming the model variable and OPENAI_BASE_URL', async () => {
    const error = await providerError(createOpenAiEmbeddings({ ...connection(), baseUrl: standIn.url.replace(/\/v1$/, '') }).embed(['a']));
    expect(error).toMatchObject({ retryable: false, status: 404 });
    expect(error.message).toMatch(/EMBEDDINGS_MODEL and OPENAI_BASE_URL/);
  });

  it('turns a wrong key into a non-retryable 401 naming OPENAI_API_KEY, never quoting the key', async () => {
    const wrongKey = 'sk-wrong-key-that-must-never-leak-42';
    const embedError = await providerError(createOpenAiEmbeddings({ baseUrl: standIn.url, apiKey: wrongKey }).embed(['a']));
    expect(embedError).toMatchObject({ retryable: false, status: 401 });
    expect(embedError.message).toMatch(/embeddings provider rejected the API key.*set OPENAI_API_KEY/);

    const chatError = await providerError(createOpenAiDependencyDetector({ baseUrl: standIn.url, apiKey: wrongKey }).detect(TASKS, {}));
    expect(chatError).toMatchObject({ retryable: false, status: 401 });
    expect(chatError.message).toMatch(/OPENAI_API_KEY/);

    for (const error of [embedError, chatError]) {
      expect(error.message).not.toContain(wrongKey);
      expect(JSON.stringify(providerFailure(error).error)).not.toContain(wrongKey);
    }
  });

  it('redacts the key from any upstream message it quotes', async () => {
    standIn.failNext(1, {
      status: 400,
      body: { error: { message: `Key ${standIn.apiKey} cannot use this model`, type: 'invalid_request_error', code: null } },
    });
    const error = await providerError(createOpenAiEmbeddings(connection()).embed(['a']));
    expect(error.message).not.toContain(standIn.apiKey);
    expect(error.message).toContain('[redacted]');
  });

  it('turns a network error (nothing listening) into a retryable error', async () => {
    const port = await closedPort();
    const error = await providerError(createOpenAiEmbeddings({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'k' }).embed(['a']));
    expect(error.retryable).toBe(true);
    expect(error.status).toBeUndefined();
    expect(error.message).toMatch(/Could not reach the embeddings provider.*ECONNREFUSED/);
  });
});

/** A fake `AI` binding: records every call and answers with `answer`. */
function fakeAi(answer: (model: string, inputs: any) => unknown) {
  const calls: { model: string; inputs: any }[] = [];
  const ai: AiBinding = {
    async run(model, inputs) {
      calls.push({ model, inputs });
      return answer(model, inputs);
    },
  };
  return { ai, calls };
}

describe('Workers AI adapters against a fake AI binding', () => {
  it('embeds 768-d vectors in batches, normalised and zero-padded to 1536', async () => {
    const { ai, calls } = fakeAi((_, { text }: { text: string[] }) => ({
      shape: [text.length, 768],
      // Not normalised on purpose: the adapter normalises.
      data: text.map((t) => Array.from(embedText(t, 768), (x) => x * 3)),
    }));
    const provider = createWorkersAiEmbeddings({ ai, maxBatchSize: 2 });
    expect(provider).toMatchObject({ id: 'workers-ai:@cf/baai/bge-base-en-v1.5', dimensions: 768 });

    const vectors = await provider.embed(['one task', 'another task', 'a third']);
    expect(calls.map((c) => [c.model, c.inputs.text.length])).toEqual([
      ['@cf/baai/bge-base-en-v1.5', 2],
      ['@cf/baai/bge-base-en-v1.5', 1],
    ]);
    for (const vector of vectors) {
      expect(vector).toHaveLength(1536);
      expect(norm(vector)).toBeCloseTo(1, 5);
      expect(vector.subarray(768).every((x) => x === 0)).toBe(true);
    }
    expect(Array.from(vectors[0]!.subarray(0, 768))).toEqual(Array.from(embedText('one task', 768)));
  });

  it('refuses vectors of the wrong size, not retryable', async () => {
    const { ai } = fakeAi(() => ({ data: [[1, 2, 3]] }));
    const error = await providerError(createWorkersAiEmbeddings({ ai }).embed(['x']));
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/3-dimensional vectors, but 768 were expected/);
  });

  it('detects dependencies in JSON mode and repairs an invalid answer once', async () => {
    // Workers AI returns the parsed object in JSON mode; this one has a self-edge.
    const invalid = { relationships: [{ source: 'T2', target: 'T2', type: 'blocks', confidence: 0.5, rationale: 'x' }] };
    const { ai, calls } = fakeAi(() => (calls.length === 1 ? { response: invalid } : { response: JSON.stringify(VALID_ANSWER) }));
    const detector = createWorkersAiDependencyDetector({ ai });
    expect(detector.id).toBe('llm:workers-ai:@cf/meta/llama-3.1-8b-instruct');

    expect(await detector.detect(TASKS, {})).toEqual([EXPECTED_EDGE]);
    expect(calls).toHaveLength(2);
    expect(calls[0]!.inputs).toMatchObject({
      max_tokens: 2048,
      temperature: 0,
      response_format: { type: 'json_schema', json_schema: { type: 'object' } },
    });
    expect(calls[0]!.inputs.response_format.json_schema.properties.relationships.items.properties.target.enum).toEqual(['T1', 'T2', 'T3']);
    const repair = calls[1]!.inputs.messages as { role: string; content: string }[];
    expect(repair.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(JSON.parse(repair[2]!.content)).toEqual(invalid);
    expect(repair[3]!.content).toContain('source and target must be different tasks');
  });

  it('fails for good when the model answers badly twice', async () => {
    const { ai, calls } = fakeAi(() => ({ response: { relationships: [{ source: 'T1' }] } }));
    const error = await providerError(createWorkersAiDependencyDetector({ ai }).detect(TASKS, {}));
    expect(error.retryable).toBe(false);
    expect(calls).toHaveLength(2);
  });

  it('classifies binding errors by their internal code', async () => {
    const failing = (message: string) => createWorkersAiEmbeddings({ ai: { run: () => Promise.reject(new Error(message)) } }).embed(['x']);

    expect(await providerError(failing('AiError: 3040: Capacity temporarily exceeded, please try again.'))).toMatchObject({
      retryable: true,
      status: 429,
    });
    expect(await providerError(failing('Network connection lost.'))).toMatchObject({ retryable: true });
    const quota = await providerError(failing('3036: You have used up your daily free allocation of 10,000 neurons.'));
    expect(quota).toMatchObject({ retryable: false, status: 429 });
    expect(quota.message).toMatch(/daily free allocation/);
    const missing = await providerError(failing('InferenceUpstreamError: 5007: No such model @cf/nope or task'));
    expect(missing).toMatchObject({ retryable: false, status: 400 });
    expect(missing.message).toMatch(/set EMBEDDINGS_MODEL/);
    expect(await providerError(failing('5006: Invalid input'))).toMatchObject({ retryable: false });
  });

  it('times out a call that never answers (retryable), and stops at once when the caller aborts (not retryable)', async () => {
    const hanging: AiBinding = { run: () => new Promise(() => {}) };
    const timedOut = await providerError(createWorkersAiEmbeddings({ ai: hanging, timeoutMs: 50 }).embed(['x']));
    expect(timedOut.retryable).toBe(true);
    expect(timedOut.message).toMatch(/did not answer within 0.05 s/);

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const cancelled = await providerError(createWorkersAiDependencyDetector({ ai: hanging }).detect(TASKS, { signal: controller.signal }));
    expect(cancelled.retryable).toBe(false);
    expect(cancelled.message).toMatch(/cancelled/);
  });
});

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

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
