/**
 * Finds the tasks (GitHub-style checkbox list items) in a markdown document.
 */
import { codePointLength } from '../../../shared/core/text.ts';

export interface ExtractedTask {
  /** The item's text after the checkbox, trimmed; inline markdown is kept as written. */
  text: string;
  /** 0-based order among the document's tasks. */
  position: number;
  /** 1-based line number of the item. */
  line: number;
  /**
   * Where the item's line starts in the document, in characters (code points: what Postgres'
   * char_length and substr count), 0-based.
   */
  offset: number;
  /** `[x]` or `[X]`. */
  checked: boolean;
  /** Text of the nearest heading above the item, if any. */
  section?: string;
}

/** A list marker (-, *, + or 1. / 1)), whitespace, a checkbox, then whitespace and the text or the end of the line. */
const TASK_ITEM = /^\s*(?:[-*+]|\d{1,9}[.)])[ \t]+\[([ xX])\](?:[ \t]+(.*))?$/;
const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT_UNDERLINE = /^ {0,3}(?:=+|-+)[ \t]*$/;
const FENCE_OPEN = /^\s*(`{3,}|~{3,})(.*)$/;
const LIST_ITEM = /^\s*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)/;

/**
 * Extracts the tasks of `markdown`, in document order.
 *
 * Rules:
 * - A task is a list item whose content starts with a checkbox: `- [ ] …`, `* [x] …`, `+ [X] …`,
 *   `1. [ ] …` or `1) [ ] …`, at any indentation (nested items count). `[x]` and `[X]` are checked.
 *   The checkbox must be followed by whitespace and text; items with nothing after the checkbox are
 *   skipped, as is anything else in brackets (`- [-] …`, `- [] …`).
 * - Only the item's first line is its text, trimmed; inline markdown (`**bold**`, links, code) is kept.
 * - Fenced code blocks (``` or ~~~, three or more, closed by the same character at least as many
 *   times, or running to the end of the document when unclosed) are ignored entirely.
 * - `section` is the nearest heading above the item, ATX (`## Title`, closing #s dropped) or setext
 *   (a text line underlined with === or ---); headings inside fences do not count.
 * - Lines end at \n, \r\n or \r; `line` is 1-based. Blockquotes, HTML comments and indented code
 *   blocks are not special (a checkbox item indented four spaces is still a task).
 */
export function extractTasks(markdown: string): ExtractedTask[] {
  const lines = markdown.split(/\r\n|\n|\r/);
  const breaks = Array.from(markdown.matchAll(/\r\n|\n|\r/g), (match) => match[0].length);
  const tasks: ExtractedTask[] = [];
  let fence: { char: string; length: number } | undefined;
  let section: string | undefined;
  let lineStart = 0;
  lines.forEach((line, index) => {
    const offset = lineStart;
    lineStart += codePointLength(line) + (breaks[index] ?? 0);
    if (fence) {
      if (closesFence(line, fence)) fence = undefined;
      return;
    }
    fence = openFence(line);
    if (fence) return;
    const heading = headingText(line, lines[index - 1]);
    if (heading !== undefined) {
      section = heading;
      return;
    }
    const task = TASK_ITEM.exec(line);
    const text = task?.[2]?.trim();
    if (!task || !text) return;
    const extracted: ExtractedTask = { text, position: tasks.length, line: index + 1, offset, checked: task[1] !== ' ' };
    if (section !== undefined) extracted.section = section;
    tasks.push(extracted);
  });
  return tasks;
}

function openFence(line: string): { char: string; length: number } | undefined {
  const match = FENCE_OPEN.exec(line);
  if (!match) return undefined;
  const marker = match[1]!;
  // A backtick fence's info string may not contain backticks (CommonMark), else it is inline code.
  if (marker[0] === '`' && match[2]!.includes('`')) return undefined;
  return { char: marker[0]!, length: marker.length };
}

function closesFence(line: string, fence: { char: string; length: number }): boolean {
  const trimmed = line.trim();
  return trimmed.length >= fence.length && [...trimmed].every((c) => c === fence.char);
}

/** The heading `line` starts (ATX) or ends (a setext underline below a text line), or undefined. */
function headingText(line: string, previous: string | undefined): string | undefined {
  const atx = ATX_HEADING.exec(line);
  if (atx) return (atx[2] ?? '').trim();
  if (previous !== undefined && SETEXT_UNDERLINE.test(line) && isParagraphLine(previous)) return previous.trim();
  return undefined;
}

/** A plain text line that a setext underline can turn into a heading. */
function isParagraphLine(line: string): boolean {
  return (
    line.trim() !== '' &&
    !LIST_ITEM.test(line) &&
    !ATX_HEADING.test(line) &&
    !FENCE_OPEN.test(line) &&
    !SETEXT_UNDERLINE.test(line) &&
    !/^ {4}/.test(line)
  );
}
