/**
 * The reference tables of the docs that name things the code defines, read against the code:
 * every error code with its HTTP status (docs/contract.md), one row for every tool of the registry
 * in its toolset's section (docs/tools.md), and every variable and binding a worker reads
 * (docs/operate.md, against the env interfaces of shared/). Fast: no stack.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, test } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { ERROR_STATUS } from '../../shared/core/contract.ts';
import { TOOLSETS } from '../../shared/core/toolsets.ts';
import { githubSlug, read, ROOT } from './markdown.ts';

/** The rows of the Markdown table whose header row starts with `firstHeader`, as cells. */
function tableRows(markdown: string, firstHeader: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`| ${firstHeader} |`));
  expect(start, `no table headed "${firstHeader}"`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

test('docs/contract.md lists every error code with the status it is answered with', () => {
  const documented = new Map<string, string>();
  for (const [codes, status] of tableRows(read('docs/contract.md'), 'code')) {
    for (const code of codes!.split('/').map((c) => c.trim())) documented.set(code, status!);
  }
  expect([...documented.keys()].sort()).toEqual(Object.keys(ERROR_STATUS).sort());
  for (const [code, status] of Object.entries(ERROR_STATUS)) expect(documented.get(code), code).toContain(String(status));
});

/** The H2 sections of a Markdown text, by their heading's anchor. */
function sections(markdown: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of markdown.split(/^(?=## )/m).slice(1)) found.set(githubSlug(part.slice(3, part.indexOf('\n')).trim()), part);
  return found;
}

test('docs/tools.md has one row for every tool of the registry, in the section of its toolset', () => {
  const page = read('docs/tools.md');
  const bySection = sections(page);
  const rows = [...bySection.values()].flatMap((section) =>
    [...section.matchAll(/^\| `([a-z0-9-]+)` \|/gm)].filter((row) => tableHeaderAbove(section, row.index) === 'tool').map((row) => row[1]!),
  );
  const registered = tools.map((tool) => tool.id);
  expect(
    rows.filter((id, index) => rows.indexOf(id) !== index),
    'tools with more than one row',
  ).toEqual([]);
  expect(
    rows.filter((id) => !registered.includes(id)),
    'rows naming no tool of functions/registry.ts',
  ).toEqual([]);
  const toolsetSection = new Map(
    tableRows(page, 'toolset').map(([toolset, , section]) => [toolset!.replace(/`/g, ''), /\]\(#([^)]+)\)/.exec(section!)?.[1]]),
  );
  expect([...toolsetSection.keys()].sort()).toEqual([...TOOLSETS].sort());
  for (const tool of tools) {
    const anchor = toolsetSection.get(tool.toolset)!;
    const section = bySection.get(anchor) ?? '';
    expect(
      section.includes(`| \`${tool.id}\` |`),
      `docs/tools.md: add a row "| \`${tool.id}\` | what it does |" to a "| tool | what |" table of the section #${anchor}`,
    ).toBe(true);
  }
});

/** The first cell of the header row of the Markdown table that holds the line at `index` of `text`. */
function tableHeaderAbove(text: string, index: number): string | undefined {
  const lines = text.slice(0, index).split('\n').slice(0, -1);
  let header: string | undefined;
  for (let i = lines.length - 1; i >= 0 && lines[i]!.startsWith('|'); i--) header = lines[i];
  return header ? /^\|\s*([^|]*?)\s*\|/.exec(header)?.[1] : undefined;
}

test('docs/operate.md configures every variable and binding a worker reads', () => {
  // Independent of the code's own lists: every upper-case property a worker's env interfaces declare.
  const declared = new Set<string>();
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts'))
        for (const match of read(relative(ROOT, path)).matchAll(/^\s+(?:readonly )?([A-Z][A-Z0-9_]{2,})\??:/gm)) declared.add(match[1]!);
    }
  };
  walk(join(ROOT, 'shared'));
  const variables = [...declared].filter((name) => !(name in ERROR_STATUS)).sort();
  expect(variables).toContain('DATABASE_URL');
  const table = tableRows(read('docs/operate.md'), 'name')
    .map(([names]) => names!)
    .join(' ');
  expect(variables.filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
});

test("docs/add-a-tool.md's example tool is test/support/example-tool.ts, which test/integration/grow.test.ts adds and runs", () => {
  const page = read('docs/add-a-tool.md');
  const shown = /^ {3}```ts\n([\s\S]*?)^ {3}```$/m.exec(page)?.[1];
  expect(shown, 'docs/add-a-tool.md: the first step shows the example tool in a ```ts block').toBeDefined();
  const unindented = shown!.replace(/^ {3}/gm, '');
  expect(unindented, 'docs/add-a-tool.md shows test/support/example-tool.ts as it is: copy the file into the page').toBe(
    read('test/support/example-tool.ts'),
  );
});
