/**
 * Input pieces the study tools share, so that a plan, a status or a page size is asked for the
 * same way in every tool.
 */
import * as z from 'zod';
import { ITEM_STATUSES, PLAN_STATUSES } from '../../../drizzle/schema.ts';
import { date, INT4, text } from '../../../shared/core/fields.ts';

/** The id of a study record (numbered per project: plan 1, 2, 3 …). */
export function recordId() {
  return z.int().min(1).max(INT4.max);
}

/**
 * `plan_id`: a plan's id, or "latest" for the project's most recently created plan. What leaving it
 * out means is the tool's to say (in its description): every plan, or the newest.
 */
export const planIdField = z
  .union([z.int().min(1).max(INT4.max), z.literal('latest')], { error: "must be a plan id (a positive integer) or 'latest'" })
  .describe('Its id, or latest: the newest.');

/** `plan_title`: a plan's title; matched exactly, ignoring case (and surrounding whitespace). */
export const planTitleField = text({ max: 200, blank: false, trim: true });

/** A plan item's title (matched exactly, ignoring case and surrounding whitespace). */
export const itemTitleField = text({ max: 300, blank: false, trim: true });

export const planStatus = z.enum(PLAN_STATUSES);
export const itemStatus = z.enum(ITEM_STATUSES);

/** An ISO date, e.g. 2026-03-01. */
export const dueDateField = date();

export const notesField = text({ max: 2_000, trim: true });

/** A page size: `fallback` when absent, at most `max`. */
export function limitField(fallback: number, max: number) {
  return z.int().min(1).max(max).default(fallback);
}

/** A topic name, matched ignoring case. */
export const topicNameField = text({ max: 100, blank: false, trim: true }).describe('E.g. Spanish grammar.');

/**
 * A plan named by `plan_id`, `plan_title` or both (the field names every plan tool uses). Each
 * field given narrows the choice: `plan_title` to the plans of that title, `plan_id` to one of them
 * (an id, or "latest": the newest). No rule ties the two fields, so the input schema says it all.
 */
export interface PlanRef {
  plan_id?: number | 'latest' | undefined;
  plan_title?: string | undefined;
}

/** A record named by its id or by its title / name: one field, so no rule ties two fields together. */
export function idOrName(what: string, name: z.ZodType<string>, nameWord: string) {
  return z
    .union([z.int().min(1).max(INT4.max), name], { error: `must be the ${what} id (a positive integer) or its ${nameWord} (text)` })
    .describe(`Its id or ${nameWord}.`);
}
