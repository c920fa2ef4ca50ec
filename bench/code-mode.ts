/**
 * `npm run bench -- code-mode`: the seed story (search → the tasks' documents → their dependencies →
 * their clusters) on the demo corpus, run by an agent both ways against `wrangler dev`, side by
 * side: one tool call per step on `/mcp`, and one `execute` on `/mcp/code`. Counted for each: the
 * tokens the agent reads (the `tools/list` it is given, and the text of every answer it receives;
 * o200k_base, js-tiktoken), its model round trips (turns that send tool calls), and the wall time.
 *
 * The agents are written out here: the direct one calls the next step with ids from the last
 * answer, as a model would, sending the three steps that need only the search's ids in one turn;
 * the code-mode one reads `describe` for the four tools (execute's description names every tool;
 * describe gives their purposes, inputs and the fields of their data), then sends the whole story
 * (bench/code-mode-story.ts) in one `execute`, returning the summary a model would give. The
 * story's code uses no name that `tools/list` and `describe` show (test/unit/code-mode-types.test.ts
 * compiles it against them).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { getEncoding } from 'js-tiktoken';
import { openDemoData } from '../local/demo-data.ts';
import { startRedisServer, startUpstashStandIn } from '../local/upstash-rest.ts';
import { startWranglerDev } from '../local/wrangler-dev.ts';
import { injectRoundTrips } from './measure.ts';
import { QUERY, STORY } from './code-mode-story.ts';

const encoding = getEncoding('o200k_base');
const tokens = (value: unknown) => encoding.encode(typeof value === 'string' ? value : JSON.stringify(value)).length;

/** What an agent received from one way of running the story. */
interface Run {
  listTokens: number;
  answerTokens: number;
  /** Tokens of each answer's text, by tool called. */
  answers: Record<string, number>;
  roundTrips: number;
  wallMs: number;
  calls: number;
}

type ToolAnswer = { content: { type: string; text?: string }[]; structuredContent?: { success: boolean; data?: any; message: string } };

/** The text a client puts in the model's context for a tool result. */
const textOf = (answer: ToolAnswer) => answer.content.map((part) => part.text ?? '').join('\n');

async function connect(url: string, apiKey: string): Promise<Client> {
  const client = new Client({ name: 'code-mode-bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }),
  );
  return client;
}

async function direct(base: string, apiKey: string): Promise<Run> {
  const client = await connect(`${base}/mcp`, apiKey);
  const started = performance.now();
  const { tools } = await client.listTools();
  let answerTokens = 0;
  const answers: Record<string, number> = {};
  const call = async (name: string, args: Record<string, unknown>) => {
    const answer = (await client.callTool({ name, arguments: args })) as ToolAnswer;
    answers[name] = tokens(textOf(answer));
    answerTokens += answers[name];
    if (!answer.structuredContent?.success) throw new Error(`${name}: ${answer.structuredContent?.message}`);
    return answer.structuredContent.data;
  };
  // Turn 1: search. Turn 2: the three steps that need only its ids, in one turn.
  const found = await call('semantic-search', { query: QUERY, limit: 20 });
  const ids = (found.results as { task_id: string }[]).map((result) => result.task_id);
  await Promise.all([
    call('get-document-context', { task_ids: ids.slice(0, 3) }),
    call('detect-dependencies', { task_ids: ids }),
    call('cluster-by-similarity', { task_ids: ids }),
  ]);
  const wallMs = performance.now() - started;
  await client.close();
  return { listTokens: tokens({ tools }), answerTokens, answers, roundTrips: 2, wallMs, calls: 4 };
}

/** The code-mode agent: `describe` for the story's tools, then one `execute` (two turns). */
async function codeMode(base: string, apiKey: string): Promise<Run> {
  const client = await connect(`${base}/mcp/code`, apiKey);
  const started = performance.now();
  const { tools } = await client.listTools();
  const described = (await client.callTool({
    name: 'describe',
    arguments: { tools: ['semantic-search', 'get-document-context', 'detect-dependencies', 'cluster-by-similarity'] },
  })) as ToolAnswer;
  const executed = (await client.callTool({ name: 'execute', arguments: { code: STORY } })) as ToolAnswer;
  if (!executed.structuredContent?.success) throw new Error(`execute: ${textOf(executed)}`);
  const answers = { describe: tokens(textOf(described)), execute: tokens(textOf(executed)) };
  const wallMs = performance.now() - started;
  await client.close();
  return {
    listTokens: tokens({ tools }),
    answerTokens: answers.describe + answers.execute,
    answers,
    roundTrips: 2,
    wallMs,
    calls: executed.structuredContent.data.calls.length,
  };
}

/** Runs the story both ways on a `wrangler dev` of the demo data, and answers the markdown section. */
export async function runCodeModeBench(): Promise<string> {
  const { neon, demo } = await openDemoData();
  const redis = await startRedisServer();
  const upstash = redis ? await startUpstashStandIn({ redisPort: redis.port, token: crypto.randomUUID() }) : undefined;
  injectRoundTrips({ neon, upstash });
  const dev = await startWranglerDev({
    vars: {
      DATABASE_URL: neon.connectionString,
      ...(upstash && { UPSTASH_REDIS_REST_URL: upstash.url, UPSTASH_REDIS_REST_TOKEN: upstash.token }),
    },
  });
  try {
    // A first run of each warms the isolate and the embeddings; the second is measured.
    await direct(dev.url, demo.apiKey);
    await codeMode(dev.url, demo.apiKey);
    const one = await direct(dev.url, demo.apiKey);
    const described = await codeMode(dev.url, demo.apiKey);
    const total = (run: Run) => run.listTokens + run.answerTokens;
    const row = (name: string, run: Run) =>
      `| ${name} | ${run.calls} | ${run.listTokens.toLocaleString('en')} | ${run.answerTokens.toLocaleString('en')} | ${total(run).toLocaleString('en')} | ${run.roundTrips} | ${Math.round(run.wallMs)} |`;
    const parts = (run: Run) =>
      Object.entries(run.answers)
        .map(([name, count]) => `${name} ${count.toLocaleString('en')}`)
        .join(', ');
    return [
      '## Code mode: the seed story both ways',
      '',
      `Measured with \`npm run bench -- code-mode\` on \`wrangler dev\` and the demo corpus (50 documents, 1,000 tasks): semantic-search for "${QUERY}" (20 tasks), then their documents (the first 3 tasks'), dependencies and clusters. Tokens are o200k_base (js-tiktoken) of what the agent reads: the \`tools/list\` it is given and the text of every answer. Round trips are the model turns that send tool calls.`,
      '',
      '| way | tool calls | tools/list tokens | answer tokens | tokens read | round trips | wall ms |',
      '|---|---|---|---|---|---|---|',
      row('one call per step (/mcp)', one),
      row('code mode, describe then execute', described),
      '',
      `Code mode reads ${(total(one) / total(described)).toFixed(1)}× fewer tokens: the whole \`tools/list\` of /mcp/code (execute's description names every tool by toolset), \`describe\` for the four tools (purpose, input, the fields of the data) and the text of the \`execute\` answer, what the story's code returns (bench/code-mode-story.ts). The direct agent's figure is its best case: the three steps after the search sent in one turn; one call per turn takes four round trips.`,
      '',
      `Answer tokens by call: one call per step: ${parts(one)}; code mode: ${parts(described)}.`,
      '',
    ].join('\n');
  } finally {
    dev.stop();
    await upstash?.close();
    await redis?.stop();
    await neon.close();
  }
}
