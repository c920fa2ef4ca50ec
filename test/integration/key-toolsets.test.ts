/**
 * An API key limited to the study toolset, tried on every surface: what each listing shows it
 * (MCP `tools/list` on `/mcp` and `/mcp/<toolsets>` through the official SDK client, `GET /tools`,
 * the OpenAI export, `/openapi.json`), and a documents tool called by every route (HTTP, MCP on
 * each URL, the records' read routes): 403 PERMISSION_DENIED naming the key's toolsets, and no row
 * written. A key of the same project without toolsets is listed and runs everything, as before.
 * The trace is read the same way: the limited key reads the executions, refusals and metrics of
 * its toolsets' tools only.
 * The expected ids come from the registry, grouped by toolset (toolset-ids.ts).
 */
import { count, eq } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { documents, toolCounters, toolExecutions, toolRefusals } from '../../drizzle/schema.ts';
import type { ToolResult } from '../../shared/core/contract.ts';
import { callTool, closeMcpClients, connectMcp, createKey, createProject, db, getJson, send } from './helpers.ts';
import { ALL_TOOLS, STUDY as STUDY_TOOLS } from './toolset-ids.ts';

const STUDY = [...STUDY_TOOLS].sort();

const ADD_DOCUMENT = { title: 'Limited keys', content: '# Limited keys\n- [ ] Try every route\n' };

let projectId: string;
let studyKey: string;
let fullKey: string;
let documentId: string;
let taskId: string;

beforeAll(async () => {
  projectId = await createProject('Key toolsets');
  studyKey = (await createKey(projectId, { toolsets: ['study'] })).key;
  fullKey = (await createKey(projectId)).key;
  const added = await callTool<{ document_id: string; tasks: { task_id: string }[] }>('add-document', ADD_DOCUMENT, { key: fullKey });
  if (!added.body.success) throw new Error(added.body.message);
  documentId = added.body.data.document_id;
  taskId = added.body.data.tasks[0]!.task_id;
  // A generous ceiling: on a busy machine the first call of a file waits for the isolate to warm.
}, 60_000);

async function documentRows(): Promise<number> {
  const [row] = await db.select({ n: count() }).from(documents).where(eq(documents.projectId, projectId));
  return row!.n;
}

afterEach(closeMcpClients);

async function mcpListed(path: string, key: string): Promise<string[]> {
  const { tools } = await (await connectMcp(path, key)).listTools();
  return tools.map((tool) => tool.name).sort();
}

/** The refusal of a documents tool to the study key, however it was reached. */
function expectStudyOnly(body: ToolResult<unknown>): void {
  expect(body.success).toBe(false);
  if (body.success) return;
  expect(body.error.code).toBe('PERMISSION_DENIED');
  expect(body.error.message).toContain('toolsets study only');
  expect(body.error.details).toMatchObject({ reason: 'toolset_not_granted', toolsets: ['study'] });
}

describe('a key limited to study is listed the study tools only', () => {
  it('by MCP tools/list on /mcp, /mcp/study and a URL naming study among others', async () => {
    expect(STUDY.length).toBeGreaterThan(0);
    expect(await mcpListed('/mcp', studyKey)).toEqual(STUDY);
    expect(await mcpListed('/mcp/study', studyKey)).toEqual(STUDY);
    expect(await mcpListed('/mcp/documents,study', studyKey)).toEqual(STUDY);
  });

  it('by GET /tools, the OpenAI export and /openapi.json, sent with the key', async () => {
    const catalog = await getJson<{ tools: { id: string; toolset: string }[] }>('/tools', studyKey);
    if (!catalog.body.success) throw new Error(catalog.body.message);
    expect(catalog.body.data.tools.map((tool) => tool.id).sort()).toEqual(STUDY);
    expect(new Set(catalog.body.data.tools.map((tool) => tool.toolset))).toEqual(new Set(['study']));

    const openai = await getJson<{ tools: { function: { name: string } }[] }>('/tools?format=openai', studyKey);
    if (!openai.body.success) throw new Error(openai.body.message);
    expect(openai.body.data.tools.map((tool) => tool.function.name).sort()).toEqual(STUDY);

    const response = await send(new Request('http://edge-tools.test/openapi.json', { headers: { authorization: `Bearer ${studyKey}` } }));
    const openapi = (await response.json()) as { paths: Record<string, unknown> };
    const toolPaths = Object.keys(openapi.paths).filter((path) => path.startsWith('/tools/'));
    expect(toolPaths.sort()).toEqual(STUDY.map((id) => `/tools/${id}`).sort());
  });

  it('and is refused a listing of another toolset, or of a tool outside study', async () => {
    expectStudyOnly((await getJson('/tools?toolset=documents', studyKey)).body);
    expectStudyOnly((await getJson('/tools?tool=add-document', studyKey)).body);
    expectStudyOnly((await getJson('/openapi.json?toolset=documents', studyKey)).body);
    // Asked for study and documents, it is listed what it may call.
    const both = await getJson<{ tools: { id: string }[] }>('/tools?toolset=documents,study', studyKey);
    expect(both.body.success && both.body.data.tools.map((tool) => tool.id).sort()).toEqual(STUDY);
  });

  it('while the public catalog and an unlimited key are listed every tool', async () => {
    for (const key of [undefined, fullKey]) {
      const catalog = await getJson<{ tools: { id: string }[] }>('/tools', key);
      expect(catalog.body.success && catalog.body.data.tools.map((tool) => tool.id)).toEqual(ALL_TOOLS);
    }
    expect(await mcpListed('/mcp', fullKey)).toEqual([...ALL_TOOLS].sort());
  });
});

describe('a key limited to study calling a documents tool', () => {
  it('is refused with 403 on every route, and nothing is written', async () => {
    const before = await documentRows();
    expect(before).toBe(1);

    const http = await callTool('add-document', ADD_DOCUMENT, { key: studyKey });
    expect(http.status).toBe(403);
    expectStudyOnly(http.body);

    for (const path of ['/mcp', '/mcp/study,documents']) {
      const result = await (await connectMcp(path, studyKey)).callTool({ name: 'add-document', arguments: ADD_DOCUMENT });
      expect(result.isError).toBe(true);
      expectStudyOnly(result.structuredContent as unknown as ToolResult<unknown>);
    }

    // A URL serving none of the key's toolsets is refused before the body is read.
    const onDocuments = await send(
      new Request('http://edge-tools.test/mcp/documents', {
        method: 'POST',
        headers: { authorization: `Bearer ${studyKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add-document', arguments: ADD_DOCUMENT } }),
      }),
    );
    expect(onDocuments.status).toBe(403);
    expectStudyOnly((await onDocuments.json()) as ToolResult<unknown>);

    for (const path of [`/documents/${documentId}`, `/tasks/${taskId}`]) {
      const read = await getJson(path, studyKey);
      expect(read.status).toBe(403);
      expectStudyOnly(read.body);
    }
    expect(await documentRows()).toBe(before);
  });

  it('runs a study tool; the unlimited key of the same project runs both and reads the records', async () => {
    const plans = await callTool('list-plans', {}, { key: studyKey });
    expect(plans.status).toBe(200);

    const before = await documentRows();
    const added = await callTool('add-document', { ...ADD_DOCUMENT, title: 'Unlimited key' }, { key: fullKey });
    expect(added.status).toBe(200);
    expect(await documentRows()).toBe(before + 1);
    expect((await getJson(`/documents/${documentId}`, fullKey)).status).toBe(200);
    expect((await getJson(`/tasks/${taskId}`, fullKey)).status).toBe(200);
  });
});

describe('a key limited to study sending a name nearly right', () => {
  it('is suggested only tools it may call, over HTTP and MCP', async () => {
    const http = await callTool('add_document', ADD_DOCUMENT, { key: studyKey });
    expect(http.status).toBe(404);
    if (http.body.success) throw new Error('expected UNKNOWN_TOOL');
    expect(http.body.error.code).toBe('UNKNOWN_TOOL');
    expect(http.body.error.message).not.toContain('add-document');
    expect((http.body.error.details?.available_tools as string[]).sort()).toEqual(STUDY);

    const mcp = await (await connectMcp('/mcp', studyKey)).callTool({ name: 'add_document', arguments: ADD_DOCUMENT });
    const envelope = mcp.structuredContent as unknown as ToolResult<unknown>;
    if (envelope.success) throw new Error('expected UNKNOWN_TOOL');
    expect(envelope.error.message).not.toContain('add-document');
    expect(envelope.error.details?.suggestions).toBeUndefined();

    // A study tool's near name is suggested to it.
    const near = await callTool('getDueFlashcards', {}, { key: studyKey });
    expect(near.body.success === false && near.body.error.details?.suggestions).toEqual(['get-due-flashcards']);
  });
});

describe('a key limited to study reading the trace', () => {
  /** Rows written straight into a project of its own: two tools of each toolset, executed and refused. */
  const executed = { 'add-document': crypto.randomUUID(), 'list-plans': crypto.randomUUID() };
  const refused = { 'add-document': crypto.randomUUID(), 'get-messages': crypto.randomUUID() };
  let traceProject: string;
  let studyReader: string;
  let fullReader: string;

  beforeAll(async () => {
    traceProject = await createProject('Key toolsets trace');
    studyReader = (await createKey(traceProject, { toolsets: ['study'] })).key;
    fullReader = (await createKey(traceProject)).key;
    const run = {
      status: 'success' as const,
      durationMs: 5,
      attempts: 1,
      queuedMs: 0,
      performanceWarning: false,
      input: { secret: 'only for its toolset' },
    };
    await db.insert(toolExecutions).values(Object.entries(executed).map(([tool, id]) => ({ id, projectId: traceProject, tool, ...run })));
    await db
      .insert(toolRefusals)
      .values(Object.entries(refused).map(([tool, id]) => ({ id, projectId: traceProject, tool, code: 'VALIDATION_ERROR' })));
    await db
      .insert(toolCounters)
      .values(Object.keys(executed).map((tool) => ({ projectId: traceProject, tool, name: 'calls', outcome: 'success', value: 3 })));
  });

  it('lists the executions and refusals of study tools only; the unlimited key lists both toolsets', async () => {
    const tools = async (path: string, key: string) => {
      const page = await getJson<{ executions?: { tool: string }[]; refusals?: { tool: string }[] }>(path, key);
      if (!page.body.success) throw new Error(page.body.message);
      return (page.body.data.executions ?? page.body.data.refusals ?? []).map((row) => row.tool).sort();
    };
    expect(await tools('/executions', studyReader)).toEqual(['list-plans']);
    expect(await tools('/refusals', studyReader)).toEqual(['get-messages']);
    expect(await tools('/executions', fullReader)).toEqual(['add-document', 'list-plans']);
    expect(await tools('/refusals', fullReader)).toEqual(['add-document', 'get-messages']);
  });

  it("reads one study execution whole, and another toolset's is not found", async () => {
    const own = await getJson<{ tool: string; input: unknown }>(`/executions/${executed['list-plans']}`, studyReader);
    expect(own.status).toBe(200);
    expect(own.body.success && own.body.data).toMatchObject({ tool: 'list-plans', input: { secret: 'only for its toolset' } });
    for (const id of [executed['add-document'], refused['add-document']]) {
      const other = await getJson(`/executions/${id}`, studyReader);
      expect(other.status).toBe(404);
      expect(other.body.success === false && other.body.message).not.toContain('add-document');
    }
    // The unlimited key reads the execution, and is told the refused call was refused.
    expect((await getJson(`/executions/${executed['add-document']}`, fullReader)).status).toBe(200);
    const refusal = await getJson(`/executions/${refused['add-document']}`, fullReader);
    expect(refusal.body.success === false && refusal.body.message).toContain('(add-document) was refused');
  });

  it('is refused a filter naming a tool of another toolset, by name and toolset', async () => {
    for (const path of [
      '/executions?tool=add-document',
      '/refusals?tool=add-document',
      '/metrics?tool=add-document',
      '/metrics?format=prometheus&tool=add-document',
    ]) {
      const answer = await getJson(path, studyReader);
      expect(answer.status).toBe(403);
      if (answer.body.success) throw new Error(`${path} answered success`);
      expect(answer.body.error.details).toMatchObject({ reason: 'toolset_not_granted', toolsets: ['study'], tool_toolset: 'documents' });
    }
  });

  it('counts study tools only in the metrics, JSON and Prometheus', async () => {
    const metrics = await getJson<{ totals: { calls: number; validation_refusals: number }; tools: { tool: string }[] }>(
      '/metrics',
      studyReader,
    );
    if (!metrics.body.success) throw new Error(metrics.body.message);
    expect(metrics.body.data.tools.map((row) => row.tool).sort()).toEqual(['get-messages', 'list-plans']);
    expect(metrics.body.data.totals).toMatchObject({ calls: 1, validation_refusals: 1 });
    const full = await getJson<{ totals: { calls: number } }>('/metrics', fullReader);
    expect(full.body.success && full.body.data.totals.calls).toBe(2);

    const scrape = async (key: string) =>
      (await send(new Request('http://edge-tools.test/metrics?format=prometheus', { headers: { authorization: `Bearer ${key}` } }))).text();
    const limited = await scrape(studyReader);
    expect(limited).toMatch(/edge_tools_tool_calls_total\{[^}]*tool="list-plans"[^}]*outcome="success"[^}]*\} 3\b/);
    expect(limited).not.toContain('tool="add-document"');
    expect(await scrape(fullReader)).toMatch(/edge_tools_tool_calls_total\{[^}]*tool="add-document"[^}]*outcome="success"[^}]*\} 3\b/);
  });
});
