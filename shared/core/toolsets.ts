/**
 * Toolsets: the tools grouped by the folder they live in (functions/<toolset>/). A client asks
 * for a subset by toolset (`POST /mcp/study,documents`, `GET /tools?toolset=study`), and an API key
 * may be limited to some toolsets: tools outside them are neither listed to it nor run for it.
 * This is the whole vocabulary, for every surface and for whatever grants access (API keys today).
 */
import { fail, type Failure } from './contract.ts';

/** Every toolset, in catalog order. */
export const TOOLSETS = ['documents', 'task-analysis', 'table-tools', 'study'] as const;

/** One toolset's name. */
export type Toolset = (typeof TOOLSETS)[number];

/** What a toolset is for, in a few words (the catalog and the errors that list toolsets). */
export const TOOLSET_PURPOSES: Readonly<Record<Toolset, string>> = {
  documents: 'add, replace and delete markdown documents whose checkbox items become tasks',
  'task-analysis': 'search, cluster and link the tasks of the documents',
  'table-tools': 'record structured entries (mood, health form, check-in)',
  study: 'study plans, quizzes, flashcards and conversation memory',
};

/** Is `name` a toolset (exactly, as in {@link TOOLSETS})? */
export function isToolset(name: string): name is Toolset {
  return (TOOLSETS as readonly string[]).includes(name);
}

/** Options of {@link parseToolsets}. */
export interface ParseToolsetsOptions {
  /** What the list was sent as, named in the error (e.g. "Query parameter 'toolset'"). Default "The toolset list". */
  source?: string;
  /** The error code of an unknown name. Default VALIDATION_ERROR; NOT_FOUND for a path. */
  code?: 'VALIDATION_ERROR' | 'NOT_FOUND';
  /** What to do instead, after the list of toolsets. */
  hint?: string;
}

/**
 * Reads a comma-separated list of toolsets (`"study,documents"`): case and surrounding spaces do
 * not matter, and `_` reads as `-` (`task_analysis`). Answers the toolsets in {@link TOOLSETS}
 * order without repeats, or a failure naming each unknown name and listing the toolsets.
 *
 * @example
 * parseToolsets('study, Documents') // { ok: true, toolsets: ['documents', 'study'] }
 * parseToolsets('studies')          // a VALIDATION_ERROR: "There is no toolset 'studies'. Toolsets: ..."
 */
export function parseToolsets(
  list: string,
  { source = 'The toolset list', code = 'VALIDATION_ERROR', hint }: ParseToolsetsOptions = {},
): { ok: true; toolsets: Toolset[] } | Failure {
  const names = list
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !isToolset(normalize(name)));
  if (names.length === 0 || unknown.length > 0) {
    const what =
      names.length === 0
        ? `${source} names no toolset`
        : `${source} names ${unknown.length === 1 ? 'a toolset that does not exist' : 'toolsets that do not exist'}: ${unknown.map((name) => `'${name.slice(0, 40)}'`).join(', ')}`;
    return fail(code, `${what}. Toolsets: ${describeToolsets()}.`, {
      hint: hint ?? 'Name one or more toolsets, comma-separated, e.g. study,documents.',
      details: { toolsets: [...TOOLSETS], ...(unknown.length ? { unknown_toolsets: unknown.map((name) => name.slice(0, 40)) } : {}) },
    });
  }
  const wanted = new Set(names.map(normalize));
  return { ok: true, toolsets: TOOLSETS.filter((toolset) => wanted.has(toolset)) };
}

/** "documents (what it is for), task-analysis (...), ...", for messages that list the toolsets. */
export function describeToolsets(): string {
  return TOOLSETS.map((toolset) => `${toolset} (${TOOLSET_PURPOSES[toolset]})`).join(', ');
}

function normalize(name: string): string {
  return name.toLowerCase().replaceAll('_', '-');
}
