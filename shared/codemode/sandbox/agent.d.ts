/**
 * The agent's module, `agent.js`, which the sandbox worker writes for each execution beside the
 * execution module (../sandbox-worker.ts, `agentModule`): the agent's instrumented code as the body
 * of an arrow function that is handed the guard, `tools` and `console`, and returns the code's
 * async function. Bundling leaves the import as it is.
 */
declare const agent: (guard: () => void, tools: unknown, console: unknown) => () => unknown;
export default agent;
