/**
 * What the table-tools-*.test.ts files share: valid inputs of log-mood and submit-health-form (each
 * at a timestamp no other test uses, fields overridden per case), the mood rows of a user as the
 * database holds them, and the field errors of an answer.
 */
import { eq } from 'drizzle-orm';
import { moodEntries } from '../../drizzle/schema.ts';
import type { FieldError } from '../../shared/core/contract.ts';
import { db, uniqueTimestamp } from './helpers.ts';

/** A valid log-mood input, with `overrides`. */
export const mood = (overrides: Record<string, unknown> = {}) => ({
  user_id: 'user_123',
  mood: 'happy',
  energy_level: 7,
  timestamp: uniqueTimestamp(),
  ...overrides,
});

/** A valid submit-health-form input, with `overrides`. */
export const healthForm = (overrides: Record<string, unknown> = {}) => ({
  patient_name: 'Ada Lovelace',
  age: 36,
  weight_kg: 61.5,
  smoker: false,
  blood_type: 'O+',
  recorded_at: uniqueTimestamp(),
  ...overrides,
});

/** The mood entries of `userId`, read straight from the database (each test logs for user ids of its own). */
export async function moodRowsFor(userId: string) {
  return db.select().from(moodEntries).where(eq(moodEntries.userId, userId));
}

/** The field errors of an answer (none for a success). */
export function fieldsOf(body: { success: boolean; error?: { details?: { fields?: FieldError[] } } }): FieldError[] {
  return body.error?.details?.fields ?? [];
}
