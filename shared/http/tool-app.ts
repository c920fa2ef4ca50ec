/**
 * A tool's own worker (`npm run deploy -- <tool-id>`): the runtime of one tool, and nothing that
 * describes tools or reads traces. It serves
 * - `POST /`: the tool, through the same pipeline as the gateway (auth, validation, rate limit,
 *   slot, retries, idempotency, trace);
 * - `GET /documents/:id` and `GET /tasks/:id`, the records its answers link to by default, so that
 *   a link leads somewhere on the worker that gave it;
 * - `GET /health` and `GET /health/ready`.
 *
 * The catalog, OpenAPI, the OpenAI export, MCP and the observability routes are the gateway's:
 * deployed over the same database and Redis, it lists every tool and reads the traces of every
 * worker. Leaving them out keeps a tool's bundle, and the JavaScript each cold isolate parses,
 * to what running the tool needs.
 */
import type { AnyTool } from '../core/tool.ts';
import { baseApp, refuseOtherMethods, scopeOf } from './base.ts';
import { recordRoutes } from './records.ts';
import { served, serveToolCall, type ServeOptions } from './tool-route.ts';

/** The app of a worker serving `tool` alone (see the module comment for its routes). */
export function createToolApp(tool: AnyTool, serveOptions: ServeOptions = {}) {
  const options = served(serveOptions);
  const routesHint = `This worker runs the tool '${tool.id}': POST / with its input as a JSON body; GET /documents/<id>, GET /tasks/<id>, GET /health, GET /health/ready. The catalog, OpenAPI, MCP and the executions are served by the gateway (POST /tools/${tool.id} there).`;
  const app = baseApp({ tools: 1, routesHint, tool: tool.id })
    .post('/', (c) => serveToolCall(tool, c.req.raw, scopeOf(c), options))
    .route('/', recordRoutes(options));
  return refuseOtherMethods(app, routesHint);
}
