/**
 * What the providers-*.test.ts files share: three tasks of one document, a valid answer of a
 * dependency model in the aliases the adapters show it and the edge it stands for, a vector's norm,
 * and a reader of an adapter's rejection.
 */
import { expect } from 'vitest';
import type { LlmAnswer } from '../../shared/providers/llm-detection.ts';
import { ProviderError } from '../../shared/providers/types.ts';
import type { DependencyTask, DetectedRelationship } from '../../shared/core/providers.ts';

/** Three tasks of one document, the second after the first, the third after the second. */
export const TASKS: DependencyTask[] = [
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
export const VALID_ANSWER: LlmAnswer = {
  relationships: [{ source: 'T1', target: 'T2', type: 'prerequisite', confidence: 0.9, rationale: 'The deploy waits for the migration.' }],
};

/** The edge {@link VALID_ANSWER} stands for, in task ids. */
export const EXPECTED_EDGE: DetectedRelationship = {
  sourceTaskId: 'task-migrate',
  targetTaskId: 'task-deploy',
  type: 'prerequisite',
  confidence: 0.9,
  rationale: 'The deploy waits for the migration.',
};

/** The Euclidean norm of a vector. */
export const norm = (v: Float32Array) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));

/** Awaits a rejection and returns it as a ProviderError (fails the test otherwise). */
export async function providerError(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}
