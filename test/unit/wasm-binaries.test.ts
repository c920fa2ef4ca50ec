import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assemble, binaryPath, watFiles } from '../../local/wasm.ts';

describe('committed WebAssembly binaries', () => {
  const sources = watFiles();

  it('exist (the kernel of clustering.ts at least)', () => {
    expect(sources.map((path) => relative(process.cwd(), path))).toContain('functions/task-analysis/lib/dot-products.wat');
  });

  it.each(sources.map((path) => [relative(process.cwd(), path), path]))(
    '%s assembles to exactly the committed .wasm (run `npm run build:wasm` after editing it)',
    async (_, path) => {
      expect(Buffer.from(await assemble(path)).equals(readFileSync(binaryPath(path)))).toBe(true);
    },
  );
});
