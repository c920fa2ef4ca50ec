/**
 * Dependency detection with an LLM, shared by the OpenAI and Workers AI adapters: the prompt, the
 * JSON Schema the answer must follow, validation of the answer, and one repair round.
 *
 * Tasks are shown to the model as short aliases (T1, T2, ...) rather than their UUIDs: models copy
 * short ids reliably, and the schema can list every valid id as an enum.
 */
import * as z from 'zod';
import { ProviderError } from './types.ts';
import type { DependencyTask, DetectedRelationship, DetectOptions } from '../core/providers.ts';

/** A chat message in the OpenAI shape, which Workers AI accepts as well. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** The JSON Schema the answer must follow, with the name OpenAI's `json_schema` format asks for. */
export interface AnswerFormat {
  name: string;
  schema: Record<string, unknown>;
}

/**
 * One model call: send `messages`, constrain the answer to `format`, return the model's answer as
 * it came (a JSON string, or an already parsed object as Workers AI returns in JSON mode).
 */
export type CompleteChat = (messages: ChatMessage[], format: AnswerFormat, signal?: AbortSignal) => Promise<unknown>;

/** What the model is shown (the user message is this object as JSON). */
export interface PromptPayload {
  documents: { id: string; title: string; excerpt?: string }[];
  tasks: { id: string; document: string; position: number; text: string }[];
}

/** What the model must answer. */
export interface LlmAnswer {
  relationships: { source: string; target: string; type: DetectedRelationship['type']; confidence: number; rationale: string }[];
}

export interface LlmDetectionLimits {
  /** Most tasks compared in one model call; more are refused with a non-retryable error. */
  maxTasks?: number;
  /** Task texts are cut to this many characters in the prompt. */
  maxTaskChars?: number;
  /** Each document's markdown is cut to this many characters of context. */
  maxContextChars?: number;
}

/** Default of `maxTasks`: 200 aliases in each of two enums stays within OpenAI's 1000 enum values per schema. */
export const DEFAULT_MAX_TASKS = 200;
/** Default of `maxTaskChars`. */
export const DEFAULT_MAX_TASK_CHARS = 1_000;
/** Default of `maxContextChars`. */
export const DEFAULT_MAX_CONTEXT_CHARS = 2_000;

/** Validation problems quoted back to the model in the repair round are cut to this length. */
const MAX_PROBLEM_CHARS = 4_000;
/** ...and to this length in the error message when the repair fails too. */
const MAX_REPORTED_PROBLEM_CHARS = 400;
const MAX_RATIONALE_CHARS = 500;

const ANSWER_NAME = 'task_dependencies';
const RELATIONSHIP_TYPE = z.enum(['prerequisite', 'blocks', 'related']);

const SYSTEM_PROMPT = `You find dependencies between tasks taken from project documents.
Every relationship is read "source -> target" and has one type:
- prerequisite: the source task must be finished before the target task can start.
- blocks: the source task currently stands in the way of the target task (an impediment, not a planned order).
- related: both tasks concern the same thing, with no order between them.
Rules:
- Use the task ids exactly as given (T1, T2, ...). Never relate a task to itself.
- Report only relationships the texts give evidence for; an empty list is a good answer when there are none.
- confidence is a number from 0 to 1: how sure you are.
- rationale is one short sentence naming the evidence.
The user message is a JSON object with the documents and their tasks. Answer with one JSON object that matches the schema: {"relationships": [...]}.`;

/**
 * Detects dependencies between `tasks` with one model call, plus exactly one repair call when the
 * answer is not valid JSON or breaks the schema (unknown ids, self-edges, confidence outside 0..1):
 * the problems are sent back to the model, and a second bad answer is a non-retryable
 * {@link ProviderError}. Fewer than two tasks need no call.
 */
export async function detectWithLlm(
  tasks: DependencyTask[],
  { documentContext, signal }: DetectOptions,
  provider: string,
  complete: CompleteChat,
  {
    maxTasks = DEFAULT_MAX_TASKS,
    maxTaskChars = DEFAULT_MAX_TASK_CHARS,
    maxContextChars = DEFAULT_MAX_CONTEXT_CHARS,
  }: LlmDetectionLimits = {},
): Promise<DetectedRelationship[]> {
  if (tasks.length < 2) return [];
  if (tasks.length > maxTasks) {
    throw new ProviderError(
      `${provider} compares at most ${maxTasks} tasks in one call, but received ${tasks.length}; analyse fewer documents at once.`,
      { provider, retryable: false },
    );
  }
  const aliases = tasks.map((_, i) => `T${i + 1}`);
  const schema = answerSchema(aliases);
  const format: AnswerFormat = { name: ANSWER_NAME, schema: toAnswerJsonSchema(schema) };
  const messages: ChatMessage[] = [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: JSON.stringify(promptPayload(tasks, aliases, documentContext, maxTaskChars, maxContextChars)) },
  ];

  const first = await complete(messages, format, signal);
  let checked = checkAnswer(first, schema);
  if (!checked.ok) {
    messages.push(
      { role: 'assistant', content: typeof first === 'string' ? first : JSON.stringify(first) },
      {
        role: 'user',
        content: `Your answer does not match the required JSON schema:\n${cut(checked.problems, MAX_PROBLEM_CHARS)}\nAnswer again with only the corrected JSON object.`,
      },
    );
    checked = checkAnswer(await complete(messages, format, signal), schema);
    if (!checked.ok) {
      throw new ProviderError(
        `${provider} answered with invalid dependency JSON twice (${cut(checked.problems, MAX_REPORTED_PROBLEM_CHARS)}); try again, or choose another LLM_MODEL, or set LLM_PROVIDER=offline.`,
        { provider, retryable: false },
      );
    }
  }
  return toRelationships(checked.answer, tasks, aliases);
}

/**
 * The answer's schema, with the valid task aliases as an enum. Built per call because the enum
 * depends on the tasks: a few milliseconds, against a model call of seconds.
 */
function answerSchema(aliases: string[]) {
  const taskRef = z.enum(aliases as [string, ...string[]]);
  return z.strictObject({
    relationships: z.array(
      z
        .strictObject({
          source: taskRef,
          target: taskRef,
          type: RELATIONSHIP_TYPE,
          confidence: z.number().min(0).max(1),
          rationale: z.string(),
        })
        .refine((r) => r.source !== r.target, { message: 'source and target must be different tasks', path: ['target'] }),
    ),
  });
}

/** The JSON Schema sent to the model: strict-mode compatible (every field required, no extra keys, no `$schema`). */
function toAnswerJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...jsonSchema } = z.toJSONSchema(schema, { io: 'input' });
  return jsonSchema;
}

function promptPayload(
  tasks: DependencyTask[],
  aliases: string[],
  documentContext: Map<string, string> | undefined,
  maxTaskChars: number,
  maxContextChars: number,
): PromptPayload {
  const documentAliases = new Map<string, string>();
  const documents: PromptPayload['documents'] = [];
  for (const task of tasks) {
    if (documentAliases.has(task.documentId)) continue;
    const id = `D${documentAliases.size + 1}`;
    documentAliases.set(task.documentId, id);
    const context = documentContext?.get(task.documentId);
    documents.push(context ? { id, title: task.documentTitle, excerpt: cut(context, maxContextChars) } : { id, title: task.documentTitle });
  }
  return {
    documents,
    tasks: tasks.map((task, i) => ({
      id: aliases[i]!,
      document: documentAliases.get(task.documentId)!,
      position: task.position,
      text: cut(task.text, maxTaskChars),
    })),
  };
}

type Checked = { ok: true; answer: LlmAnswer } | { ok: false; problems: string };

function checkAnswer(raw: unknown, schema: z.ZodType<LlmAnswer>): Checked {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (error) {
      return { ok: false, problems: `The answer is not valid JSON (${(error as Error).message}).` };
    }
  }
  const result = schema.safeParse(value);
  return result.success ? { ok: true, answer: result.data } : { ok: false, problems: z.prettifyError(result.error) };
}

/** Maps aliases back to task ids; a repeated edge keeps its most confident instance. */
function toRelationships(answer: LlmAnswer, tasks: DependencyTask[], aliases: string[]): DetectedRelationship[] {
  const idOf = new Map(aliases.map((alias, i) => [alias, tasks[i]!.id]));
  const edges = new Map<string, DetectedRelationship>();
  for (const r of answer.relationships) {
    const edge: DetectedRelationship = {
      sourceTaskId: idOf.get(r.source)!,
      targetTaskId: idOf.get(r.target)!,
      type: r.type,
      confidence: r.confidence,
      rationale: cut(r.rationale.trim(), MAX_RATIONALE_CHARS),
    };
    const key = `${edge.sourceTaskId}\u0000${edge.targetTaskId}\u0000${edge.type}`;
    const seen = edges.get(key);
    if (!seen || seen.confidence < edge.confidence) edges.set(key, edge);
  }
  return [...edges.values()];
}

function cut(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars)}…` : text;
}
