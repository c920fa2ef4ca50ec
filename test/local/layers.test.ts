/**
 * The layer rule of ARCHITECTURE.md, read from the real imports: madge (the same independent
 * dependency-graph tool as the import-circle test) reads every import of shared/ and functions/,
 * type-only imports included, as TypeScript resolves them. Folders of shared/, lowest first:
 * core → records, providers → observability, concurrency, auth → runtime → http. A folder imports
 * its own files and the layers below it, never a layer above nor another folder of its own layer. A tool (functions/<toolset>/) imports core,
 * records and providers only, and no other toolset's folder. drizzle/schema.ts is data, below all.
 */
import madge from 'madge';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The layers of shared/, lowest first; folders on one line share a layer. */
const LAYERS: readonly (readonly string[])[] = [['core'], ['records', 'providers'], ['observability', 'concurrency', 'auth'], ['runtime'], ['http']];

/** What a tool may import from shared/. */
const TOOL_IMPORTS: ReadonlySet<string> = new Set(['core', 'records', 'providers']);

/** Where a file sits: a layer of shared/, a toolset's folder, an entry of functions/, or neither. */
type Place = { kind: 'layer'; folder: string; rank: number } | { kind: 'tool'; toolset: string } | { kind: 'entry' } | { kind: 'other' };

function placeOf(file: string): Place {
  const [top, folder, rest] = file.split('/');
  if (top === 'shared' && folder !== undefined) {
    const rank = LAYERS.findIndex((layer) => layer.includes(folder));
    if (rank === -1) throw new Error(`shared/${folder}/ is in no layer: add it to LAYERS here and to ARCHITECTURE.md's rule.`);
    return { kind: 'layer', folder, rank };
  }
  if (top === 'functions') return rest === undefined ? { kind: 'entry' } : { kind: 'tool', toolset: folder! };
  return { kind: 'other' };
}

/** Why `from` may not import `to`, or undefined when it may. */
function violation(from: string, to: string): string | undefined {
  const a = placeOf(from);
  const b = placeOf(to);
  if (b.kind === 'other') return undefined; // drizzle/schema.ts, packages
  if (a.kind === 'layer') {
    if (b.kind !== 'layer') return `shared/ imports ${b.kind === 'tool' ? 'a tool' : 'an entry of functions/'}`;
    if (b.rank > a.rank) return `${a.folder}/ (layer ${a.rank}) imports ${b.folder}/ (layer ${b.rank}), above it`;
    if (b.rank === a.rank && b.folder !== a.folder) return `${a.folder}/ imports ${b.folder}/, another folder of its own layer`;
    return undefined;
  }
  if (a.kind === 'tool') {
    if (b.kind === 'layer' && !TOOL_IMPORTS.has(b.folder)) return `a tool imports shared/${b.folder}/ (tools import ${[...TOOL_IMPORTS].join(', ')} only)`;
    if (b.kind === 'tool' && b.toolset !== a.toolset) return `the ${a.toolset} toolset imports the ${b.toolset} toolset's folder`;
    if (b.kind === 'entry') return 'a tool imports an entry of functions/';
  }
  return undefined;
}

describe('layers', () => {
  it('no import of shared/ or functions/ points upward', async () => {
    const graph = await madge(['shared', 'functions'].map((folder) => join(ROOT, folder)), {
      baseDir: ROOT,
      fileExtensions: ['ts'],
      tsConfig: join(ROOT, 'tsconfig.json'),
      detectiveOptions: { ts: { skipTypeImports: false } },
    });
    const files = graph.obj();
    // The graph is the project's, with its edges across layers (not an empty answer).
    expect(files['shared/runtime/pipeline.ts']).toEqual(expect.arrayContaining(['shared/core/contract.ts', 'shared/concurrency/admission.ts']));
    expect(files['shared/core/tool.ts']).toEqual(expect.arrayContaining(['shared/core/database.ts', 'shared/core/providers.ts']));
    const upward = Object.entries(files).flatMap(([from, imports]) =>
      imports.flatMap((to) => {
        const why = violation(from, to);
        return why ? [`${from} -> ${to}: ${why}`] : [];
      }),
    );
    expect(upward).toEqual([]);
  }, 180_000);

  it('the rule itself: upward, sideways-into-a-toolset and allowed imports are told apart', () => {
    expect(violation('shared/core/tool.ts', 'shared/runtime/db.ts')).toMatch(/above it/);
    expect(violation('shared/records/tasks.ts', 'shared/providers/types.ts')).toMatch(/its own layer/);
    expect(violation('shared/records/tasks.ts', 'shared/records/chunks.ts')).toBeUndefined();
    expect(violation('shared/http/app.ts', 'shared/core/contract.ts')).toBeUndefined();
    expect(violation('functions/study/quiz-post-save.ts', 'shared/runtime/pipeline.ts')).toMatch(/tools import/);
    expect(violation('functions/study/quiz-post-save.ts', 'functions/documents/lib/ingest.ts')).toMatch(/toolset/);
    expect(violation('functions/registry.ts', 'shared/http/app.ts')).toBeUndefined();
  });
});
