/**
 * The shapes of one code-mode execution: what `POST /code` and MCP's `execute` take, and the data
 * of their success envelope. Kept apart from ./run.ts so that describing them (the OpenAPI
 * document, `tools/list` on /mcp/code) loads neither the sandbox nor the parser.
 */
import * as z from 'zod';
import { CODE_MODE_LIMITS } from './limits.ts';

/** An example of valid code, for error messages and the OpenAPI document. */
export const CODE_EXAMPLE =
  'async () => { const found = await tools.semanticSearch({ query: "login" }); return found.success ? found.data : found.error; }';

/** The input of an execution: `{ code }`, strictly. */
export const codeInput = z.strictObject({
  code: z.string().min(1).max(CODE_MODE_LIMITS.codeChars).describe('The source of one async arrow function, async () => { ... }.'),
});

/** One tool call the code made, as the answer lists it. */
const innerCall = z.object({
  tool: z.string().describe('The tool id.'),
  trace_id: z.string().describe("The call's own trace id (GET /executions/<trace_id>)."),
  success: z.boolean(),
  error_code: z.string().optional().describe('The error code, on failure.'),
  error_message: z.string().optional().describe("The error's message, on failure (cut to 300 characters)."),
  replayed: z.literal(true).optional().describe("The answer was an earlier call's, replayed for its idempotency key."),
});

/** The data of a successful execution. */
export const codeOutput = z.object({
  result: z
    .unknown()
    .describe(`What the code returned, as JSON; cut to about ${CODE_MODE_LIMITS.resultChars} characters (meta.truncated) when larger.`),
  calls: z.array(innerCall).describe('Every tool call the code made, in order.'),
  calls_refused: z.int().optional().describe(`Calls refused without running because the code had made ${CODE_MODE_LIMITS.innerCalls}.`),
  logs: z.array(z.string()).describe("The code's console output."),
  logs_dropped: z.int().optional().describe('Console lines left out, beyond the bound.'),
});

/** The data of `GET /code/types`. */
export const codeTypesOutput = z.object({
  declarations: z
    .string()
    .describe('TypeScript declarations of the tools the credential may call from code: input and output types, and the envelope.'),
});
