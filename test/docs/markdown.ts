/**
 * Reading the project's Markdown the way the docs tests need it: which files are docs, their fenced
 * blocks (with the info string that says how a block is checked), their relative links, and the
 * anchors GitHub gives their headings.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout's root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The docs a reader follows: README.md, the root's other guides, and every page of docs/. */
export function docFiles(): string[] {
  const root = ['README.md', 'ARCHITECTURE.md', 'CONTRIBUTING.md', 'SECURITY.md', 'CHANGELOG.md'].filter((name) =>
    existsSync(join(ROOT, name)),
  );
  const pages = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return [...root, ...pages];
}

/** The pages whose shell and JSON examples the examples test runs: README.md and docs/*.md. */
export function exampleFiles(): string[] {
  return docFiles().filter((file) => file === 'README.md' || file.startsWith('docs/'));
}

/** A fenced code block. */
export interface Block {
  /** The file, relative to the root. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word: `sh`, `json`, `ts`, … (empty when none). */
  lang: string;
  /** The info string's other words, e.g. `no-run`. */
  flags: string[];
  /** The block's text, without the fences. */
  text: string;
  /** Whether only blank lines separate this block from the previous one (an answer follows its command). */
  followsBlock: boolean;
}

/** The fenced blocks of a Markdown text, in order. */
export function fencedBlocks(file: string, markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  let lastEnd = -2;
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const line = lines[j]!;
      if (line.trim().startsWith(fence!) && line.trim().replace(/[`~]/g, '') === '') break;
      body.push(line.startsWith(indent!) ? line.slice(indent!.length) : line);
    }
    const [lang = '', ...flags] = info!.trim().split(/\s+/).filter(Boolean);
    const between = lines.slice(lastEnd + 1, i);
    blocks.push({
      file,
      line: i + 1,
      lang,
      flags,
      text: body.join('\n'),
      followsBlock: lastEnd >= 0 && between.every((l) => l.trim() === ''),
    });
    lastEnd = j;
    i = j;
  }
  return blocks;
}

/** A relative link of a Markdown file: `[text](target)`, outside code. */
export interface Link {
  file: string;
  line: number;
  target: string;
}

/** The links of a Markdown text that point inside the checkout (not http(s), not mailto). */
export function relativeLinks(file: string, markdown: string): Link[] {
  const links: Link[] = [];
  withoutCode(markdown)
    .split('\n')
    .forEach((line, index) => {
      for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const target = match[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        links.push({ file, line: index + 1, target });
      }
    });
  return links;
}

/** The anchors GitHub gives a Markdown file's headings (`## Deploy to production` -> `deploy-to-production`). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCode(markdown).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = githubSlug(heading[1]!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const match of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1]!);
  return anchors;
}

/** GitHub's heading slug: lower case, markup and punctuation dropped, spaces to hyphens. */
export function githubSlug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** The text with fenced blocks, inline code and HTML comments blanked (line count kept), so that code is not read as links or headings. */
function withoutCode(markdown: string): string {
  const lines = markdown.replace(/<!--[\s\S]*?-->/g, (comment) => comment.replace(/[^\n]/g, '')).split('\n');
  let fence: string | undefined;
  return lines
    .map((line) => {
      const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence) {
        if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim().replace(/[`~]/g, '') === '') fence = undefined;
        return '';
      }
      if (marker) {
        fence = marker;
        return '';
      }
      return line.replace(/`[^`]*`/g, '``');
    })
    .join('\n');
}

/** The text of a file relative to the root. */
export function read(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8');
}
