/**
 * Code mode's MCP server, behind `POST /mcp/code` (the endpoint is shared/http/mcp.ts's, loaded on
 * first use like the tools' server): two tools instead of one per tool.
 *
 * - `execute` `{ code }` runs an agent's code (shared/codemode/run.ts), the same execution and the
 *   same envelope as `POST /code`. Its description lists every tool the credential may call, one
 *   line each with its input type, so every tool is reachable from the list alone at about 30
 *   tokens a tool.
 * - `describe` `{ tools? }` answers the TypeScript declarations (input and output types, generated
 *   from the zod schemas the validator enforces) of the tools named, or of all of them.
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
import { codeInput } from '../codemode/schemas.ts';
import { TOOL_INDEX_LEGEND, toolDeclarations, toolIndex } from '../codemode/types.ts';
import { deniedTool, type Caller } from '../auth/caller.ts';
import { duplicateKeyFailure } from '../core/duplicate-keys.ts';
import { IDEMPOTENCY_META_KEY } from '../core/idempotency-key.ts';
import { keyFromMeta } from '../runtime/idempotency.ts';
import { SERVER_INFO } from './base.ts';
import { compactSchema } from './compact-schema.ts';
import { serveMcp, toolResult, traceparentOf, TOOLS_LIST_CACHE, type McpRequest, type McpServer } from './mcp-server.ts';
import type { Served } from './tool-route.ts';

const INSTRUCTIONS =
  'Code mode: instead of one tool call per step, write one async arrow function that makes the calls, ' +
  "and get back only what it returns. execute's description gives each tool's input type; describe gives what each does and the fields of its data. " +
  `Code that writes takes an idempotency key in the execute call's _meta "${IDEMPOTENCY_META_KEY}": sent again with the same key and code, its writes are not repeated.`;

/** The input of `describe`. */
const describeInput = z.strictObject({
  tools: z
    .array(z.string().min(1).max(100))
    .min(1)
    .max(50)
    .optional()
    .describe('Tool ids or camelCase names; all the tools you may call when absent.'),
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
        const { outcome, meta } = await runCode(
          tools,
          {
            readInput: async (hint) =>
              sent.duplicate ? duplicateKeyFailure(sent.duplicate, hint) : screenInput(sent.arguments ?? {}, hint),
            idempotencyKey: keyFromMeta(sent.meta),
            traceparent: traceparentOf(sent.meta) ?? request.headers.get('traceparent'),
            signal: AbortSignal.any([request.signal, ctx.mcpReq.signal]),
            origin: new URL(request.url).origin,
          },
          gate,
          scope,
          options,
        );
        const result = toolResult(outcome, meta);
        if (outcome.ok) result.content = [{ type: 'text', text: executedText(outcome.message, outcome.data) }];
        return result;
      }
      if (params.name === 'describe') {
        const confirmed = await gate.confirm();
        if ('error' in confirmed) return toolResult(confirmed, metaWithoutExecution('describe'));
        const described = describe(callable(confirmed), sent.arguments ?? {});
        const result = toolResult(described, metaWithoutExecution('describe'));
        // The text a model reads is the declarations as TypeScript, not escaped into a JSON string.
        if (described.ok) result.content = [{ type: 'text', text: `${described.message}\n${described.data.declarations}` }];
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
      title: 'Run code that calls the tools',
      description:
        'Runs one async arrow function (JavaScript) and answers what it returns. In it, tools["<id>"](input) or tools.<camelCaseId>(input) ' +
        'runs a tool through the full pipeline and resolves to its envelope {success, message, data|error, meta}: failures are values. ' +
        'Return only what you need: the answer is data.result, with data.calls and data.logs. ' +
        `Limits: ${CODE_MODE_LIMITS.innerCalls} calls (${CODE_MODE_LIMITS.concurrentInnerCalls} at once), ${CODE_MODE_LIMITS.wallTimeMs / 1000} s, ` +
        `${CODE_MODE_LIMITS.resultChars} characters of result; no network. describe gives each tool's purpose and full types. ${TOOL_INDEX_LEGEND}\n` +
        toolIndex(callable),
      inputSchema: compactSchema(z.toJSONSchema(codeInput)) as McpTool['inputSchema'],
      annotations: { readOnlyHint: callable.every((tool) => tool.annotations.readOnlyHint), openWorldHint: false },
    },
    {
      name: 'describe',
      title: 'Types of the tools',
      description:
        'TypeScript declarations of the tools named: input types with their docs, output types, and the envelope every call returns.',
      inputSchema: compactSchema(z.toJSONSchema(describeInput)) as McpTool['inputSchema'],
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
  ];
}

/**
 * The text a model reads of a successful execution: the message, then the data as JSON, without
 * `logs` when the code logged nothing. The message says whether the result was cut, and how to get
 * the rest.
 */
function executedText(message: string, data: unknown): string {
  const { logs, ...rest } = data as { logs?: unknown[] };
  return `${message}\n${JSON.stringify(logs?.length ? data : rest)}`;
}

/** The declarations of the tools `arguments` names, among those the caller may call. */
function describe(callable: readonly AnyTool[], args: unknown) {
  const hint = 'Example of a valid call: { "tools": ["semantic-search", "getDocumentContext"] }';
  const screened = screenInput(args, hint);
  if (!screened.ok) return screened;
  const input = validateInput(describeInput, screened.value, hint);
  if (!input.ok) return input;
  const named = input.value.tools;
  if (!named)
    return ok({ declarations: toolDeclarations(callable) }, `Declarations of the ${callable.length} tools you may call from code.`);
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
  return ok({ declarations: toolDeclarations(distinct) }, `Declarations of ${distinct.map((tool) => tool.id).join(', ')}.`);
}
