/**
 * Every shell and JSON example of README.md and docs/*.md, run as a reader runs them, in order,
 * against the stack of stack.ts (`wrangler dev` over the stand-ins, with the demo project):
 * - a `sh` block runs in bash (`set -euo pipefail`, in the checkout, with BASE, KEY, EDGE_TOOLS_KEY
 *   and DATABASE_URL set as the docs tell the reader to), twice in a row, as a reader runs an example
 *   again; it must exit 0 and answer as shown both times;
 * - a `sh once` block creates something by a name the reader chooses: its first line says so,
 *   `# run once: <why>`, and it runs once;
 * - a `json` block right after it (only blank lines between) is the answer its last command gives:
 *   the answer must have the shape the example shows (json-shape.ts says how it is read);
 * - any other answer a `sh` block prints must be a success: a failure shown nowhere is a drifted doc;
 * - a `sh no-run` block is one the docs cannot run here (production, another vendor's API, a
 *   command that starts the stack itself): its first line says so, `# not run by the docs tests: <why>`;
 * - a `json` block after no command must parse, and an envelope in it must use a real error code;
 * - a `js` block that is one async arrow function is code mode's code: it runs through `POST /code`
 *   on the demo data, and the execution and every tool call it made must succeed.
 * A drifted example fails here, naming the file and line.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, inject, test } from 'vitest';
import { ERROR_STATUS } from '../../../shared/core/contract.ts';
import { shapeMismatches } from '../json-shape.ts';
import { exampleFiles, fencedBlocks, read, ROOT, type Block } from '../markdown.ts';

const run = promisify(execFile);

/** The languages of blocks that are run or parsed here. */
const SHELL = new Set(['sh', 'bash', 'shell']);
/** Blocks the docs may hold that are neither (code to read, configuration of other tools). */
const NOT_CHECKED = new Set(['ts', 'js', 'python', 'yaml', 'promql', 'text', 'toml', 'dotenv']);

/** A `js` block that is code mode's code: one async arrow function. */
const CODE = /^\s*async\s*\(\)\s*=>/;

/** The line a block the docs cannot run must start with. */
export const NO_RUN_NOTE = /^# not run by the docs tests: \S.{8,}/;

/** The line a block that can run only once must start with. */
export const ONCE_NOTE = /^# run once: \S.{8,}/;

/** Curl's answers end with a newline, so that each answer is a line of its own (the API answers JSON on one line). */
const PRELUDE = `set -euo pipefail\ncurl() { command curl -w '\\n' "$@"; }\n`;

async function runShell(block: Block): Promise<string> {
  const { base, key, databaseUrl } = inject('docsStack');
  try {
    const { stdout } = await run('bash', ['-c', PRELUDE + block.text], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        BASE: base,
        KEY: key,
        EDGE_TOOLS_KEY: key,
        DATABASE_URL: databaseUrl,
        NO_COLOR: '1',
      },
      timeout: 150_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const { stdout = '', stderr = '', code } = error as { stdout?: string; stderr?: string; code?: number };
    throw new Error(
      `${block.file}:${block.line}: the example exited with ${code}\n--- stdout\n${stdout.slice(-3_000)}\n--- stderr\n${stderr.slice(-3_000)}`,
      { cause: error },
    );
  }
}

/** The JSON objects a block printed, one per line. */
function printedJson(stdout: string): unknown[] {
  return stdout
    .split('\n')
    .filter((line) => line.trimStart().startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line)];
      } catch {
        return [];
      }
    });
}

function isEnvelope(value: unknown): value is { success: boolean; message?: string; error?: { code?: string } } {
  return typeof value === 'object' && value !== null && 'success' in value;
}

for (const file of exampleFiles()) {
  const blocks = fencedBlocks(file, read(file));
  if (blocks.length === 0) continue;
  describe(file, () => {
    blocks.forEach((block, index) => {
      const previous = blocks[index - 1];
      const answers = previous && block.followsBlock && SHELL.has(previous.lang) && !previous.flags.includes('no-run');
      if (SHELL.has(block.lang)) {
        if (block.flags.includes('no-run')) {
          test(`line ${block.line}: sh no-run says why`, () => {
            expect(block.text, `${file}:${block.line}: a no-run block starts with "# not run by the docs tests: <why>"`).toMatch(
              NO_RUN_NOTE,
            );
          });
          return;
        }
        const next = blocks[index + 1];
        const expected = next && next.lang === 'json' && next.followsBlock ? next : undefined;
        const once = block.flags.includes('once');
        if (once) {
          test(`line ${block.line}: sh once says why`, () => {
            expect(block.text, `${file}:${block.line}: a once block starts with "# run once: <why>"`).toMatch(ONCE_NOTE);
          });
        }
        test(`line ${block.line}: sh${expected ? `, answer at line ${expected.line}` : ''}`, { timeout: 300_000 }, async () => {
          for (const run of once ? ['run'] : ['first run', 'second run']) {
            const printed = printedJson(await runShell(block));
            if (expected) {
              const answer = printed.at(-1);
              expect(answer, `${file}:${block.line}: the example printed no JSON answer (${run})`).toBeDefined();
              const mismatches = shapeMismatches(JSON.parse(expected.text), answer);
              expect(
                mismatches,
                `${file}:${expected.line}: the answer of the ${run} differs from the example:\n${JSON.stringify(answer)}`,
              ).toEqual([]);
            } else {
              for (const answer of printed.filter(isEnvelope)) {
                expect(answer.success, `${file}:${block.line}: an answer the docs do not show failed (${run}): ${answer.message}`).toBe(
                  true,
                );
              }
            }
          }
        });
      } else if (block.lang === 'js' && CODE.test(block.text)) {
        test(`line ${block.line}: code mode's code runs, and every call in it succeeds`, { timeout: 120_000 }, async () => {
          const { base, key } = inject('docsStack');
          const response = await fetch(`${base}/code`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ code: block.text }),
          });
          const answer = (await response.json()) as {
            success: boolean;
            message: string;
            data?: { calls: { tool: string; success: boolean }[] };
          };
          expect(answer.success, `${file}:${block.line}: ${answer.message}`).toBe(true);
          expect(answer.data!.calls.length, `${file}:${block.line}: the code made no tool call`).toBeGreaterThan(0);
          for (const call of answer.data!.calls) expect(call.success, `${file}:${block.line}: ${answer.message}`).toBe(true);
        });
      } else if (block.lang === 'json' && !answers) {
        test(`line ${block.line}: json parses`, () => {
          let value: unknown;
          expect(() => (value = JSON.parse(block.text)), `${file}:${block.line}: not JSON`).not.toThrow();
          if (isEnvelope(value) && value.error?.code !== undefined)
            expect(Object.keys(ERROR_STATUS), `${file}:${block.line}`).toContain(value.error.code);
        });
      } else if (block.lang !== 'json') {
        test(`line ${block.line}: ${block.lang || 'no language'} is a known kind of block`, () => {
          expect(NOT_CHECKED, `${file}:${block.line}: give the block a language (sh and json are run)`).toContain(block.lang);
        });
      }
    });
  });
}
