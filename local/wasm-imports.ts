/**
 * Makes Node import `.wasm` files the way wrangler bundles them (the default export is the compiled
 * WebAssembly.Module), so that code written for Workers runs in Node scripts too:
 * `node --import ./local/wasm-imports.ts <script>` (the benches run that way).
 */
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
import { wasmModuleSource } from './wasm.ts';

registerHooks({
  load(url, context, nextLoad) {
    if (!url.startsWith('file:') || !url.endsWith('.wasm')) return nextLoad(url, context);
    return { format: 'module', source: wasmModuleSource(fileURLToPath(url)), shortCircuit: true };
  },
});
