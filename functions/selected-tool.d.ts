/** Resolved at bundle time to one tool's module (see tool-worker.ts). */
declare module 'edge-tools-selected-tool' {
  const tool: import('../shared/core/tool.ts').AnyTool;
  export default tool;
}
