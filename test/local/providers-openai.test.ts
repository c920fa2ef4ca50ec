/**
 * The OpenAI adapters (embeddings and dependency detection) against the local OpenAI stand-in:
 * batches in input order, shortened vectors zero-padded without changing cosine similarity, a
 * strict JSON schema of the given task ids, one repair of a malformed or invalid answer, and every
 * HTTP failure (429, an exhausted quota, 500, 400, 404, a wrong key, no server) classified for the
 * retry policy, never quoting the key.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAiStandIn, type OpenAiStandIn } from '../../local/openai-stand-in.ts';
import { statusOf } from '../../shared/core/contract.ts';
import type { DetectedRelationship } from '../../shared/core/providers.ts';
import { detectDependencies } from '../../shared/providers/dependency-heuristic.ts';
import { embedText } from '../../shared/providers/hashing-embedder.ts';
import { createOpenAiDependencyDetector, createOpenAiEmbeddings } from '../../shared/providers/openai.ts';
import { ProviderError, providerFailure } from '../../shared/providers/types.ts';
import { isTransient, withRetries } from '../../shared/runtime/retry.ts';
import { EXPECTED_EDGE, norm, providerError, TASKS, VALID_ANSWER } from './providers-fixture.ts';

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
const byEdge = (a: DetectedRelationship, b: DetectedRelationship) =>
  `${a.sourceTaskId}/${a.targetTaskId}/${a.type}`.localeCompare(`${b.sourceTaskId}/${b.targetTaskId}/${b.type}`);

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

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
