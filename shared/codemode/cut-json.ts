/**
 * Cutting the JSON of an execution's result to the answer budget, in one pass over its text and
 * without recursion: the gateway never walks a value the sandbox built on its own stack, and never
 * parses more than the budget. The text may be only the start of a longer JSON (the sandbox hands
 * back the start of a large result with its full length); what is kept is always valid JSON.
 *
 * Values are kept in order while they fit. Where the budget runs out, a string is cut with a marker
 * at its end, an array gets a marker element, an object a marker key, and every open container is
 * closed. A container nested deeper than `maxDepth` is replaced by a marker string.
 */

/** Marks where a value was cut; the answer's message names it. */
export const CUT_MARKER = '--- TRUNCATED ---';

/** Replaces a container nested deeper than the bound. */
export const TOO_DEEP_MARKER = '--- TRUNCATED: nested too deep ---';

/** Options of {@link cutJson}. */
export interface CutOptions {
  /** Characters of JSON kept at most, markers and closing brackets included (give or take a few). */
  maxChars: number;
  /** Levels of nesting kept; a deeper container becomes {@link TOO_DEEP_MARKER}. */
  maxDepth: number;
  /** False when `text` is only the start of a longer JSON: its end is a cut, not an error. */
  complete: boolean;
}

/** The JSON kept, and whether anything was cut (for size, or for depth). */
export type CutJson = { ok: true; json: string; cut: boolean; tooDeep: boolean } | { ok: false; problem: string };

type State = 'value' | 'firstKey' | 'key' | 'colon' | 'next' | 'done';

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const NUMBER_CHARS = /[-+\d.eE]*/y;
const LITERALS = ['true', 'false', 'null'] as const;
const SPACE = /[ \t\n\r]*/y;
/** A string cut shorter than this is not worth keeping: the marker stands alone. */
const MIN_STRING_KEPT = 40;

/**
 * `text` cut to `maxChars` characters of valid JSON, containers deeper than `maxDepth` replaced;
 * `ok: false` when it is not JSON (or, `complete` being false, not the start of JSON).
 *
 * Long on purpose: one loop over the text with a branch per state of the JSON grammar, all sharing
 * the position, the output and the open containers; pulled apart, each branch would take and hand
 * back all of them.
 *
 * @example
 * cutJson('[1,2,3,4,5,6]', { maxChars: 26, maxDepth: 64, complete: true })
 * // { ok: true, json: '[1,2,"--- TRUNCATED ---"]', cut: true, tooDeep: false }
 */
export function cutJson(text: string, { maxChars, maxDepth, complete }: CutOptions): CutJson {
  const stack: ('array' | 'object')[] = [];
  let state: State = 'value';
  let out = '';
  let tooDeep = false;
  let i = 0;
  /** Room left for a token, keeping what closing every container and one marker take. */
  const room = () => maxChars - out.length - stack.length - CUT_MARKER.length - 8;

  for (;;) {
    SPACE.lastIndex = i;
    SPACE.test(text);
    i = SPACE.lastIndex;
    if (i >= text.length) break;
    const c = text[i]!;
    if (state === 'done') return { ok: false, problem: `text after the end of the JSON value, at character ${i}` };

    if (state === 'next') {
      if (c === ',') {
        out += ',';
        i++;
        state = stack[stack.length - 1] === 'array' ? 'value' : 'key';
      } else if ((c === ']' && stack[stack.length - 1] === 'array') || (c === '}' && stack[stack.length - 1] === 'object')) {
        out += c;
        i++;
        stack.pop();
        state = afterValue(stack);
      } else return unexpected(c, i);
      continue;
    }
    if (state === 'colon') {
      if (c !== ':') return unexpected(c, i);
      out += ':';
      i++;
      state = 'value';
      continue;
    }
    if (state === 'firstKey' && c === '}') {
      out += '}';
      i++;
      stack.pop();
      state = afterValue(stack);
      continue;
    }
    if (state === 'firstKey' || state === 'key') {
      if (c !== '"') return unexpected(c, i);
      const end = stringEnd(text, i);
      if (end === undefined) {
        if (complete) return { ok: false, problem: 'a string that is never closed' };
        break;
      }
      const key = text.slice(i, end);
      if (key.length > room()) break;
      out += key;
      i = end;
      state = 'colon';
      continue;
    }

    // state === 'value'
    if (c === '{' || c === '[') {
      if (stack.length >= maxDepth) {
        const end = containerEnd(text, i);
        if (end === undefined && complete) return { ok: false, problem: 'a container that is never closed' };
        if (TOO_DEEP_MARKER.length + 2 > room()) break;
        out += JSON.stringify(TOO_DEEP_MARKER);
        tooDeep = true;
        if (end === undefined) return finish(out, stack, 'cut-value', tooDeep);
        i = end;
        state = afterValue(stack);
        continue;
      }
      if (room() < 2) break;
      out += c;
      i++;
      stack.push(c === '{' ? 'object' : 'array');
      state = c === '{' ? 'firstKey' : 'value';
      if (c === '[') {
        SPACE.lastIndex = i;
        SPACE.test(text);
        if (text[SPACE.lastIndex] === ']') {
          out += ']';
          i = SPACE.lastIndex + 1;
          stack.pop();
          state = afterValue(stack);
        }
      }
      continue;
    }
    const token = valueToken(text, i);
    if (token === undefined) return unexpected(c, i);
    // A token that reaches the end of a partial text may itself be partial (a number's first digits).
    const partial = token.end >= text.length && (!complete || (c === '"' && !token.closed));
    if (partial && complete) return { ok: false, problem: 'a string that is never closed' };
    if (partial || token.text.length > room()) {
      out += c === '"' ? cutString(token.text, room()) : JSON.stringify(CUT_MARKER);
      return finish(out, stack, 'cut-value', tooDeep);
    }
    out += token.text;
    i = token.end;
    state = afterValue(stack);
  }

  if (state === 'done') {
    if (complete) return finish(out, stack, 'whole', tooDeep);
    return finish(out, stack, 'cut-after', tooDeep);
  }
  if (complete && i >= text.length) return { ok: false, problem: 'the JSON ends before its last value is complete' };
  return finish(
    out,
    stack,
    state === 'next' ? 'cut-after' : state === 'colon' ? 'cut-colon' : state === 'value' ? 'cut-value-missing' : 'cut-key',
    tooDeep,
  );
}

/** The state after a value: the end, or what follows it in its container. */
function afterValue(stack: readonly unknown[]): State {
  return stack.length === 0 ? 'done' : 'next';
}

/** Closes what is open after a cut (marking it) and checks the whole is JSON. */
function finish(
  out: string,
  stack: ('array' | 'object')[],
  at: 'whole' | 'cut-value' | 'cut-value-missing' | 'cut-after' | 'cut-key' | 'cut-colon',
  tooDeep: boolean,
): CutJson {
  const marker = JSON.stringify(CUT_MARKER);
  const top = stack[stack.length - 1];
  if (at === 'cut-value-missing') out += marker;
  else if (at === 'cut-colon') out += `:${marker}`;
  else if (at === 'cut-key') out += `${marker}:null`;
  else if (at === 'cut-after' && top) out += top === 'array' ? `,${marker}` : `,${marker}:null`;
  for (let level = stack.length - 1; level >= 0; level--) out += stack[level] === 'array' ? ']' : '}';
  try {
    JSON.parse(out);
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  return { ok: true, json: out, cut: at !== 'whole' || tooDeep, tooDeep };
}

/** A string or literal or number token at `i`, or undefined when none starts there. */
function valueToken(text: string, i: number): { text: string; end: number; closed?: boolean } | undefined {
  const c = text[i];
  if (c === '"') {
    const end = stringEnd(text, i);
    return { text: text.slice(i, end ?? text.length), end: end ?? text.length, closed: end !== undefined };
  }
  for (const literal of LITERALS) if (text.startsWith(literal, i)) return { text: literal, end: i + literal.length };
  if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
    // The whole run of number characters: at the end of a partial text it may be a number's start only.
    NUMBER_CHARS.lastIndex = i;
    const run = NUMBER_CHARS.exec(text)![0];
    if (i + run.length >= text.length) return { text: run, end: text.length };
    NUMBER.lastIndex = i;
    const match = NUMBER.exec(text);
    if (match && match[0].length === run.length) return { text: match[0], end: i + match[0].length };
    return undefined;
  }
  // The start of a literal cut by the end of a partial text.
  if (LITERALS.some((literal) => literal.startsWith(text.slice(i)))) return { text: text.slice(i), end: text.length };
  return undefined;
}

/** The index just past the string that starts at `i` (its closing quote), or undefined when the text ends first. */
function stringEnd(text: string, i: number): number | undefined {
  let quote = text.indexOf('"', i + 1);
  while (quote !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 92) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    quote = text.indexOf('"', quote + 1);
  }
  return undefined;
}

/** The index just past the container that starts at `i`, or undefined when the text ends first. */
function containerEnd(text: string, i: number): number | undefined {
  let depth = 0;
  for (let at = i; at < text.length; at++) {
    const c = text.charCodeAt(at);
    if (c === 34) {
      const end = stringEnd(text, at);
      if (end === undefined) return undefined;
      at = end - 1;
    } else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      depth--;
      if (depth === 0) return at + 1;
    }
  }
  return undefined;
}

/** A string token (possibly unterminated) cut to fit `room` characters, ending with the marker; the marker alone when little fits. */
function cutString(token: string, room: number): string {
  const marker = JSON.stringify(CUT_MARKER);
  if (room < MIN_STRING_KEPT) return marker;
  let decoded: string;
  try {
    decoded = JSON.parse(
      token.endsWith('"') && token.length > 1 ? token : `${token.replace(/\\+$/, (s) => (s.length % 2 ? s.slice(1) : s))}"`,
    );
  } catch {
    return marker;
  }
  let keep = room - CUT_MARKER.length - 4;
  for (;;) {
    const encoded = JSON.stringify(`${decoded.slice(0, keep)} ${CUT_MARKER}`);
    if (encoded.length <= room || keep <= 0) return keep <= 0 ? marker : encoded;
    keep = Math.floor((keep * room) / encoded.length) - 1;
  }
}

function unexpected(c: string, i: number): CutJson {
  return { ok: false, problem: `unexpected ${JSON.stringify(c)} at character ${i}` };
}

/** Whether JSON `text` nests containers deeper than `maxDepth` levels: one pass, strings skipped, no recursion. */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  for (let at = 0; at < text.length; at++) {
    const c = text.charCodeAt(at);
    if (c === 34) {
      const end = stringEnd(text, at);
      if (end === undefined) return false;
      at = end - 1;
    } else if (c === 123 || c === 91) {
      if (++depth > maxDepth) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}
