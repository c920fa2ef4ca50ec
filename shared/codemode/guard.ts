/**
 * Reading an agent's code before it runs: it must parse as one async arrow function (a syntax
 * error is VALIDATION_ERROR naming its line and column), and every loop body and every function
 * body is given a call to a guard, so that code which never stops is stopped.
 *
 * Why a guard of our own: deployed, Cloudflare stops a sandbox at its `limits.cpuMs`; locally
 * workerd enforces no such limit, and a synchronous endless loop in a loaded worker blocks the
 * whole workerd process (every other request included). The guard counts, it does not read a
 * clock: in workerd `Date.now()` and `performance.now()` may stand still while synchronous code
 * runs. Once its budget is spent it throws on every later call, so code that catches the error
 * and loops again is stopped at its next iteration.
 *
 * The guard's name is chosen at random for each execution: the code cannot name it to shadow it,
 * and workerd forbids building code from strings at run time (`eval`, `new Function`).
 */
import { parse, type Node } from 'acorn';
import { fail, type Failure } from '../core/contract.ts';
import { CODE_EXAMPLE } from './schemas.ts';

/** The code, instrumented, as the expression of an async function; or why it cannot run. */
export type PreparedCode = { ok: true; source: string } | Failure;

const LOOPS = new Set(['ForStatement', 'ForInStatement', 'ForOfStatement', 'WhileStatement', 'DoWhileStatement']);
const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

type AnyNode = Node & { body?: AnyNode | AnyNode[]; expression?: AnyNode; [key: string]: unknown };

/** A text inserted at a position; `depth` orders insertions that share a position (outer opens first, inner closes first). */
interface Insertion {
  at: number;
  text: string;
  closing: boolean;
  depth: number;
}

/**
 * Parses `code` and inserts a call of `guard` (an identifier) at the start of every loop body and
 * every function body. Answers VALIDATION_ERROR, naming the line and column, for code that does
 * not parse or is not an async arrow function.
 *
 * @example
 * prepareCode('async () => { while (true) {} }', '__guard_1f2e')
 * // { ok: true, source: 'async () => {__guard_1f2e(); while (true) {__guard_1f2e();} }' }
 */
export function prepareCode(code: string, guard: string): PreparedCode {
  let program: AnyNode;
  try {
    program = parse(code, { ecmaVersion: 'latest', sourceType: 'module', locations: true }) as unknown as AnyNode;
  } catch (error) {
    const { loc, message } = error as SyntaxError & { loc?: { line: number; column: number } };
    const where = loc ? `line ${loc.line}, column ${loc.column + 1}` : 'an unknown position';
    const text = message.replace(/ \(\d+:\d+\)$/, '');
    return fail('VALIDATION_ERROR', `The code does not parse: ${text} at ${where}.`, {
      hint: `Send the source of one async arrow function, e.g. ${CODE_EXAMPLE}`,
      details: {
        fields: [
          {
            field: 'code',
            code: 'syntax_error',
            message: `${text} at ${where}`,
            expected: 'JavaScript: one async arrow function',
            received: excerpt(code, loc),
          },
        ],
        ...(loc && { line: loc.line, column: loc.column + 1 }),
      },
    });
  }
  const body = program.body as AnyNode[];
  const only = body.length === 1 && body[0]!.type === 'ExpressionStatement' ? body[0]!.expression : undefined;
  if (!only || only.type !== 'ArrowFunctionExpression' || !(only as AnyNode & { async: boolean }).async) {
    const received = only ? `an expression of type ${only.type}` : `${body.length} statement${body.length === 1 ? '' : 's'}`;
    const message = `The code must be exactly one async arrow function (async () => { ... }), but it is ${received}.`;
    return fail('VALIDATION_ERROR', message, {
      hint: `Wrap the steps in one function and return what you want back, e.g. ${CODE_EXAMPLE}`,
      details: { fields: [{ field: 'code', code: 'not_async_arrow_function', message, expected: 'async () => { ... }', received }] },
    });
  }
  const insertions: Insertion[] = [];
  const call = `${guard}();`;
  const visit = (node: AnyNode, depth: number) => {
    if (LOOPS.has(node.type)) guardBody(node.body as AnyNode, depth, call, insertions, 'statement');
    if (FUNCTIONS.has(node.type)) guardBody(node.body as AnyNode, depth, call, insertions, 'function');
    for (const value of Object.values(node)) {
      for (const item of Array.isArray(value) ? value : [value]) if (isNode(item)) visit(item, depth + 1);
    }
  };
  visit(only, 0);
  return { ok: true, source: apply(code.slice(only.start, only.end), insertions, only.start) };
}

/** Adds the guard's call at the start of `body`: inside a block, or wrapping a single statement or an arrow's expression. */
function guardBody(body: AnyNode, depth: number, call: string, insertions: Insertion[], kind: 'statement' | 'function'): void {
  if (body.type === 'BlockStatement') {
    insertions.push({ at: body.start + 1, text: call, closing: false, depth });
  } else if (kind === 'statement') {
    insertions.push({ at: body.start, text: `{${call}`, closing: false, depth }, { at: body.end, text: '}', closing: true, depth });
  } else {
    // An arrow's expression body: (guard(), expression), parenthesised so an object literal stays one.
    insertions.push(
      { at: body.start, text: `(${call.slice(0, -1)}, `, closing: false, depth },
      { at: body.end, text: ')', closing: true, depth },
    );
  }
}

/** `source` (which starts at `offset` of the code) with the insertions made. */
function apply(source: string, insertions: Insertion[], offset: number): string {
  const ordered = insertions.sort(
    (a, b) => a.at - b.at || (a.closing === b.closing ? (a.closing ? b.depth - a.depth : a.depth - b.depth) : a.closing ? -1 : 1),
  );
  let out = '';
  let from = 0;
  for (const { at, text } of ordered) {
    out += source.slice(from, at - offset) + text;
    from = at - offset;
  }
  return out + source.slice(from);
}

function isNode(value: unknown): value is AnyNode {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

/** The line of `code` where a syntax error is, cut to a readable length. */
function excerpt(code: string, loc: { line: number; column: number } | undefined): string {
  const line = loc ? (code.split('\n')[loc.line - 1] ?? '') : code;
  const from = Math.max(0, (loc?.column ?? 0) - 40);
  return line.slice(from, from + 80);
}
