/**
 * Code mode's MCP server, behind `POST /mcp/code` (the endpoint is shared/http/mcp.ts's, loaded on
 * first use like the tools' server): two tools instead of one per tool.
 *
 * - `execute` `{ code }` runs an agent's code (shared/codemode/run.ts), the same execution and the
 *   same envelope as `POST /code`. Its description names every tool the credential may call, by
 *   toolset (about 4 tokens a tool).
 * - `describe` `{ tools? }` answers, for the tools named or all of them, each one's purpose and a
 *   call with its input and the data it answers, as compact types generated from the zod schemas
 *   the validator enforces (`GET /code/types` has the full TypeScript declarations).
 *
 * An idempotency key travels in `_meta["edge-tools/idempotency-key"]` of the `execute` call, as for
 * any tool; a `traceparent` in `_meta.traceparent` or the HTTP header.
 */
import { Server, type Tool as McpTool } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { DEFAULT_BODY_LIMIT_BYTES, screenInput } from '../core/body.ts';
import { fail, metaWithoutExecution, ok } from '../core/contract.ts';
import type { AnyTool } from '../core/tool.ts';
import { validateInput } from '../core/validation.ts';
import { camelCase } from '../codemode/dispatcher.ts';
import { CODE_MODE_LIMITS } from '../codemode/limits.ts';
import { runCode } from '../codemode/run.ts';
import { codeInput, type codeOutput } from '../codemode/schemas.ts';
import { SIGNATURES_LEGEND, toolIndex, toolSignatures } from '../codemode/types.ts';
import { deniedTool, type Caller } from '../auth/caller.ts';
import { IDEMPOTENCY_META_KEY } from '../core/idempotency-key.ts';
import { SERVER_INFO } from './base.ts';
import { compactSchema } from './compact-schema.ts';
import { serveMcp, toolCallOf, toolResult, TOOLS_LIST_CACHE, type McpRequest, type McpServer } from './mcp-server.ts';
import type { Served } from './tool-route.ts';

const INSTRUCTIONS =
  'Code mode: instead of one tool call per step, write one async arrow function that makes the calls, ' +
  "and get back only what it returns. execute's description names every tool; describe gives what each does, its input and the fields of its data. " +
  `Code that writes takes an idempotency key in the execute call's _meta "${IDEMPOTENCY_META_KEY}": sent again with the same key and code, its writes are not repeated.`;

/** The data of a successful execution. */
type CodeOutput = z.output<typeof codeOutput>;

/** The input of `describe`. */
const describeInput = z.strictObject({
  tools: z.array(z.string().min(1).max(100)).min(1).max(50).optional().describe('Ids or camelCase names.'),
});

/** Code mode's MCP server: `execute` and `describe` for code calling `tools`. */
export function createCodeMcpServer(tools: readonly AnyTool[], options: Served): McpServer {
  /** The tools the caller may call; every tool for a public listing (no caller), as any credential could be offered them. */
  const callable = (caller: Caller | undefined) => tools.filter((tool) => !caller || !deniedTool(caller, tool));
  const serverFor = ({ request, scope, calls, gate }: McpRequest): Server => {
    const caller = gate?.caller;
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: { listChanged: false } },
      instructions: INSTRUCTIONS,
      cacheHints: {
        'tools/list': { ...TOOLS_LIST_CACHE, cacheScope: caller?.toolsets || caller?.readOnly ? 'private' : 'public' },
        'server/discover': TOOLS_LIST_CACHE,
      },
    });
    server.setRequestHandler('tools/list', () => ({ tools: listedTools(callable(caller)) }));
    server.setRequestHandler('tools/call', async ({ params }, ctx) => {
      const sent = calls.get(ctx.mcpReq.id) ?? { arguments: params.arguments, meta: params._meta };
      if (!gate) {
        const refusal = fail(
          'UNAUTHENTICATED',
          'A tool call needs a credential: send Authorization: Bearer <API key or OAuth access token>.',
        );
        return toolResult(refusal, metaWithoutExecution(String(params.name).slice(0, 100)));
      }
      if (params.name === 'execute') {
        const { outcome, meta } = await runCode(tools, toolCallOf(sent, request, ctx.mcpReq.signal), gate, scope, options);
        const result = toolResult(outcome, meta);
        if (outcome.ok) result.content = [{ type: 'text', text: executedText(outcome.message, outcome.data as CodeOutput) }];
        return result;
      }
      if (params.name === 'describe') {
        const confirmed = await gate.confirm();
        if ('error' in confirmed) return toolResult(confirmed, metaWithoutExecution('describe'));
        const described = describe(callable(confirmed), sent.arguments ?? {});
        const result = toolResult(described, metaWithoutExecution('describe'));
        // The text a model reads is the lines themselves, not escaped into a JSON string.
        if (described.ok) result.content = [{ type: 'text', text: `${described.message}\n${described.data.types}` }];
        return result;
      }
      return toolResult(
        fail(
          'UNKNOWN_TOOL',
          `There is no tool '${String(params.name).slice(0, 100)}' on /mcp/code: it has execute and describe. The tools themselves are called from the code: tools["<id>"](input).`,
          {
            hint: 'Call execute with { "code": "async () => { ... }" }, or describe for the tools\' types.',
            details: { available_tools: ['execute', 'describe'] },
          },
        ),
        metaWithoutExecution(String(params.name).slice(0, 100)),
      );
    });
    return server;
  };
  return serveMcp(serverFor, options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES);
}

/** `tools/list` on /mcp/code for a caller who may call `callable`. */
export function listedTools(callable: readonly AnyTool[]): McpTool[] {
  return [
    {
      name: 'execute',
      title: 'Run code',
      description:
        'Runs an async arrow function (JavaScript) and answers what it returns; return only what you need. ' +
        'tools.<camelCaseId>(input) calls a tool, resolving to {success:true,data} or {success:false,error:{code,message,hint}}. ' +
        `Limits: ${CODE_MODE_LIMITS.innerCalls} calls (${CODE_MODE_LIMITS.concurrentInnerCalls} at once), ${CODE_MODE_LIMITS.wallTimeMs / 1000} s, ` +
        `${CODE_MODE_LIMITS.resultChars} characters of result; no network. describe gives inputs and data. Tools (* writes):\n` +
        toolIndex(callable),
      inputSchema: compactSchema(z.toJSONSchema(codeInput)) as McpTool['inputSchema'],
      annotations: { readOnlyHint: callable.every((tool) => tool.annotations.readOnlyHint), openWorldHint: false },
    },
    {
      name: 'describe',
      title: 'Describe tools',
      description: "Each named tool's purpose, input and data (all tools when none is named).",
      inputSchema: compactSchema(z.toJSONSchema(describeInput)) as McpTool['inputSchema'],
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
  ];
}

/**
 * The text a model reads of a successful execution: the message (how many calls, how many failed,
 * whether the result was cut), then the data as JSON, less what says nothing new: `logs` when the
 * code logged nothing, and `calls` when every call succeeded (the message counts them;
 * `structuredContent` keeps the whole envelope). A failed or refused call keeps them all in it.
 */
function executedText(message: string, data: CodeOutput): string {
  const { logs, calls, ...rest } = data;
  const shown = {
    ...rest,
    ...(calls.some((call) => !call.success) || data.calls_refused ? { calls } : {}),
    ...(logs.length ? { logs } : {}),
  };
  return `${message}\n${JSON.stringify(shown)}`;
}

/** The declarations of the tools `arguments` names, among those the caller may call. */
function describe(callable: readonly AnyTool[], args: unknown) {
  const hint = 'Example of a valid call: { "tools": ["semantic-search", "getDocumentContext"] }';
  const screened = screenInput(args, hint);
  if (!screened.ok) return screened;
  const input = validateInput(describeInput, screened.value, hint);
  if (!input.ok) return input;
  const named = input.value.tools;
  if (!named) return ok({ types: toolSignatures(callable) }, SIGNATURES_LEGEND);
  const chosen = named.map((name) => callable.find((tool) => tool.id === name || camelCase(tool.id) === name));
  const unknown = named.filter((_name, index) => !chosen[index]);
  if (unknown.length) {
    return fail(
      'UNKNOWN_TOOL',
      `No tool you may call is named ${unknown.map((name) => `'${name.slice(0, 60)}'`).join(', ')}. Tools: ${callable.map((tool) => tool.id).join(', ')}.`,
      {
        hint,
        details: { available_tools: callable.map((tool) => tool.id) },
      },
    );
  }
  const distinct = [...new Set(chosen as AnyTool[])];
  return ok({ types: toolSignatures(distinct) }, SIGNATURES_LEGEND);
}
