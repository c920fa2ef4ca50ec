/**
 * Code mode over HTTP, on the gateway: `POST /code` runs an agent's code (`{ code }`, the source
 * of an async arrow function) with the same credentials and the same answer as MCP's `execute`
 * on `POST /mcp/code` (shared/http/mcp-code.ts); `GET /code/types` answers the TypeScript
 * declarations of the tools the credential may call from code. Running code needs the sandbox
 * worker (shared/codemode/enabled.ts). Code mode itself, its parser included, is loaded by
 * the first request that runs or describes code (see shared/codemode/enabled.ts).
 */
import { Hono } from 'hono/tiny';
import { readJsonObject } from '../core/body.ts';
import { metaWithoutExecution, ok } from '../core/contract.ts';
import type { AnyTool } from '../core/tool.ts';
import { CODE_TOOL_ID, codeModeNotConfigured, sandboxOf } from '../codemode/enabled.ts';
import { deniedTool } from '../auth/caller.ts';
import { logUnsuccessful } from '../runtime/call-report.ts';
import type { Env } from '../runtime/env.ts';
import { keyFromHeader } from '../runtime/idempotency.ts';
import { answer, respond, scopeOf } from './base.ts';
import { createMcpHandler, mcpCors } from './mcp.ts';
import type { Served } from './tool-route.ts';

/** `POST /code`, `POST /mcp/code` and `GET /code/types` for code calling `tools`. */
export function codeRoutes(tools: readonly AnyTool[], options: Served) {
  const mcp = createMcpHandler(tools, options, () =>
    import('./mcp-code.ts').then(({ createCodeMcpServer }) => createCodeMcpServer(tools, options)),
  );
  return new Hono<{ Bindings: Env }>()
    .use('/mcp/code', mcpCors())
    .all('/mcp/code', async (c) => {
      if (sandboxOf(c.env)) return mcp(c.req.raw, scopeOf(c));
      // Without the binding nothing could run: a verified caller is told how to enable it.
      const gate = await options.authorize(c.req.raw, scopeOf(c));
      if (!gate.ok) return answer(gate, CODE_TOOL_ID);
      const confirmed = await gate.confirm();
      return answer('error' in confirmed ? confirmed : codeModeNotConfigured(), CODE_TOOL_ID);
    })
    .post('/code', async (c) => {
      const request = c.req.raw;
      const scope = scopeOf(c);
      const gate = await options.authorize(request, scope);
      if (!gate.ok) {
        const meta = metaWithoutExecution(CODE_TOOL_ID);
        logUnsuccessful('call_refused', gate, { tool: CODE_TOOL_ID, trace_id: meta.trace_id });
        return respond(gate, meta);
      }
      const { runCode } = await import('../codemode/run.ts');
      const { outcome, meta } = await runCode(
        tools,
        {
          readInput: (hint) => readJsonObject(request, hint, options.bodyLimitBytes),
          idempotencyKey: keyFromHeader(request.headers.get('idempotency-key')),
          traceparent: request.headers.get('traceparent'),
          signal: request.signal,
          origin: new URL(request.url).origin,
        },
        gate,
        scope,
        options,
      );
      return respond(outcome, meta);
    })
    .get('/code/types', async (c) => {
      const gate = await options.authorize(c.req.raw, scopeOf(c));
      if (!gate.ok) return answer(gate, CODE_TOOL_ID);
      const caller = await gate.confirm();
      if ('error' in caller) return answer(caller, CODE_TOOL_ID);
      const callable = tools.filter((tool) => !deniedTool(caller, tool));
      const { toolDeclarations } = await import('../codemode/types.ts');
      return answer(
        ok(
          { declarations: toolDeclarations(callable) },
          `TypeScript declarations of the ${callable.length} tools this credential may call from code.`,
        ),
        CODE_TOOL_ID,
      );
    });
}
