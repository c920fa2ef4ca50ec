/**
 * Makes Node import code written for Workers the way wrangler bundles it, so that it runs in Node
 * scripts too: `node --import ./local/wasm-imports.ts <script>` (the benches run that way).
 *
 * - a `.wasm` file's default export is the compiled WebAssembly.Module;
 * - `cloudflare:workers` is a module with the `WorkerEntrypoint` class only: the OAuth provider
 *   library imports it to recognise handler classes, which nothing run in Node passes.
 */
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
import { wasmModuleSource } from './wasm.ts';

const WORKERS_MODULE = `data:text/javascript,${encodeURIComponent('export class WorkerEntrypoint {}')}`;

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === 'cloudflare:workers') return { url: WORKERS_MODULE, format: 'module', shortCircuit: true };
    return nextResolve(specifier, context);
  },
  load(url, context, nextLoad) {
    if (!url.startsWith('file:') || !url.endsWith('.wasm')) return nextLoad(url, context);
    return { format: 'module', source: wasmModuleSource(fileURLToPath(url)), shortCircuit: true };
  },
});
