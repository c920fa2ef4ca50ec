/**
 * Input pieces the study tools share, so that a plan, a status or a page size is asked for the
 * same way in every tool.
 */
import { z } from 'zod';
import { ITEM_STATUSES, PLAN_STATUSES } from '../../../drizzle/schema.ts';

/** Ids are Postgres `integer`s: anything larger is refused by the validator, never by the database. */
const MAX_ID = 2_147_483_647;

/** The id of a study record (numbered per project: plan 1, 2, 3 …). */
export function recordId(what: string) {
  return z.int().min(1).max(MAX_ID).describe(`The ${what} id (an integer, from an earlier answer).`);
}

/** `plan_id`: a plan's id, or "latest" for the project's most recently created plan. */
export const planIdField = z
  .union([z.int().min(1).max(MAX_ID), z.literal('latest')], { error: "must be a plan id (a positive integer) or 'latest'" })
  .describe('The plan id, or "latest" for the most recently created plan.');

/** `plan_title`: matched exactly, ignoring case. */
export const planTitleField = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .describe('The plan title, matched exactly but ignoring case. Use plan_id instead when several plans share a title.');

export const planStatus = z.enum(PLAN_STATUSES).describe(`Plan status: ${PLAN_STATUSES.join(', ')}.`);
export const itemStatus = z.enum(ITEM_STATUSES).describe(`Item status: ${ITEM_STATUSES.join(', ')}.`);

/** An ISO date, e.g. 2026-03-01. */
export const dueDateField = z.iso.date().describe('Due date, YYYY-MM-DD.');

export const notesField = z.string().trim().max(2_000).describe('Free-form notes, at most 2,000 characters.');

/** A page size: `fallback` when absent, at most `max`. */
export function limitField(what: string, fallback: number, max: number) {
  return z.int().min(1).max(max).default(fallback).describe(`Most ${what} per page, 1 to ${max} (default ${fallback}).`);
}

/** A topic name, matched ignoring case. */
export const topicNameField = z.string().trim().min(1).max(100).describe('The topic name, e.g. "Spanish grammar" (case-insensitive).');

/** A plan named by `plan_id` or `plan_title` (the field names every plan tool uses). */
export interface PlanRef {
  plan_id?: number | 'latest' | undefined;
  plan_title?: string | undefined;
}

/**
 * Refuses inputs that name one `what` twice over (`plan_id` and `plan_title`) or, when `required`,
 * not at all. For `.superRefine()` of a tool's input.
 */
export function exactlyOne<K extends string>(first: K, second: K, { what, required }: { what: string; required: boolean }) {
  return (value: Partial<Record<K, unknown>>, ctx: z.core.$RefinementCtx) => {
    const has = (key: K) => value[key] !== undefined;
    if (has(first) && has(second)) {
      ctx.addIssue({ code: 'custom', path: [second], input: value[second], message: `give either ${first} or ${second} to name the ${what}, not both` });
    } else if (required && !has(first) && !has(second)) {
      ctx.addIssue({ code: 'custom', path: [first], message: `name the ${what} with ${first} or ${second}; ask the user which ${what} they mean if you do not know` });
    }
  };
}
