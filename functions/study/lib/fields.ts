/**
 * Input pieces the study tools share, so that a plan, a status or a page size is asked for the
 * same way in every tool.
 */
import * as z from 'zod';
import { ITEM_STATUSES, PLAN_STATUSES } from '../../../drizzle/schema.ts';
import { date, INT4, text } from '../../../shared/core/fields.ts';
import type { FieldProblem } from '../../../shared/core/issues.ts';

/** The id of a study record (numbered per project: plan 1, 2, 3 …). */
export function recordId(what: string) {
  return z.int().min(1).max(INT4.max).describe(`The ${what} id, from an earlier answer.`);
}

/** `plan_id`: a plan's id, or "latest" for the project's most recently created plan. */
export const planIdField = z
  .union([z.int().min(1).max(INT4.max), z.literal('latest')], { error: "must be a plan id (a positive integer) or 'latest'" })
  .describe('The plan id, or "latest" for the newest plan.');

/** `plan_title`: matched exactly, ignoring case (and surrounding whitespace). */
export const planTitleField = text({ max: 200, blank: false, trim: true }).describe('The plan title, ignoring case.');

/** A plan item's title (matched exactly, ignoring case and surrounding whitespace). */
export const itemTitleField = text({ max: 300, blank: false, trim: true });

export const planStatus = z.enum(PLAN_STATUSES);
export const itemStatus = z.enum(ITEM_STATUSES);

/** An ISO date, e.g. 2026-03-01. */
export const dueDateField = date().describe('Due date, YYYY-MM-DD.');

export const notesField = text({ max: 2_000, trim: true }).describe('Free-form notes.');

/** A page size: `fallback` when absent, at most `max`. */
export function limitField(what: string, fallback: number, max: number) {
  return z.int().min(1).max(max).default(fallback).describe(`Most ${what} per page.`);
}

/** A topic name, matched ignoring case. */
export const topicNameField = text({ max: 100, blank: false, trim: true }).describe('The topic name, e.g. "Spanish grammar" (case-insensitive).');

/** A plan named by `plan_id` or `plan_title` (the field names every plan tool uses). */
export interface PlanRef {
  plan_id?: number | 'latest' | undefined;
  plan_title?: string | undefined;
}

/**
 * `input` refusing inputs that name one `what` twice over (`plan_id` and `plan_title`) or, when
 * `required`, not at all. The rule is enforced here and said in both fields' descriptions; it is
 * not in the JSON Schema, whose root model APIs want free of `oneOf`/`not`.
 */
export function exactlyOne<S extends z.ZodObject>(input: S, first: string, second: string, { what, required }: { what: string; required: boolean }): S {
  const said = (field: string, other: string) => {
    const schema = input.shape[field] as z.ZodType;
    const rule = required ? `Or ${other}; not both.` : `Not with ${other}.`;
    // An optional field's description may be its inner schema's.
    const description = schema.description ?? (schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType).description : undefined);
    return schema.describe([description, rule].filter(Boolean).join(' '));
  };
  const described = input.safeExtend({ [first]: said(first, second), [second]: said(second, first) });
  return described.superRefine((value: Record<string, unknown>, ctx) => {
    const has = (key: string) => value[key] !== undefined;
    if (has(first) && has(second)) {
      ctx.addIssue({ code: 'custom', path: [second], input: value[second], message: `give either ${first} or ${second} to name the ${what}, not both` });
    } else if (required && !has(first) && !has(second)) {
      const problem: FieldProblem = {
        code: 'required',
        expected: `given, or ${second} instead, to name the ${what}`,
        received: `neither ${first} nor ${second}: ask the user which ${what} they mean if you do not know`,
      };
      ctx.addIssue({ code: 'custom', path: [first], message: `must be ${problem.expected}`, params: problem });
    }
  }) as unknown as S;
}
