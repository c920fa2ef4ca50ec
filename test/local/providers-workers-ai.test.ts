/**
 * The Workers AI adapters (embeddings and dependency detection) against a fake AI binding: 768-d
 * vectors normalised and zero-padded, vectors of the wrong size refused, JSON mode with one repair,
 * binding errors classified by their internal code, and time-outs and aborts.
 */
import { describe, expect, it } from 'vitest';
import { embedText } from '../../shared/providers/hashing-embedder.ts';
import { createWorkersAiDependencyDetector, createWorkersAiEmbeddings, type AiBinding } from '../../shared/providers/workers-ai.ts';
import { EXPECTED_EDGE, norm, providerError, TASKS, VALID_ANSWER } from './providers-fixture.ts';

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
