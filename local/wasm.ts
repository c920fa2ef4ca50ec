/**
 * `npm run build:wasm`: assembles every WebAssembly text file (`*.wat`) under functions/ and shared/
 * into the `.wasm` binary next to it, with wabt (the WebAssembly Binary Toolkit). The binaries are
 * committed, so deploys, `npm run dev` and tests need no build step; a unit test checks that each
 * committed binary is exactly its source assembled. Run this after editing a `.wat` file.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import wabt from 'wabt';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where WebAssembly sources live. */
const WAT_ROOTS = ['functions', 'shared'];

/** The WebAssembly proposals our sources may use, beyond the 1.0 core. */
const FEATURES = { simd: true };

/** Every `.wat` file under WAT_ROOTS, as absolute paths. */
export function watFiles(): string[] {
  return WAT_ROOTS.flatMap((root) =>
    readdirSync(join(ROOT, root), { recursive: true, encoding: 'utf8' })
      .filter((path) => path.endsWith('.wat'))
      .map((path) => join(ROOT, root, path))
      .sort(),
  );
}

/** The binary of one `.wat` file: validated, without a names section (so it does not depend on the path). */
export async function assemble(watPath: string): Promise<Uint8Array> {
  const module = (await wabt()).parseWat(basename(watPath), readFileSync(watPath, 'utf8'), FEATURES);
  try {
    module.validate();
    return module.toBinary({ write_debug_names: false }).buffer;
  } finally {
    module.destroy();
  }
}

/**
 * JavaScript source of a module whose default export is the compiled WebAssembly module in the file
 * at `path`: what wrangler makes of `import kernel from './x.wasm'`, for Node (tests and benches).
 */
export function wasmModuleSource(path: string): string {
  return `import { readFileSync } from 'node:fs';\nexport default new WebAssembly.Module(readFileSync(${JSON.stringify(path)}));\n`;
}

/** The `.wasm` path of a `.wat` path. */
export function binaryPath(watPath: string): string {
  return watPath.replace(/\.wat$/, '.wasm');
}

if (import.meta.main) {
  for (const path of watFiles()) {
    const binary = await assemble(path);
    writeFileSync(binaryPath(path), binary);
    console.log(`${relative(ROOT, binaryPath(path))}: ${binary.length} bytes`);
  }
}
