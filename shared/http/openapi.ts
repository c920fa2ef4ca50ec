/**
 * The OpenAPI 3.1 document of the gateway (`GET /openapi.json`): every tool route with its input
 * schema as the request body and the envelope as the response, for the success and for every
 * error status, plus the catalog, health, code mode and observability routes (shared/http/openapi-routes.ts).
 * Generated from the same zod schemas the validator enforces, through the catalog's JSON Schemas
 * (`tool.jsonSchemas()`).
 */
import type { AnyTool } from '../core/tool.ts';
import { TOOLSETS } from '../core/toolsets.ts';
import { SERVER_INFO } from './base.ts';
import type { JsonSchema } from './compact-schema.ts';
import { embed, envelopeParts, failureEnvelopeSchema } from './envelope-schema.ts';
import { errorStatuses, idempotencyKeyParameter, operation, ref, refs } from './openapi-parts.ts';
import { accountPaths, codePaths, recordPaths, servicePaths, tracePaths } from './openapi-routes.ts';

/**
 * Builds the document for `tools` on first use; the returned function adds the server URL the
 * document was requested from.
 */
export function createOpenApiDocument(tools: readonly AnyTool[]): (serverUrl: string) => JsonSchema {
  let document: JsonSchema | undefined;
  return (serverUrl) => {
    document ??= buildDocument(tools);
    return { ...document, servers: [{ url: serverUrl }] };
  };
}

function buildDocument(tools: readonly AnyTool[]): JsonSchema {
  const parts = envelopeParts();
  const schemas: Record<string, JsonSchema> = {
    Meta: parts.meta,
    Link: parts.link,
    ToolError: parts.error,
    Failure: failureEnvelopeSchema(refs),
  };
  const paths: Record<string, JsonSchema> = {
    ...servicePaths(),
    ...codePaths(),
    ...tracePaths(),
    ...accountPaths(),
    ...recordPaths(schemas),
    ...toolPaths(tools, schemas),
  };
  return {
    openapi: '3.1.0',
    info: {
      title: SERVER_INFO.name,
      version: SERVER_INFO.version,
      description:
        'Validated tools for AI agents. Every answer is the envelope: { success: true, message, data, links?, meta } or ' +
        '{ success: false, message, error: { code, message, hint?, retryable, details? }, meta }. ' +
        `The same tools are served over MCP (Streamable HTTP) at POST /mcp, and by toolset at POST /mcp/<toolsets> (${TOOLSETS.join(', ')}; comma-separated for several). ` +
        'Code mode runs code that calls them: POST /code here, or the tools execute and describe at POST /mcp/code.',
    },
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: "Your project's API key: Authorization: Bearer et_..." },
      },
      schemas,
    },
  };
}

/** One route a tool, `POST /tools/<id>`; each tool's output schema goes into `schemas`. */
function toolPaths(tools: readonly AnyTool[], schemas: Record<string, JsonSchema>): Record<string, JsonSchema> {
  const paths: Record<string, JsonSchema> = {};
  for (const tool of tools) {
    const { input, output } = tool.jsonSchemas();
    schemas[`${tool.id}.data`] = embed(output, ref(`${tool.id}.data`).$ref);
    paths[`/tools/${tool.id}`] = {
      post: {
        ...operation(tool.id, tool.description, ref(`${tool.id}.data`), errorStatuses()),
        summary: tool.title,
        security: [{ apiKey: [] }],
        ...(tool.acceptsIdempotencyKey && { parameters: [idempotencyKeyParameter] }),
        requestBody: {
          required: true,
          // Inline, not a $ref: hosts that turn each operation into a tool pass this schema on as it is.
          content: { 'application/json': { schema: embed(input, '#'), example: tool.example } },
        },
      },
    };
  }
  return paths;
}
