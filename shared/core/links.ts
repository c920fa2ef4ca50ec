/**
 * Links: every answer that references a document, a task or another record carries
 * `links` of `{ label, url }`, so an agent (or the person reading along) can open what it names.
 * Tools get a {@link Links} maker in their context; the pipeline builds it from the deployment's
 * configuration (shared/runtime/link-templates.ts). Tools never build URLs themselves.
 */
import type { Link } from './contract.ts';

/** Makes the links of the records a tool references. */
export interface Links {
  /** A document: `GET /documents/:id` of this API, or the deployment's DOCUMENT_URL_TEMPLATE. */
  document(id: string, title?: string): Link;
  /** A task: `GET /tasks/:id` of this API, or the deployment's TASK_URL_TEMPLATE. */
  task(id: string, text?: string): Link;
  /**
   * A row a table tool wrote, when the deployment configured a URL template for `table`
   * (TABLE_URL_TEMPLATES); otherwise undefined: no link rather than a URL that leads nowhere.
   */
  row(table: string, id: string, label: string): Link | undefined;
  /**
   * A study planner record, when the deployment configured a URL template for its kind
   * (RECORD_URL_TEMPLATES); otherwise undefined, as for rows.
   */
  record(kind: RecordKind, id: string | number, text?: string): Link | undefined;
}

/** The kinds of study planner records a deployment may link to, with the label each link starts with. */
export const RECORD_KINDS = {
  plan: 'Plan',
  plan_item: 'Plan item',
  topic: 'Topic',
  flashcard: 'Flashcard',
  quiz_attempt: 'Quiz attempt',
  message: 'Message',
} as const;

/** A key of {@link RECORD_KINDS}. */
export type RecordKind = keyof typeof RECORD_KINDS;

/** An answer carries at most this many links: the records it names first, in order. */
export const MAX_LINKS = 10;

/** Characters of a record's text kept in a link's label. */
const LABEL_TEXT_CHARS = 80;

/**
 * The links of an answer: without repeats (by URL), and at most {@link MAX_LINKS}. Undefined entries
 * (a row without a configured template) are skipped.
 */
export function linkList(links: Iterable<Link | undefined>): Link[] {
  const byUrl = new Map<string, Link>();
  for (const link of links) {
    if (!link || byUrl.has(link.url)) continue;
    byUrl.set(link.url, link);
    if (byUrl.size === MAX_LINKS) break;
  }
  return [...byUrl.values()];
}

/** A link label: `kind` and the record's text, cut to a readable length, or its id when it has no text. */
export function linkLabel(kind: string, id: string, text?: string): string {
  if (text === undefined || text.trim() === '') return `${kind} ${id}`;
  const flat = text.replace(/\s+/g, ' ').trim();
  return `${kind}: ${flat.length > LABEL_TEXT_CHARS ? `${flat.slice(0, LABEL_TEXT_CHARS - 1)}…` : flat}`;
}
