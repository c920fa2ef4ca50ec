/**
 * The calls bench/memory.ts sends, eight kinds in turn: a write, reads, an MCP tools/call, the
 * catalog, readiness, and two refusals, each with the answer it expects.
 */
import { MCP_VERSION, mcpToolCall } from './measure.ts';
import { generateCorpus, type CorpusOptions } from '../local/corpus.ts';

/** One kind of call: how it is sent, and whether its answer is the one expected. */
export interface CallKind {
  name: string;
  send(index: number): Promise<Response>;
  expected(response: Response): Promise<boolean>;
}

/**
 * The kinds of call, the i-th call being of kind i mod 8, against the gateway at `base` with
 * `apiKey`: `taskId` is a task of the project, and searches ask for the titles of `corpus`.
 */
export function callKinds(base: string, apiKey: string, taskId: string, corpus: CorpusOptions): CallKind[] {
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const queries = generateCorpus(corpus).map((document) => document.title);
  const tool = (id: string, input: unknown, headersOf = headers) =>
    fetch(`${base}/tools/${id}`, { method: 'POST', headers: headersOf, body: JSON.stringify(input) });
  const status =
    (...statuses: number[]) =>
    async (response: Response) => (await response.arrayBuffer(), statuses.includes(response.status));
  return [
    {
      name: 'log-mood (a new entry each)',
      // Each entry its own minute, so none collides with another.
      send: (i) =>
        tool('log-mood', {
          user_id: 'bench',
          mood: 'happy',
          energy_level: 1 + (i % 10),
          timestamp: new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString().replace('.000', ''),
        }),
      expected: status(200),
    },
    {
      name: 'semantic-search',
      send: (i) => tool('semantic-search', { query: queries[i % queries.length], limit: 5 }),
      expected: status(200),
    },
    { name: 'get-document-context', send: () => tool('get-document-context', { task_ids: [taskId] }), expected: status(200) },
    {
      name: `MCP tools/call of semantic-search (${MCP_VERSION}, stateless)`,
      send: (i) => {
        const call = mcpToolCall('semantic-search', { query: queries[i % queries.length], limit: 5 }, i);
        return fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, ...call.headers }, body: JSON.stringify(call.body) });
      },
      expected: async (response) =>
        response.ok && ((await response.json()) as { result?: { isError?: boolean } }).result?.isError === false,
    },
    { name: '`GET /tools`', send: () => fetch(`${base}/tools`), expected: status(200) },
    {
      name: 'log-mood refused (energy_level out of range: 400)',
      send: () => tool('log-mood', { user_id: 'bench', mood: 'happy', energy_level: 11, timestamp: '2025-01-01T00:00:00Z' }),
      expected: status(400),
    },
    {
      name: 'an unknown API key refused (401, then 429 once the address has failed too often)',
      send: () => tool('log-mood', {}, { ...headers, authorization: 'Bearer et_unknownbenchkey' }),
      expected: status(401, 429),
    },
    { name: '`GET /health/ready`', send: () => fetch(`${base}/health/ready`), expected: status(200) },
  ];
}

/** A task of the project, found by semantic-search. */
export async function firstTaskId(base: string, apiKey: string): Promise<string> {
  const response = await fetch(`${base}/tools/semantic-search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'plan', limit: 1 }),
  });
  const answer = (await response.json()) as { data?: { results?: { task_id: string }[] } };
  const id = answer.data?.results?.[0]?.task_id;
  if (!id) throw new Error(`semantic-search found no task: ${JSON.stringify(answer)}`);
  return id;
}
