/**
 * The dashboard's DOM helpers: elements by id, new elements and SVG shapes whose values are set as
 * text and attributes only (never as markup), and the formats numbers and times are shown in.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';

/** The page's element with this id (the shell in ../page.ts has them all). */
export function byId<T extends Element = HTMLElement>(id: string): T {
  const found: Element | null = document.getElementById(id);
  if (!found) throw new Error(`The dashboard page has no element #${id}.`);
  return found as T;
}

/** A new element with `text` as its text and `attributes` set. */
export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text?: string | number | null,
  attributes: Record<string, string> = {},
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

/** A new SVG element with `attributes` set, and `text` as its text. */
export function shape(tag: string, attributes: Record<string, string | number> = {}, text?: string): SVGElement {
  const node = document.createElementNS(SVG_NS, tag) as SVGElement;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** An SVG element with a `<title>`: what a pointer hovering it (or assistive technology) reads. */
export function titled(node: SVGElement, title: string): SVGElement {
  node.append(shape('title', {}, title));
  return node;
}

/** Milliseconds as shown: one decimal, or a dash when there is no value. */
export const ms = (value: number | null | undefined): string => (value === null || value === undefined ? '—' : value.toFixed(1));

/** A ratio from 0 to 1 as a percentage. */
export const percent = (value: number | null | undefined): string =>
  value === null || value === undefined ? '—' : `${(value * 100).toFixed(1)} %`;

/** A count with thousands separators. */
export const count = (value: number): string => value.toLocaleString('en-US');

/** An instant in the reader's own time zone. */
export const when = (iso: string): string => new Date(iso).toLocaleString();

/** A value as indented JSON, or a dash for nothing. */
export const json = (value: unknown): string => (value === null || value === undefined ? '—' : JSON.stringify(value, null, 2));

/** A description list's terms and values, in order. */
export function facts(list: HTMLElement, entries: readonly (readonly [string, string | number])[]): void {
  list.replaceChildren(...entries.flatMap(([term, value]) => [element('dt', term), element('dd', value)]));
}

/**
 * Shows one element per item as the children of `parent`, in order, reusing the elements drawn
 * before (`drawn`, by key): those already in place stay (and keep focus), new ones are inserted,
 * the rest removed and forgotten.
 */
export function reconcile<T>(
  parent: Element,
  items: readonly T[],
  keyOf: (item: T) => string,
  draw: (item: T) => Element,
  drawn: Map<string, Element>,
): void {
  const keys = new Set(items.map(keyOf));
  for (const key of drawn.keys()) if (!keys.has(key)) drawn.delete(key);
  items.forEach((item, i) => {
    const key = keyOf(item);
    let node = drawn.get(key);
    if (!node) drawn.set(key, (node = draw(item)));
    if (parent.children[i] !== node) parent.insertBefore(node, parent.children[i] ?? null);
  });
  while (parent.children.length > items.length) parent.lastElementChild!.remove();
}
