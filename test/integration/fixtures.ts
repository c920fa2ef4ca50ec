/**
 * The records the tools' examples name (EXAMPLE_IDS), so that the contract suite runs every example
 * as it is and sees it succeed (local/example-records.ts, written once for the tests and the benches).
 */
import { resetExampleRecords as resetFor } from '../../local/example-records.ts';
import { db } from './helpers.ts';

/** Gives the example records to `projectId`, fresh (delete and replace consume them). */
export function resetExampleRecords(projectId: string): Promise<void> {
  return resetFor(db, projectId);
}
