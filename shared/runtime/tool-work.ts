/**
 * A tool as the pipeline's work (./call.ts, `Work`): what the gate judges of it, how its key and
 * slot are used, and what it sees of its call (its `ToolContext`): the database, the project,
 * providers built on first use, the signal, ids, links and progress. Never Hono, `env` or Redis.
 */
import type { Providers } from '../core/providers.ts';
import type { AnyTool, ToolContext } from '../core/tool.ts';
import { deniedTool } from '../auth/caller.ts';
import type { RunContext, Work } from './call.ts';
import { execute } from './execute.ts';

/**
 * A tool as the pipeline's {@link Work}, for one call: its attempts share one `ToolContext`, so its
 * providers are built once per call, not once per retry.
 */
export function toolWork(tool: AnyTool): Work {
  let shared: ToolContext | undefined;
  return {
    id: tool.id,
    description: tool.description,
    input: tool.input,
    hint: tool.hint,
    denied: (caller) => deniedTool(caller, tool),
    writes: !tool.annotations.readOnlyHint,
    holdsSlot: true,
    key: tool.acceptsIdempotencyKey ? 'claim' : 'ignore',
    retries: true,
    ...(tool.unavailable && { unavailable: tool.unavailable }),
    run: (input, context) => execute(tool, input, (shared ??= toolContext(tool, context))),
  };
}

/** What a tool sees of its call: the database, project, providers (built on first use), signal, ids, links and progress. */
function toolContext(tool: AnyTool, { db, caller, call, scope, traceId, links, idFor, progress }: RunContext): ToolContext {
  let providers: Providers | undefined;
  return {
    db,
    project: caller.project,
    get providers() {
      if (!tool.providers)
        throw new Error(`The tool '${tool.id}' reads context.providers, but its definition names none (providers: providersFromEnv).`);
      return (providers ??= tool.providers(scope.env as Record<string, unknown>));
    },
    signal: call.signal,
    traceId,
    idFor,
    links,
    progress,
  };
}
