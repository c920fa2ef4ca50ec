/** A `.wasm` import is the compiled module (wrangler's CompiledWasm rule; the same in tests and benches). */
declare module '*.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
