/**
 * Names in the code that point elsewhere still point somewhere: every path of the checkout a source
 * file, a config or a script names (`shared/core/contract.ts`, `./lib/fields.ts`, in comments as in
 * code) exists, and every `@link` of a doc comment names something declared in the checkout.
 * Refactors move files and rename functions; a comment that names what is gone misleads the next
 * reader. (The docs' own paths and anchors are checked by test/docs/links.test.ts.)
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The checkout's files that hold code or configuration (not the docs, not generated data). */
const SOURCES = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((file) => /\.(ts|mjs|js|toml|wat)$/.test(file) || file === '.ci/run' || file === '.npmrc')
  .filter((file) => existsSync(join(ROOT, file)))
  .map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));

/** A path of the checkout: from one of its top folders, or relative (`./`, `../`), with an extension. */
const PATH =
  /(?<![\w./@-])((?:\.\.?\/)*(?:shared|functions|local|test|bench|examples|drizzle|docs|\.ci)\/[\w./-]+\.(?:ts|md|wat|wasm|sql|json|mjs|toml))/g;

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

it('every path a source file names exists (from the root, or from the file)', () => {
  const missing = SOURCES.flatMap(({ file, text }) =>
    [...text.matchAll(PATH)]
      .filter(([, path]) => !existsSync(join(ROOT, path!)) && !existsSync(join(ROOT, normalize(join(dirname(file), path!)))))
      .map((match) => `${file}:${lineOf(text, match.index)}: ${match[1]}`),
  );
  expect(missing).toEqual([]);
});

it('every @link of a doc comment names something declared in the checkout', () => {
  const declared = new Set<string>();
  for (const { text } of SOURCES) {
    for (const [, name] of text.matchAll(/\b(?:function|const|let|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/g)) declared.add(name!);
    // Members of interfaces and object types, which a link may name after its type (`Options.member`).
    for (const [, name] of text.matchAll(/^\s+(?:readonly\s+)?([A-Za-z_$][\w$]*)\??\s*[:(]/gm)) declared.add(name!);
  }
  const unknown = SOURCES.flatMap(({ file, text }) =>
    [...text.matchAll(/\{@link\s+([A-Za-z_$][\w$]*)/g)]
      .filter(([, name]) => !declared.has(name!))
      .map((match) => `${file}:${lineOf(text, match.index)}: {@link ${match[1]}}`),
  );
  expect(unknown).toEqual([]);
});
