/**
 * Code mode through the real gateway: `POST /code` and `execute` on `POST /mcp/code` run an
 * agent's code in a Worker Loader sandbox, and every `tools[...]()` inside it is a real call of the
 * pipeline under the caller's scope. Judged by what the database holds afterwards (rows written,
 * trace rows linked to the execution), not by what the answer says of itself.
 */
import { eq } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { toolExecutions, toolRefusals } from '../../drizzle/schema.ts';
import { tools as registry } from '../../functions/registry.ts';
import { callTool, closeMcpClients, connectMcp, countTokens, createKey, createProject, db, getJson, moodRows } from './helpers.ts';
import { runCodeOver, waitForRows } from './code-mode-helpers.ts';

let projectId: string;
let fullKey: string;
let studyKey: string;

const mood = (userId: string, timestamp = '2030-05-01T10:00:00Z') => ({ user_id: userId, mood: 'happy', energy_level: 7, timestamp });

beforeAll(async () => {
  projectId = await createProject('Code mode');
  fullKey = (await createKey(projectId)).key;
  studyKey = (await createKey(projectId, { toolsets: ['study'] })).key;
}, 60_000);

afterEach(closeMcpClients);

describe('POST /code', () => {
  it('runs a workflow of tool calls and answers with the result, each call, and the logs', async () => {
    const userId = `cm-${crypto.randomUUID()}`;
    const code = `async () => {
      const logged = await tools["log-mood"](${JSON.stringify(mood(userId))});
      const plans = await tools.listPlans({ limit: 5 });
      console.log("logged", logged.success);
      return { logged: logged.success, id: logged.data?.id ?? null, plans: plans.success };
    }`;
    const { status, body } = await runCodeOver('http', code, { key: fullKey });
    expect(status).toBe(200);
    if (!body.success) throw new Error(body.message);
    const data = body.data as {
      result: { logged: boolean; plans: boolean };
      calls: { tool: string; trace_id: string; success: boolean }[];
      logs: string[];
    };
    expect(data.result).toMatchObject({ logged: true, plans: true });
    expect(data.calls.map((call) => [call.tool, call.success])).toEqual([
      ['log-mood', true],
      ['list-plans', true],
    ]);
    expect(data.logs).toEqual(['logged true']);
    expect(await moodRows(projectId, userId)).toBe(1);
    // The execution and each inner call are trace rows; the inner ones name the execution.
    const rows = await waitForRows(
      async () => db.select().from(toolExecutions).where(eq(toolExecutions.parentExecutionId, body.meta.trace_id)),
      2,
    );
    expect(rows.map((row) => row.id).sort()).toEqual(data.calls.map((call) => call.trace_id).sort());
    const [execution] = await waitForRows(async () => db.select().from(toolExecutions).where(eq(toolExecutions.id, body.meta.trace_id)), 1);
    expect(execution!.tool).toBe('code');
    // The inner calls' spans are children of the execution's span, in its trace.
    for (const row of rows) {
      expect(row.otelTraceId).toBe(execution!.otelTraceId);
      expect(row.otelParentSpanId).toBe(execution!.otelSpanId);
    }
    const listed = await getJson<{ executions: { trace_id: string }[] }>(`/executions?execution=${body.meta.trace_id}`, fullKey);
    expect(listed.body.success && listed.body.data.executions.map((row) => row.trace_id).sort()).toEqual(
      data.calls.map((call) => call.trace_id).sort(),
    );
    const detail = await getJson<{ execution_id: string | null }>(`/executions/${data.calls[0]!.trace_id}`, fullKey);
    expect(detail.body.success && detail.body.data.execution_id).toBe(body.meta.trace_id);
  });

  it('names the line and column of a syntax error, and runs nothing', async () => {
    const { status, body } = await runCodeOver('http', 'async () => {\n  const x = ;\n}', { key: fullKey });
    expect(status).toBe(400);
    if (body.success) throw new Error('expected a failure');
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.message).toContain('line 2, column 13');
  });

  it('answers an exception thrown by the code as a failure naming it, with the calls made before', async () => {
    const { status, body } = await runCodeOver(
      'http',
      'async () => { await tools.listPlans({ limit: 1 }); throw new TypeError("no plans to study"); }',
      { key: fullKey },
    );
    expect(status).toBe(400);
    if (body.success) throw new Error('expected a failure');
    expect(body.error.message).toContain('TypeError: no plans to study');
    expect(body.error.details).toMatchObject({ reason: 'code_threw', calls: [{ tool: 'list-plans', success: true }] });
  });

  it("runs a study-only key's code under its scope: log-mood is PERMISSION_DENIED and nothing is written", async () => {
    const userId = `cm-${crypto.randomUUID()}`;
    const code = `async () => { const r = await tools.logMood(${JSON.stringify(mood(userId))}); return { success: r.success, code: r.error?.code }; }`;
    const { body } = await runCodeOver('http', code, { key: studyKey });
    if (!body.success) throw new Error(body.message);
    expect((body.data as { result: unknown }).result).toEqual({ success: false, code: 'PERMISSION_DENIED' });
    expect(await moodRows(projectId, userId)).toBe(0);
    // The refusal is recorded, linked to the execution.
    const refusals = await waitForRows(
      async () => db.select().from(toolRefusals).where(eq(toolRefusals.parentExecutionId, body.meta.trace_id)),
      1,
    );
    expect(refusals[0]).toMatchObject({ tool: 'log-mood', code: 'PERMISSION_DENIED' });
  });

  it('writes nothing twice when the same keyed code is sent again: the second answer replays', async () => {
    const userId = `cm-${crypto.randomUUID()}`;
    const code = `async () => {
      const a = await tools.logMood(${JSON.stringify(mood(userId, '2030-05-02T10:00:00Z'))});
      const b = await tools.logMood(${JSON.stringify(mood(userId, '2030-05-03T10:00:00Z'))});
      return [a.success, b.success, a.meta.replayed ?? false];
    }`;
    const key = `code-${crypto.randomUUID()}`;
    const first = await runCodeOver('http', code, { key: fullKey, idempotencyKey: key });
    const second = await runCodeOver('http', code, { key: fullKey, idempotencyKey: key });
    if (!first.body.success || !second.body.success) throw new Error(`${first.body.message} / ${second.body.message}`);
    expect((first.body.data as { result: unknown }).result).toEqual([true, true, false]);
    expect((second.body.data as { result: unknown }).result).toEqual([true, true, true]);
    expect(second.body.meta.replayed).toBe(true);
    expect(await moodRows(projectId, userId)).toBe(2);
    // Without a key, the same code runs again: the entries exist, so the tool answers CONFLICT, and still nothing is duplicated.
    const third = await runCodeOver('http', code, { key: fullKey });
    if (!third.body.success) throw new Error(third.body.message);
    expect((third.body.data as { result: unknown[] }).result.slice(0, 2)).toEqual([false, false]);
    expect(await moodRows(projectId, userId)).toBe(2);
  });
});

describe('POST /mcp/code', () => {
  it('lists execute and describe, and execute answers what POST /code answers', async () => {
    const client = await connectMcp('/mcp/code', fullKey);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['execute', 'describe']);
    // Every tool is reachable from code, and what the agent reads to know it costs at most 1,500 tokens.
    const tokens = await countTokens(JSON.stringify({ tools }));
    expect(tokens).toBeLessThanOrEqual(1_500);
    // The index: a line per toolset naming its tools, * after those that write.
    const index = tools[0]!.description!.split('\n').slice(1);
    const named = index.flatMap((line) => line.slice(line.indexOf(': ') + 2).split(', '));
    expect(named.map((id) => id.replace(/\*$/, '')).sort()).toEqual(registry.map((tool) => tool.id).sort());
    for (const tool of registry) expect(named, tool.id).toContain(`${tool.id}${tool.annotations.readOnlyHint ? '' : '*'}`);
    const result = await client.callTool({
      name: 'execute',
      arguments: { code: 'async () => { const r = await tools.listPlans({ limit: 1 }); return r.success; }' },
    });
    const envelope = result.structuredContent as { success: boolean; data: { result: unknown; calls: unknown[]; logs: string[] } };
    expect(envelope.success).toBe(true);
    expect(envelope.data.result).toBe(true);
    expect(envelope.data.calls).toHaveLength(1);
    expect(envelope.data.logs).toEqual([]);
    // The text a model reads: the message, then the data, empty logs and calls that all succeeded left out.
    const [message, json] = (result.content as { text: string }[])[0]!.text.split('\n');
    expect(message).toBe('The code ran: 1 tool call.');
    expect(JSON.parse(json!)).toEqual({ result: true });
    // Logs, when the code wrote some, are in it.
    const logged = await client.callTool({ name: 'execute', arguments: { code: 'async () => { console.log("hi"); return 1; }' } });
    const text = (logged.content as { text: string }[])[0]!.text;
    expect(text.split('\n')[0]).toBe('The code ran: 0 tool calls.');
    expect(JSON.parse(text.split('\n')[1]!)).toEqual({ result: 1, logs: ['hi'] });
    // A failed call: the text has every call, the failed one with its error.
    const failing = await client.callTool({
      name: 'execute',
      arguments: {
        code: 'async () => { await tools.listPlans({ limit: 1 }); const r = await tools.logMood({ mood: "happy" }); return r.success; }',
      },
    });
    const [failedMessage, failedJson] = (failing.content as { text: string }[])[0]!.text.split('\n');
    expect(failedMessage).toBe('The code ran: 2 tool calls, 1 failed.');
    expect(JSON.parse(failedJson!)).toMatchObject({
      result: false,
      calls: [
        { tool: 'list-plans', success: true },
        { tool: 'log-mood', success: false, error_code: 'VALIDATION_ERROR' },
      ],
    });
  });

  it("describes the tools named: each one's purpose, then its input and the fields of its data", async () => {
    const client = await connectMcp('/mcp/code', studyKey);
    const described = await client.callTool({ name: 'describe', arguments: { tools: ['listPlans', 'get-messages'] } });
    const lines = (described.content as { text: string }[])[0]!.text.split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/^Per tool: /);
    expect(lines[1]).toBe(`// ${registry.find((tool) => tool.id === 'list-plans')!.purpose}`);
    expect(lines[2]).toMatch(/^list-plans\(\{.*limit\?:int.*\}\) => \{plans:\{.*\}\[\],next_cursor\}$/);
    expect(lines[4]).toMatch(/^get-messages\(\{session_id:string\|int;/);
  });

  it('lists only what the credential may call, in execute and describe', async () => {
    const client = await connectMcp('/mcp/code', studyKey);
    const { tools } = await client.listTools();
    expect(tools[0]!.description).not.toContain('log-mood');
    const described = await client.callTool({ name: 'describe', arguments: { tools: ['logMood'] } });
    expect((described.structuredContent as { error: { code: string } }).error.code).toBe('UNKNOWN_TOOL');
  });
});

it('answers GET /code/types with declarations of the tools the key may call', async () => {
  const { body } = await getJson<{ declarations: string }>('/code/types', studyKey);
  if (!body.success) throw new Error(body.message);
  expect(body.data.declarations).toContain('"list-plans"(input: ListPlansInput)');
  expect(body.data.declarations).not.toContain('log-mood');
  // And the direct route still works for the same key.
  expect((await callTool('list-plans', { limit: 1 }, { key: studyKey })).status).toBe(200);
});
