/**
 * Every relative link of the docs resolves: the file or folder exists in the checkout, and a
 * `#anchor` names a heading of the page it points to (as GitHub makes anchors); and every file of
 * the checkout the docs name in code exists. Fast: no stack.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, test } from 'vitest';
import { docFiles, githubSlug, headingAnchors, read, relativeLinks, ROOT } from './markdown.ts';

describe.each(docFiles())('%s', (file) => {
  const links = relativeLinks(file, read(file));
  test.skipIf(links.length === 0)('every relative link resolves', () => {
    const broken: string[] = [];
    for (const { line, target } of links) {
      const [path = '', anchor] = target.split('#');
      const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
      if (resolved.startsWith('..') || !existsSync(join(ROOT, resolved))) {
        broken.push(`${file}:${line}: ${target}: no file ${resolved}`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith('.md') && !statSync(join(ROOT, resolved)).isDirectory()) {
        if (!headingAnchors(read(resolved)).has(anchor)) broken.push(`${file}:${line}: ${target}: ${resolved} has no heading #${anchor}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe.each(docFiles())('%s', (file) => {
  test('every file of the checkout it names in code exists', () => {
    // Paths written in inline code (`shared/core/contract.ts`), which refactors move; placeholders (`<tool-id>.ts`) are not paths.
    const named = [
      ...read(file).matchAll(/`((?:shared|functions|local|test|bench|examples|drizzle|docs)\/[\w./-]+\.(?:ts|md|wat|wasm|sql|json))`/g),
    ].map((match) => match[1]!);
    expect(named.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });
});

test('anchors are made as GitHub makes them', () => {
  expect(githubSlug('Deploy to production, step by step')).toBe('deploy-to-production-step-by-step');
  expect(githubSlug('Idempotency-Key: repeating a write call safely')).toBe('idempotency-key-repeating-a-write-call-safely');
  expect(githubSlug('MCP clients (Claude Desktop, MCP Inspector, any MCP SDK)')).toBe(
    'mcp-clients-claude-desktop-mcp-inspector-any-mcp-sdk',
  );
  expect(githubSlug('401, 403 and 503: why a call is refused')).toBe('401-403-and-503-why-a-call-is-refused');
  expect([...headingAnchors('# A\n## Setup\n```sh\n# not a heading\n```\n## Setup\n')]).toEqual(['a', 'setup', 'setup-1']);
});
