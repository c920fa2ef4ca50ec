/**
 * The TypeScript declarations code mode gives agents (`GET /code/types`, `describe` on /mcp/code),
 * generated from the zod schemas the validator enforces, judged by the TypeScript compiler itself:
 * they compile, the seed story written against them type-checks, and calls that the validator
 * would refuse (a wrong field, a wrong type, data read before checking success) do not.
 */
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { toolDeclarations, toolSignatures } from '../../shared/codemode/types.ts';
import { STORY } from '../../bench/code-mode-story.ts';
import { tools } from '../../functions/registry.ts';

/** The compiler's errors for `code` (the body of `const run = <code>`) with the declarations of every tool. */
function typeErrors(code: string): string[] {
  return compileErrors(`${toolDeclarations(tools)}\nconst run: () => Promise<unknown> = ${code};\nexport {};\n`);
}

/** The compiler's errors for the module `source` (and any more modules, by file name), strict. */
function compileErrors(source: string, more: Record<string, string> = {}, extra: ts.CompilerOptions = {}): string[] {
  const files: Record<string, string> = { '/agent.ts': source, ...more };
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    strict: true,
    noEmit: true,
    types: [],
    ...extra,
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => files[name] ?? readFile(name);
  host.fileExists = (
    (exists) => (name: string) =>
      name in files || exists(name)
  )(host.fileExists.bind(host));
  host.getSourceFile = ((get) => (name: string, version: ts.ScriptTarget) =>
    name in files ? ts.createSourceFile(name, files[name]!, version) : get(name, version))(host.getSourceFile.bind(host));
  const program = ts.createProgram(Object.keys(files), options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

/**
 * The compiler's errors for the JavaScript module `source`, beside the declarations `types`: checked
 * as `// @ts-check` JavaScript is, strict but for parameters without a type (JavaScript has none).
 */
function javaScriptErrors(types: string, source: string): string[] {
  return compileErrors(`${types}\nexport {};\n`, { '/agent.js': source }, { allowJs: true, checkJs: true, noImplicitAny: false });
}

describe("describe's answer: what a model writes code from", () => {
  // Read as a model reads it (the legend, then a purpose line and a call line per tool): each call
  // line is id(input) => data, the input a TypeScript type with the legend's int, bool and RF, the
  // data its fields by name (read here as a type whose named values may be anything). A call
  // resolves to the envelope execute's description states.
  const text = toolSignatures(tools);
  const calls = text
    .split('\n')
    .filter((line) => !line.startsWith('// '))
    .map((line) => {
      const open = line.indexOf('(');
      const arrow = line.indexOf(') => ');
      return { id: line.slice(0, open), input: line.slice(open + 1, arrow), data: line.slice(arrow + ') => '.length) };
    });
  const anyNamed = (names: string) => names.replace(/([{,])([A-Za-z_][A-Za-z0-9_]*\??)(?=[,}])/g, '$1$2:any');
  const camel = (id: string) => id.replace(/-([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
  const prelude = `type RF = {response_format?: 'concise'|'detailed'}; type int = number; type bool = boolean;
type Envelope<T> = { success: true; message: string; data: T } | { success: false; message: string; error: { code: string; message: string; hint?: string } };
${calls.map((call, i) => `type In${i} = ${call.input};\ntype Out${i} = ${anyNamed(call.data)};`).join('\n')}
declare global {
  const tools: {
${calls.map((call, i) => `    "${call.id}"(input: In${i}): Promise<Envelope<Out${i}>>;\n    ${camel(call.id)}(input: In${i}): Promise<Envelope<Out${i}>>;`).join('\n')}
  };
}`;

  it('gives every tool, in order, with its purpose', () => {
    expect(calls.map((call) => call.id)).toEqual(tools.map((tool) => tool.id));
    for (const tool of tools) expect(text).toContain(`// ${tool.purpose}`);
  });

  it("types every tool's input so that its example is a valid call", () => {
    const source = `${prelude}\n${tools.map((tool, i) => `const example${i}: In${i} = ${JSON.stringify(tool.example)};`).join('\n')}\nexport {};\n`;
    expect(compileErrors(source)).toEqual([]);
  });

  it('refuses a field the tool does not have, in every input', () => {
    const source = `${prelude}\n${tools.map((tool, i) => `const wrong${i}: In${i} = ${JSON.stringify({ ...tool.example, not_a_field: 1 })};`).join('\n')}\nexport {};\n`;
    const errors = compileErrors(source);
    expect(errors).toHaveLength(tools.length);
    for (const error of errors) expect(error).toMatch(/not_a_field/);
  });

  it('checks the seed story of the code-mode bench: it uses only what describe shows', () => {
    expect(javaScriptErrors(prelude, `// @ts-check\nexport const run = ${STORY};\n`)).toEqual([]);
  });

  it('refuses a story that reads a field the data does not have, or data before success', () => {
    const misread = STORY.replace('(r) => r.task_id)', '(r) => r.taskId)');
    expect(misread).not.toBe(STORY);
    expect(javaScriptErrors(prelude, `// @ts-check\nexport const run = ${misread};\n`).join('\n')).toMatch(/taskId/);
    const unchecked = `// @ts-check\nexport const run = async () => (await tools.semanticSearch({ query: "x" })).data.results;\n`;
    expect(javaScriptErrors(prelude, unchecked).join('\n')).toMatch(/data/);
  });
});

describe('code mode declarations', () => {
  it('compile for every tool, each under its id and its camelCase name', () => {
    expect(typeErrors('async () => null')).toEqual([]);
    const declarations = toolDeclarations(tools);
    for (const tool of tools) expect(declarations).toContain(`${JSON.stringify(tool.id)}(input:`);
  });

  it("type-check the seed story: search, then the tasks' context, dependencies and clusters", () => {
    const story = `async () => {
      const found = await tools.semanticSearch({ query: "authentication", limit: 10 });
      if (!found.success) return found.error;
      const ids = found.data.results.map((result) => result.task_id);
      const [context, dependencies, clusters] = await Promise.all([
        tools["get-document-context"]({ task_ids: ids.slice(0, 3) }),
        tools.detectDependencies({ task_ids: ids }),
        tools.clusterBySimilarity({ task_ids: ids, threshold: 0.5 }),
      ]);
      return {
        tasks: found.data.results.map(({ task_id, text }) => ({ task_id, text })),
        documents: context.success ? context.data : null,
        relationships: dependencies.success ? dependencies.data.relationships : dependencies.error.code,
        clusters: clusters.success ? clusters.data : null,
      };
    }`;
    expect(typeErrors(story)).toEqual([]);
  });

  it('refuse what the validator refuses: a wrong type, an unknown field, a missing field, data read before success', () => {
    expect(typeErrors('async () => tools.semanticSearch({ query: 42 })').join('\n')).toMatch(/number.*string/);
    expect(typeErrors('async () => tools.semanticSearch({ query: "x", qury: "y" })').join('\n')).toMatch(/qury/);
    expect(typeErrors('async () => tools.logMood({ user_id: "u", mood: "happy", energy_level: 3 })').join('\n')).toMatch(/timestamp/);
    expect(
      typeErrors('async () => tools.logMood({ user_id: "u", mood: "ecstatic", energy_level: 3, timestamp: "2030-01-01T00:00:00Z" })').join(
        '\n',
      ),
    ).toMatch(/ecstatic/);
    expect(typeErrors('async () => (await tools.semanticSearch({ query: "x" })).data.results').join('\n')).toMatch(/data/);
  });
});
