/**
 * The reference tables of the docs that name things the code defines, read against the code:
 * every error code with its HTTP status (docs/contract.md), every tool of every toolset
 * (docs/tools.md, against the files of functions/<toolset>/), and every variable and binding a
 * worker reads (docs/operate.md, against the env interfaces of shared/). Fast: no stack.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, test } from 'vitest';
import { ERROR_STATUS } from '../../shared/core/contract.ts';
import { read, ROOT } from './markdown.ts';

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

test('docs/tools.md lists every tool of every toolset, and no other', () => {
  const documented = Object.fromEntries(
    tableRows(read('docs/tools.md'), 'toolset').map(([toolset, tools]) => [
      toolset!.replace(/`/g, ''),
      tools!
        .split(':')[0]!
        .split(',')
        .map((id) => id.trim())
        .sort(),
    ]),
  );
  const functions = join(ROOT, 'functions');
  const actual = Object.fromEntries(
    readdirSync(functions, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => [
        entry.name,
        readdirSync(join(functions, entry.name))
          .filter((file) => file.endsWith('.ts'))
          .map((file) => file.slice(0, -3))
          .sort(),
      ]),
  );
  expect(documented).toEqual(actual);
});

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
