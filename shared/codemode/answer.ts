/**
 * What the gateway accepts from a sandbox. The sandbox runs code the gateway does not trust, so
 * nothing it sends is used before it is checked here: the size of a message before it is parsed,
 * its nesting on the text (one pass, no recursion on the gateway's stack), the type and size of
 * every field, the log lines and their characters counted here, and the result cut to the answer
 * budget by ./cut-json.ts, which parses no more than the budget. A message that breaks a rule ends
 * the execution as the sandbox's failure; it never reaches a tool or the answer unchecked.
 */
import * as z from 'zod';
import { DEFAULT_BODY_LIMIT_BYTES } from '../core/body.ts';
import { cutJson, nestsDeeperThan } from './cut-json.ts';
import { CODE_MODE_LIMITS } from './limits.ts';
import type { FromSandbox, SandboxAnswer } from './protocol.ts';

/**
 * Characters of one message from a sandbox at most: a call's input (1 MiB of JSON) written as a
 * JSON string inside the message (an escape takes up to 6 characters), and room for the rest.
 */
export const MAX_MESSAGE_CHARS = 6 * DEFAULT_BODY_LIMIT_BYTES + 64 * 1024;

/** Levels of nesting a message has at most (`end` → `answer` → `error` or `logs`). */
const MAX_MESSAGE_DEPTH = 3;

/** Characters of a tool name, a problem or an exception's name or message the gateway reads at most. */
const NAME_CHARS = 200;
const MESSAGE_CHARS = 2_000;

const count = z.int().min(0);
const answerSchema = z.strictObject({
  result: z.string().max(CODE_MODE_LIMITS.resultHandedBackChars).optional(),
  resultChars: count.optional(),
  error: z.strictObject({ name: z.string(), message: z.string() }).optional(),
  logs: z.array(z.string()),
  logsDropped: count,
  stopped: z.enum(['guard_ticks', 'wall_time_ms', 'blocking_ms']).nullable(),
});
const messageSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('running') }),
  z.strictObject({
    type: z.literal('call'),
    id: count,
    name: z.string(),
    input: z.string().max(DEFAULT_BODY_LIMIT_BYTES).nullable(),
    problem: z.string().optional(),
    inputChars: count.optional(),
  }),
  z.strictObject({ type: z.literal('end'), answer: answerSchema, callsRefused: count }),
  z.strictObject({ type: z.literal('failed'), failure: z.string() }),
]);

/** A message from the sandbox, checked; or what was wrong with it. */
export type ReadMessage = { ok: true; message: FromSandbox } | { ok: false; problem: string };

/** Reads one message from a sandbox, checking its size before parsing it and its shape after. */
export function readSandboxMessage(text: string): ReadMessage {
  if (text.length > MAX_MESSAGE_CHARS) return { ok: false, problem: `a message of ${text.length} characters, over ${MAX_MESSAGE_CHARS}` };
  if (nestsDeeperThan(text, MAX_MESSAGE_DEPTH)) return { ok: false, problem: `a message nested deeper than ${MAX_MESSAGE_DEPTH} levels` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'a message that is not JSON' };
  }
  const parsed = messageSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, problem: `a message whose ${issue.path.join('.') || 'shape'} is wrong (${issue.message})` };
  }
  const message = parsed.data;
  if (message.type === 'call') {
    message.name = message.name.slice(0, NAME_CHARS);
    if (message.problem !== undefined) message.problem = message.problem.slice(0, MESSAGE_CHARS);
  }
  if (message.type === 'failed') message.failure = message.failure.slice(0, MESSAGE_CHARS);
  return { ok: true, message };
}

/** The code's answer as the gateway uses it: its result cut to the budget, its logs bounded here. */
export interface CheckedAnswer {
  /** What the function returned, cut to the budget; absent when it threw. */
  result?: {
    value: unknown;
    /** Characters of its whole JSON, as the sandbox counted them (never fewer than it handed back). */
    chars: number;
    /** Something was cut: for size, or (`tooDeep`) for nesting. */
    cut: boolean;
    tooDeep: boolean;
  };
  error?: { name: string; message: string };
  logs: string[];
  logsDropped: number;
  stopped: SandboxAnswer['stopped'];
}

/** Checks a sandbox's answer against the bounds: the result parsed within the budget, the logs counted again. */
export function checkAnswer(answer: SandboxAnswer): { ok: true; answer: CheckedAnswer } | { ok: false; problem: string } {
  const { logs, dropped } = boundLogs(answer.logs, answer.logsDropped);
  const checked: CheckedAnswer = { logs, logsDropped: dropped, stopped: answer.stopped };
  if ((answer.result === undefined) === (answer.error === undefined))
    return { ok: false, problem: 'an answer with neither or both of a result and an error' };
  if (answer.error) {
    checked.error = { name: answer.error.name.slice(0, NAME_CHARS), message: answer.error.message.slice(0, MESSAGE_CHARS) };
    return { ok: true, answer: checked };
  }
  const text = answer.result!;
  const chars = Math.max(answer.resultChars ?? text.length, text.length);
  const cut = cutJson(text, {
    maxChars: CODE_MODE_LIMITS.resultChars,
    maxDepth: CODE_MODE_LIMITS.resultDepth,
    complete: chars === text.length,
  });
  if (!cut.ok) return { ok: false, problem: `a result that is not JSON (${cut.problem})` };
  checked.result = { value: JSON.parse(cut.json), chars, cut: cut.cut, tooDeep: cut.tooDeep };
  return { ok: true, answer: checked };
}

/** The first log lines within the bounds of lines and characters; the others are counted as dropped. */
function boundLogs(lines: readonly string[], claimedDropped: number): { logs: string[]; dropped: number } {
  const { logLines, logChars } = CODE_MODE_LIMITS;
  const logs: string[] = [];
  let chars = 0;
  let dropped = Math.min(claimedDropped, Number.MAX_SAFE_INTEGER - lines.length);
  for (let i = 0; i < lines.length; i++) {
    if (logs.length >= logLines || chars >= logChars) {
      dropped += lines.length - i;
      break;
    }
    const line = lines[i]!.slice(0, logChars - chars);
    chars += line.length;
    logs.push(line);
  }
  return { logs, dropped };
}
