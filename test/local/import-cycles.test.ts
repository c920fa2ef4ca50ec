/**
 * No import circles in the project's code: madge (an independent, widely used dependency-graph
 * tool) reads every import of shared/, functions/ and local/, type-only imports included, as
 * TypeScript resolves them, and must find no circle.
 */
import madge from 'madge';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('imports', () => {
  it('form no circle in shared/, functions/ or local/', async () => {
    const graph = await madge(
      ['shared', 'functions', 'local'].map((folder) => join(ROOT, folder)),
      {
        baseDir: ROOT,
        fileExtensions: ['ts'],
        tsConfig: join(ROOT, 'tsconfig.json'),
        // The parser (typescript-estree) warns under NODE_ENV=test when madge's walker reads a deprecated
        // alias (TSImportType's `argument`); that warning is for the walker's authors, not for this test.
        detectiveOptions: { ts: { skipTypeImports: false, suppressDeprecatedPropertyWarnings: true } },
      },
    );
    // The graph is the project's: its files and their imports were read (not an empty answer).
    const files = graph.obj();
    expect(Object.keys(files)).toEqual(
      expect.arrayContaining(['shared/runtime/pipeline.ts', 'shared/http/mcp.ts', 'functions/registry.ts', 'local/dev.ts']),
    );
    expect(files['functions/gateway.ts']).toEqual(expect.arrayContaining(['functions/registry.ts', 'shared/http/app.ts']));
    // The only imports left unresolved: the one a tool's own worker gets at bundle time, and the
    // Workers runtime's own module, which code mode's execution module extends.
    expect(graph.warnings().skipped.sort()).toEqual(['cloudflare:workers', 'edge-tools-selected-tool']);
    expect(graph.circular()).toEqual([]);
  }, 180_000);
});
