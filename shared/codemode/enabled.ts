/**
 * What the gateway needs of code mode before loading it: its name in the trace, and the answer of
 * a deployment without the Worker Loader binding. The rest of code mode (the parser included) is
 * loaded by the first code-mode request (shared/http/code.ts), as the MCP server is by the first
 * MCP request, so that no other route's start pays for it.
 */
import { fail, type Failure } from '../core/contract.ts';

/** The name code-mode executions go by in the trace (`tool` of their rows, `meta.tool`). */
export const CODE_TOOL_ID = 'code';

/** CONFIG_ERROR for a deployment without the Worker Loader binding, saying how to add it. */
export function codeModeNotConfigured(): Failure {
  return fail(
    'CONFIG_ERROR',
    'Code mode is not enabled on this deployment: it needs a Worker Loader binding named LOADER to run code in a sandbox.',
    {
      hint: 'The operator adds to wrangler.toml:\n[[worker_loaders]]\nbinding = "LOADER"\nand deploys again (npm run dev has it). Meanwhile call the tools one by one (POST /tools/<id> or POST /mcp).',
      details: { reason: 'code_mode_not_configured', binding: 'LOADER' },
    },
  );
}
