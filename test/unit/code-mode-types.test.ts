/**
 * The TypeScript declarations code mode gives agents (`GET /code/types`, `describe` on /mcp/code),
 * generated from the zod schemas the validator enforces, judged by the TypeScript compiler itself:
 * they compile, the seed story written against them type-checks, and calls that the validator
 * would refuse (a wrong field, a wrong type, data read before checking success) do not.
 */
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { toolDeclarations, toolIndex } from '../../shared/codemode/types.ts';
import { tools } from '../../functions/registry.ts';

/** The compiler's errors for `code` (the body of `const run = <code>`) with the declarations of every tool. */
function typeErrors(code: string): string[] {
  return compileErrors(`${toolDeclarations(tools)}\nconst run: () => Promise<unknown> = ${code};\nexport {};\n`);
}

/** The compiler's errors for the module `source`. */
function compileErrors(source: string): string[] {
  const fileName = '/agent.ts';
  const options: ts.CompilerOptions = { target: ts.ScriptTarget.ES2022, lib: ['lib.es2022.d.ts'], strict: true, noEmit: true, types: [] };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => (name === fileName ? source : readFile(name));
  host.fileExists = (
    (exists) => (name: string) =>
      name === fileName || exists(name)
  )(host.fileExists.bind(host));
  host.getSourceFile = ((get) => (name: string, version: ts.ScriptTarget) =>
    name === fileName ? ts.createSourceFile(name, source, version) : get(name, version))(host.getSourceFile.bind(host));
  const program = ts.createProgram([fileName], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

describe("the tool index of execute's description", () => {
  // Each line's input type, read as TypeScript (with the legend's RF and its short names), must take
  // the tool's hand-written example and refuse it with a field the tool does not have.
  const lines = toolIndex(tools).split('\n');
  const inputTypes = tools.map((tool, i) => {
    const line = lines[i]!;
    expect(line.startsWith(`${tool.id}${tool.annotations.readOnlyHint ? '' : '*'}({`)).toBe(true);
    return line.slice(line.indexOf('(') + 1, line.lastIndexOf(')'));
  });
  const prelude = `type RF = {response_format?: 'concise'|'detailed'}; type int = number; type bool = boolean;\n${inputTypes.map((type, i) => `type In${i} = ${type};`).join('\n')}\n`;

  it("types every tool's input so that its example is a valid call", () => {
    const source = `${prelude}${tools.map((tool, i) => `const example${i}: In${i} = ${JSON.stringify(tool.example)};`).join('\n')}\nexport {};\n`;
    expect(compileErrors(source)).toEqual([]);
  });

  it('refuses a field the tool does not have, in every line', () => {
    const source = `${prelude}${tools.map((tool, i) => `const wrong${i}: In${i} = ${JSON.stringify({ ...tool.example, not_a_field: 1 })};`).join('\n')}\nexport {};\n`;
    const errors = compileErrors(source);
    expect(errors).toHaveLength(tools.length);
    for (const error of errors) expect(error).toMatch(/not_a_field/);
  });

  it('leaves what each tool does and its data to describe, whose declarations name the fields the seed story reads', () => {
    const declared = toolDeclarations(
      tools.filter((tool) => ['semantic-search', 'get-document-context', 'detect-dependencies', 'cluster-by-similarity'].includes(tool.id)),
    );
    for (const name of ['task_id', 'document_title', 'documents', 'relationships', 'source_task_id', 'representative_tasks'])
      expect(declared).toContain(name);
    expect(declared).toContain(tools.find((tool) => tool.id === 'semantic-search')!.purpose.slice(0, 40));
    expect(lines.join('\n')).not.toContain('task_count');
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
