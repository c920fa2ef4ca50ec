/**
 * What the gateway needs of code mode before loading it: its name in the trace, where its sandbox
 * is, and the answer of a deployment without one. The rest of code mode (the parser included) is
 * loaded by the first code-mode request (shared/http/code.ts), as the MCP server is by the first
 * MCP request, so that no other route's start pays for it.
 */
import { fail, type Failure } from '../core/contract.ts';
import type { Env, ServiceFetcher } from '../runtime/env.ts';

/** The name code-mode executions go by in the trace (`tool` of their rows, `meta.tool`). */
export const CODE_TOOL_ID = 'code';

/**
 * The sandbox this deployment's code mode runs code in: `SANDBOX_URL` (the local sandbox host,
 * local/sandbox-host.ts) when set, else the `SANDBOX` service binding to the sandbox worker;
 * undefined when neither is configured, and code mode is off.
 */
export function sandboxOf(env: Env): ServiceFetcher | undefined {
  const url = env.SANDBOX_URL;
  if (url) return { fetch: (input, init) => fetch(new URL(new URL(input).pathname, url), init) };
  return env.SANDBOX;
}

/** CONFIG_ERROR for a deployment without a sandbox, saying how to add it. */
export function codeModeNotConfigured(): Failure {
  return fail(
    'CONFIG_ERROR',
    'Code mode is not enabled on this deployment: it runs code in the sandbox worker (edge-tools-sandbox), which the gateway reaches through a service binding named SANDBOX.',
    {
      hint: 'The operator deploys the sandbox worker with the gateway (npm run deploy -- --all), with this in wrangler.toml:\n[[services]]\nbinding = "SANDBOX"\nservice = "edge-tools-sandbox"\n(npm run dev has it). Meanwhile call the tools one by one (POST /tools/<id> or POST /mcp).',
      details: { reason: 'code_mode_not_configured', binding: 'SANDBOX' },
    },
  );
}
