/**
 * The TypeScript declarations code mode gives agents (`GET /code/types`, `describe` on /mcp/code),
 * generated from the zod schemas the validator enforces, judged by the TypeScript compiler itself:
 * they compile, the seed story written against them type-checks, and calls that the validator
 * would refuse (a wrong field, a wrong type, data read before checking success) do not.
 */
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { toolDeclarations } from '../../shared/codemode/types.ts';
import { tools } from '../../functions/registry.ts';

/** The compiler's errors for `code` (the body of `const run = <code>`) with the declarations of every tool. */
function typeErrors(code: string): string[] {
  const source = `${toolDeclarations(tools)}\nconst run: () => Promise<unknown> = ${code};\nexport {};\n`;
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
