/**
 * The reference tables of the docs that name things the code defines, read against the code:
 * every error code with its HTTP status (docs/contract.md), and every tool of every toolset
 * (docs/tools.md, against the files of functions/<toolset>/). Fast: no stack.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
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
    rows.push(line.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim()));
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
      tools!.split(':')[0]!.split(',').map((id) => id.trim()).sort(),
    ]),
  );
  const functions = join(ROOT, 'functions');
  const actual = Object.fromEntries(
    readdirSync(functions, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => [entry.name, readdirSync(join(functions, entry.name)).filter((file) => file.endsWith('.ts')).map((file) => file.slice(0, -3)).sort()]),
  );
  expect(documented).toEqual(actual);
});
