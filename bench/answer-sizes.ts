/**
 * Answer sizes: how many characters an agent reads back from each tool, for a typical call and for
 * the large cases (a 50-task-id context, a long document, a thousand tasks clustered), in the
 * concise and the detailed format, over HTTP (the envelope) and over MCP (the JSON-RPC answer of
 * `tools/call`: the envelope as structuredContent plus its text rendering).
 *
 * Every call goes through the real gateway (`createGateway(tools).fetch`, in this process) against a
 * fresh in-memory Neon stand-in holding the demo corpus of `npm run dev` (50 plans, 1,000 tasks,
 * offline embeddings), one long plan added with add-document, the relationships detect-dependencies
 * finds in it, and the study planner's demo data. Sizes are deterministic up to a few characters (durations and
 * generated ids vary in length by a digit or two), so one run is enough.
 *
 * `BEFORE` holds the figures of the same calls measured on the code before answer budgets existed;
 * they are printed next to this run's. Run with `npm run bench -- answer-sizes` (or
 * `node --import ./local/wasm-imports.ts bench/answer-sizes.ts`).
 */
import { sql } from 'drizzle-orm';
import { generateCorpus } from '../local/corpus.ts';
import { createProject, migrateDatabase } from '../local/database.ts';
import { startNeonStandIn } from '../local/neon-http.ts';
import { seedCorpus } from '../local/seed.ts';
import { seedStudy } from '../local/study-seed.ts';
import { tools } from '../functions/registry.ts';
import { createGateway } from '../shared/http/app.ts';
import type { Database } from '../shared/core/database.ts';
import { createDb } from '../shared/runtime/db.ts';

/** One measured call. */
interface Case {
  tool: string;
  /** What the call is, in words. */
  call: string;
  input: Record<string, unknown>;
  /** Whether the tool accepts response_format (the call is then measured in both formats). */
  formats: boolean;
  /** Runs before each format's call (e.g. to recreate what the call deletes). */
  prepare?: () => Promise<Record<string, unknown> | void>;
}

export interface SizeRow {
  tool: string;
  call: string;
  format: 'concise' | 'detailed' | '-';
  /** Characters of the HTTP answer, or an error code. */
  http: number | string;
  mcp: number | string;
}

/**
 * Characters of each answer before answer budgets, links and pagination: the same calls, measured on
 * the code of that time (`node bench/answer-sizes.ts --json` at commit ccc4bb4). A tool without
 * response_format then had one format: both of its rows show it.
 */
export const BEFORE: Record<string, { http: number | string; mcp: number | string }> = {
  'add-document | a typical plan (3,021 characters, 20 tasks) | concise': { http: 3568, mcp: 7272 },
  'add-document | a typical plan (3,021 characters, 20 tasks) | detailed': { http: 3568, mcp: 7272 },
  'add-document | the long plan (145,681 characters, 1400 tasks) | concise': { http: 215000, mcp: 443935 },
  'add-document | the long plan (145,681 characters, 1400 tasks) | detailed': { http: 215000, mcp: 443936 },
  'replace-document | a typical plan | concise': { http: 3575, mcp: 7279 },
  'replace-document | a typical plan | detailed': { http: 3575, mcp: 7279 },
  'delete-document | a typical plan | -': { http: 372, mcp: 661 },
  'embed-tasks | nothing pending | -': { http: 322, mcp: 568 },
  'semantic-search | "hire backend engineers", defaults | concise': { http: 543, mcp: 1011 },
  'semantic-search | "hire backend engineers", defaults | detailed': { http: 540, mcp: 1008 },
  'semantic-search | "hire backend engineers", limit 50, threshold 0 | concise': { http: 14381, mcp: 29585 },
  'semantic-search | "hire backend engineers", limit 50, threshold 0 | detailed': { http: 15057, mcp: 31036 },
  'get-document-context | one task of a typical plan | concise': { http: 6648, mcp: 13475 },
  'get-document-context | one task of a typical plan | detailed': { http: 7268, mcp: 14794 },
  'get-document-context | 50 tasks of 50 plans | concise': { http: 319340, mcp: 652464 },
  'get-document-context | 50 tasks of 50 plans | detailed': { http: 350340, mcp: 718465 },
  'get-document-context | one task of the long plan | concise': { http: 265815, mcp: 546334 },
  'get-document-context | one task of the long plan | detailed': { http: 309215, mcp: 638734 },
  'detect-dependencies | the 20 tasks of a typical plan | concise': { http: 10967, mcp: 22510 },
  'detect-dependencies | the 20 tasks of a typical plan | detailed': { http: 10964, mcp: 22510 },
  'detect-dependencies | 50 tasks of the long plan | concise': { http: 31535, mcp: 65108 },
  'detect-dependencies | 50 tasks of the long plan | detailed': { http: 31532, mcp: 65108 },
  'query-task-graph | depth 2 from a well-connected task | concise': { http: 19978, mcp: 41198 },
  'query-task-graph | depth 2 from a well-connected task | detailed': { http: 21658, mcp: 44719 },
  'query-task-graph | depth 10, limit 500 | concise': { http: 39875, mcp: 82369 },
  'query-task-graph | depth 10, limit 500 | detailed': { http: 43109, mcp: 89145 },
  'cluster-by-similarity | the 20 tasks of a typical plan | concise': { http: 2347, mcp: 4803 },
  'cluster-by-similarity | the 20 tasks of a typical plan | detailed': { http: 69893, mcp: 140088 },
  'cluster-by-similarity | 1000 tasks of 50 plans | concise': { http: 91840, mcp: 192405 },
  'cluster-by-similarity | 1000 tasks of 50 plans | detailed': { http: 3176789, mcp: 6372003 },
  'log-mood | its example | -': { http: 372, mcp: 670 },
  'submit-health-form | its example | -': { http: 408, mcp: 732 },
  'log-telegram-checkin | its example | -': { http: 399, mcp: 718 },
};

const TABLE_TOOLS = ['log-mood', 'submit-health-form', 'log-telegram-checkin'];

const key = (row: Pick<SizeRow, 'tool' | 'call' | 'format'>) => `${row.tool} | ${row.call} | ${row.format}`;

/** Runs every case and returns the rows. */
export async function measureAnswerSizes(): Promise<SizeRow[]> {
  const standIn = await startNeonStandIn();
  try {
    const url = standIn.connectionString;
    await migrateDatabase(url);
    const { projectId, apiKey } = await createProject(url, 'Answer sizes');
    log('seeding the demo corpus (50 plans, 1,000 tasks) and the study planner demo data...');
    await seedCorpus(url, projectId);
    await seedStudy(url, projectId);
    const calls = gatewayCalls(url, apiKey);
    const cases = casesOf(await prepareRecords(createDb(url), projectId, calls.data));
    return await measure(cases, calls);
  } finally {
    await standIn.close();
  }
}

/** What the cases call: a tool over HTTP or MCP (the answer's status and text), and its data when it succeeds. */
type GatewayCalls = ReturnType<typeof gatewayCalls>;

/** The gateway over every tool and the database at `url`, called with `apiKey`. */
function gatewayCalls(url: string, apiKey: string) {
  const gateway = createGateway(tools, { retryDelayMs: 10 });
  const pending: Promise<unknown>[] = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p), passThroughOnException() {}, props: {} };
  const env = { DATABASE_URL: url };
  const send = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await gateway.fetch(
      new Request(`http://127.0.0.1:8787${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
      env,
      ctx as unknown as Parameters<typeof gateway.fetch>[2],
    );
    const text = await response.text();
    await Promise.all(pending.splice(0));
    return { status: response.status, text };
  };
  const http = (tool: string, input: unknown) => send(`/tools/${tool}`, input);
  const mcp = (tool: string, input: unknown) =>
    send(
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: input } },
      { accept: 'application/json, text/event-stream' },
    );
  const data = async (tool: string, input: unknown) => {
    const { text } = await http(tool, input);
    const body = JSON.parse(text) as { success: boolean; data: any; message: string };
    if (!body.success) throw new Error(`${tool}: ${body.message}`);
    return body.data;
  };

  return { http, mcp, data };
}

/** The records the cases name: a long plan (with its dependencies detected), a typical plan, every task, a well-connected task. */
async function prepareRecords(db: Database, projectId: string, data: GatewayCalls['data']) {
  // A long plan (about 200,000 characters, 1,400 tasks), added as an agent would.
  const [long] = generateCorpus({ documents: 1, tasks: 1_400, seed: 7 });
  log(`adding a ${long!.content.length.toLocaleString('en')}-character plan...`);
  const longDocument = await data('add-document', { title: long!.title, content: long!.content });
  const longTaskIds: string[] = (
    await db.execute(sql`select id from tasks where document_id = ${longDocument.document_id} order by position`)
  ).rows.map((r: Record<string, unknown>) => String(r.id));
  log('detecting its dependencies in windows of 50 tasks...');
  for (let start = 0; start + 50 <= longTaskIds.length; start += 50)
    await data('detect-dependencies', { task_ids: longTaskIds.slice(start, start + 50) });

  const { rows: corpusDocuments } = await db.execute(sql`select d.id, d.title, d.content,
      (select array_agg(t.id::text order by t.position) from tasks t where t.document_id = d.id) as task_ids
    from documents d where d.project_id = ${projectId} and d.id <> ${longDocument.document_id} order by d.created_at, d.id`);
  const typical = corpusDocuments[0] as { id: string; title: string; content: string; task_ids: string[] };
  const oneTaskPerDocument = (corpusDocuments as { task_ids: string[] }[]).map((d) => d.task_ids[0]!).slice(0, 50);
  const allTaskIds = (
    await db.execute(sql`select id from tasks where project_id = ${projectId} and document_id <> ${longDocument.document_id} order by id`)
  ).rows.map((r: Record<string, unknown>) => String(r.id));
  const graphStart = String(
    (
      await db.execute(
        sql`select source_task_id from task_relationships where project_id = ${projectId} group by source_task_id order by count(*) desc, source_task_id limit 1`,
      )
    ).rows[0]!.source_task_id,
  );
  let scratch: string | undefined;
  const scratchDocument = async () => {
    scratch ??= (await data('add-document', { title: typical.title, content: typical.content })).document_id;
    return { document_id: scratch };
  };

  return {
    long: long!,
    longTaskIds,
    typical,
    oneTaskPerDocument,
    allTaskIds,
    graphStart,
    scratchDocument,
    resetScratch: () => (scratch = undefined),
  };
}

/** The cases: the task-analysis tools on the records, then every other tool with its example, in catalog order. */
function casesOf({
  long,
  longTaskIds,
  typical,
  oneTaskPerDocument,
  allTaskIds,
  graphStart,
  scratchDocument,
  resetScratch,
}: Awaited<ReturnType<typeof prepareRecords>>): Case[] {
  const cases: Case[] = [
    {
      tool: 'add-document',
      call: `a typical plan (${typical.content.length.toLocaleString('en')} characters, ${typical.task_ids.length} tasks)`,
      input: { title: typical.title, content: typical.content },
      formats: true,
    },
    {
      tool: 'add-document',
      call: `the long plan (${long.content.length.toLocaleString('en')} characters, ${longTaskIds.length} tasks)`,
      input: { title: long.title, content: long.content },
      formats: true,
    },
    {
      tool: 'replace-document',
      call: 'a typical plan',
      input: { title: typical.title, content: typical.content },
      formats: true,
      prepare: scratchDocument,
    },
    {
      tool: 'delete-document',
      call: 'a typical plan',
      input: {},
      formats: false,
      prepare: async () => (resetScratch(), scratchDocument()),
    },
    { tool: 'embed-tasks', call: 'nothing pending', input: {}, formats: false },
    { tool: 'semantic-search', call: '"hire backend engineers", defaults', input: { query: 'hire backend engineers' }, formats: true },
    {
      tool: 'semantic-search',
      call: '"hire backend engineers", limit 50, threshold 0',
      input: { query: 'hire backend engineers', limit: 50, threshold: 0 },
      formats: true,
    },
    { tool: 'get-document-context', call: 'one task of a typical plan', input: { task_ids: [typical.task_ids[0]] }, formats: true },
    { tool: 'get-document-context', call: '50 tasks of 50 plans', input: { task_ids: oneTaskPerDocument }, formats: true },
    { tool: 'get-document-context', call: 'one task of the long plan', input: { task_ids: [longTaskIds[0]] }, formats: true },
    {
      tool: 'detect-dependencies',
      call: `the ${typical.task_ids.length} tasks of a typical plan`,
      input: { task_ids: typical.task_ids },
      formats: true,
    },
    { tool: 'detect-dependencies', call: '50 tasks of the long plan', input: { task_ids: longTaskIds.slice(0, 50) }, formats: true },
    { tool: 'query-task-graph', call: 'depth 2 from a well-connected task', input: { task_id: graphStart, depth: 2 }, formats: true },
    { tool: 'query-task-graph', call: 'depth 10, limit 500', input: { task_id: graphStart, depth: 10, limit: 500 }, formats: true },
    {
      tool: 'cluster-by-similarity',
      call: `the ${typical.task_ids.length} tasks of a typical plan`,
      input: { task_ids: typical.task_ids },
      formats: true,
    },
    { tool: 'cluster-by-similarity', call: `${allTaskIds.length} tasks of 50 plans`, input: { task_ids: allTaskIds }, formats: true },
  ];
  // Every other tool (the table tools, the study planner) with its example, in catalog order.
  const covered = new Set(cases.map((c) => c.tool));
  for (const tool of tools) {
    if (!covered.has(tool.id))
      cases.push({
        tool: tool.id,
        call: 'its example',
        input: tool.example as Record<string, unknown>,
        formats: 'response_format' in tool.input.shape,
      });
  }

  return cases;
}

/** Each case in each of its formats, over HTTP and MCP: the answer's length in characters, or its error code. */
async function measure(cases: Case[], { http, mcp }: GatewayCalls): Promise<SizeRow[]> {
  const rows: SizeRow[] = [];
  let variant = 0;
  for (const c of cases) {
    for (const format of c.formats ? (['concise', 'detailed'] as const) : (['-'] as const)) {
      const row: SizeRow = { tool: c.tool, call: c.call, format, http: '', mcp: '' };
      for (const transport of ['http', 'mcp'] as const) {
        const extra = (await c.prepare?.()) ?? {};
        // A tool without response_format has one format only: both rows measure it.
        const hasFormats = format !== '-' && 'response_format' in tools.find((tool) => tool.id === c.tool)!.input.shape;
        let input: Record<string, unknown> = { ...c.input, ...extra, ...(hasFormats ? { response_format: format } : {}) };
        // Table tools may refuse a second row with the same key: vary the timestamps.
        if (TABLE_TOOLS.includes(c.tool)) input = withUniqueTime(input, ++variant);
        const answer = transport === 'http' ? await http(c.tool, input) : await mcp(c.tool, input);
        row[transport] = outcomeOf(answer.text, transport) ?? answer.text.length;
      }
      rows.push(row);
      log(`${row.tool} | ${row.call} | ${row.format}: ${row.http} / ${row.mcp}`);
    }
  }
  return rows;
}

/** The error code of a failed answer, or undefined for a success. */
function outcomeOf(text: string, transport: 'http' | 'mcp'): string | undefined {
  const parsed = JSON.parse(text) as {
    success?: boolean;
    error?: { code: string };
    result?: { structuredContent?: { success: boolean; error?: { code: string } } };
  };
  const envelope = transport === 'http' ? parsed : parsed.result?.structuredContent;
  if (!envelope) return 'no result';
  return envelope.success ? undefined : envelope.error!.code;
}

function withUniqueTime(input: Record<string, unknown>, n: number): Record<string, unknown> {
  const at = new Date(Date.UTC(2031, 0, 1) + n * 60_000).toISOString().replace('.000Z', 'Z');
  return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v) ? at : v]));
}

/** The rows as a markdown table, with the figures of {@link BEFORE} next to them. */
export function answerSizesMarkdown(rows: SizeRow[]): string {
  const cell = (value: number | string | undefined) =>
    value === undefined || value === '' ? 'n/a' : typeof value === 'number' ? value.toLocaleString('en') : value;
  return [
    'Characters of the answer to one call through the real gateway (HTTP: the envelope; MCP: the JSON-RPC answer of tools/call, ' +
      'whose text content repeats the data for clients that show text only), on the demo corpus of `npm run dev` plus a 145,681-character ' +
      'plan of 1,400 tasks, and the study planner demo data. Before: the same calls on the code before answer budgets (one format then: both rows show it; ' +
      'n/a: the tool did not exist). A cut answer is the first page; the rest comes through next_cursor. Each call runs over HTTP, then over MCP: ' +
      'an example that deletes its record finds it gone the second time (NOT_FOUND).',
    '',
    '| tool | call | format | HTTP before | HTTP now | MCP before | MCP now |',
    '|---|---|---|---:|---:|---:|---:|',
    ...rows.map((row) => {
      const before = BEFORE[key(row)];
      return `| ${row.tool} | ${row.call} | ${row.format} | ${cell(before?.http)} | ${cell(row.http)} | ${cell(before?.mcp)} | ${cell(row.mcp)} |`;
    }),
  ].join('\n');
}

function log(message: string): void {
  console.error(`[answer-sizes bench] ${message}`);
}

if (import.meta.main) {
  const rows = await measureAnswerSizes();
  console.log(answerSizesMarkdown(rows));
  if (process.argv.includes('--json'))
    console.log(JSON.stringify(Object.fromEntries(rows.map((row) => [key(row), { http: row.http, mcp: row.mcp }])), null, 2));
}
