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
import { confirmedFor, deniedTool } from '../auth/caller.ts';
import { logUnsuccessful } from '../runtime/call-report.ts';
import type { Env } from '../runtime/env.ts';
import { keyFromHeader } from '../runtime/idempotency.ts';
import { authorize, credentialsOf } from './authorize.ts';
import { answer, respond, scopeOf } from './base.ts';
import { createMcpHandler, mcpCors } from './mcp.ts';
import type { ServeOptions } from './tool-route.ts';

/** `POST /code`, `POST /mcp/code` and `GET /code/types` for code calling `tools`. */
export function codeRoutes(tools: readonly AnyTool[], options: ServeOptions = {}) {
  const mcp = createMcpHandler(tools, options, () =>
    import('./mcp-code.ts').then(({ createCodeMcpServer }) => createCodeMcpServer(tools, options)),
  );
  return new Hono<{ Bindings: Env }>()
    .use('/mcp/code', mcpCors())
    .all('/mcp/code', async (c) => {
      if (sandboxOf(c.env)) return mcp(c.req.raw, scopeOf(c));
      // Without the binding nothing could run: a verified caller is told how to enable it.
      const caller = await authorize(credentialsOf(c.req.raw), scopeOf(c), { auth: options.auth, accessTokens: options.accessTokens });
      if (!caller.ok) return answer(caller, CODE_TOOL_ID);
      return answer((await confirmedFor(caller)) ?? codeModeNotConfigured(), CODE_TOOL_ID);
    })
    .post('/code', async (c) => {
      const request = c.req.raw;
      const scope = scopeOf(c);
      const caller = await authorize(credentialsOf(request), scope, { auth: options.auth, accessTokens: options.accessTokens });
      if (!caller.ok) {
        const meta = metaWithoutExecution(CODE_TOOL_ID);
        logUnsuccessful('call_refused', caller, { tool: CODE_TOOL_ID, trace_id: meta.trace_id });
        return respond(caller, meta);
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
        caller,
        scope,
        options,
      );
      return respond(outcome, meta);
    })
    .get('/code/types', async (c) => {
      const caller = await authorize(credentialsOf(c.req.raw), scopeOf(c), { auth: options.auth, accessTokens: options.accessTokens });
      if (!caller.ok) return answer(caller, CODE_TOOL_ID);
      const revoked = await confirmedFor(caller);
      if (revoked) return answer(revoked, CODE_TOOL_ID);
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
