/**
 * Progress over MCP, judged by the official client SDKs: a client that passes `onprogress` sends a
 * `progressToken`, and add-document of a long plan reports the tasks embedded as it goes (and
 * cluster-by-similarity its stages), on 2025-11-25 (SDK v1, through `initialize`) and on
 * 2026-07-28 (SDK v2). A call without a token gets no notifications and the same answer.
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../shared/core/contract.ts';
import { EMBED_BATCH_SIZE } from '../../functions/documents/lib/ingest.ts';
import { db, send, tenantC } from './helpers.ts';

/** What a progress notification carries, as either SDK hands it to `onprogress`. */
interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

interface ProgressClient {
  call(
    tool: string,
    args: Record<string, unknown>,
    onprogress?: (progress: Progress) => void,
  ): Promise<{ structuredContent?: unknown; isError?: boolean }>;
  close(): Promise<void>;
}

const url = new URL('http://edge-tools.test/mcp');

/** The transport options of a client whose answers' bodies are all kept in `bodies`, as sent. */
function recording(bodies: Promise<string>[]) {
  return {
    fetch: async (input: string | URL | Request, init?: RequestInit) => {
      const response = await send(new Request(input, init));
      bodies.push(response.clone().text());
      return response;
    },
    requestInit: { headers: { authorization: `Bearer ${tenantC.apiKey}` } },
  };
}

const SDKS = {
  'SDK v1 client, 2025-11-25': async (bodies: Promise<string>[]): Promise<ProgressClient> => {
    const client = new ClientV1({ name: 'edge-tools-test', version: '1.0.0' }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    await client.connect(new TransportV1(url, recording(bodies)));
    return {
      // v1 types its answer as a union with the 2024 result shape; this server answers the current one.
      call: (tool, args, onprogress) =>
        client.callTool({ name: tool, arguments: args }, undefined, onprogress && { onprogress }) as ReturnType<ProgressClient['call']>,
      close: () => client.close(),
    };
  },
  'SDK v2 client, 2026-07-28': async (bodies: Promise<string>[]): Promise<ProgressClient> => {
    const client = new ClientV2({ name: 'edge-tools-test', version: '2.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new TransportV2(url, recording(bodies)));
    return {
      call: (tool, args, onprogress) => client.callTool({ name: tool, arguments: args }, onprogress && { onprogress }),
      close: () => client.close(),
    };
  },
};

const clients: ProgressClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** A plan with `count` tasks: several embedding batches. */
function plan(count: number): string {
  return `# Launch\n${Array.from({ length: count }, (_, i) => `- [ ] Prepare launch step number ${i + 1} with the release team`).join('\n')}\n`;
}

async function storedTasks(documentId: string): Promise<number> {
  const { rows } = await db.execute(
    sql`select count(*)::int as n from tasks where document_id = ${documentId} and project_id = ${tenantC.projectId}`,
  );
  return (rows[0] as { n: number }).n;
}

/**
 * Several batches, the last one partial. A plan of 1,400 tasks (14 batches) is what people paste,
 * but storing its vectors in the local stand-in's HNSW index takes 100 to 130 s on a busy 2-core
 * machine: the same path is heard here batch by batch, on every batch.
 */
const TASKS = EMBED_BATCH_SIZE * 3 + 50;

describe.each(Object.entries(SDKS))('%s', (_name, connect) => {
  it('reports the tasks embedded of all as add-document goes, then answers', async () => {
    const bodies: Promise<string>[] = [];
    const client = await connect(bodies);
    clients.push(client);
    const received: Progress[] = [];
    const result = await client.call('add-document', { title: 'Long launch plan', content: plan(TASKS) }, (progress) =>
      received.push(progress),
    );

    const answer = result.structuredContent as ToolResult<{ document_id: string; task_count: number }>;
    expect(result.isError, JSON.stringify(answer)).toBeFalsy();
    expect(answer.success && answer.data.task_count).toBe(TASKS);
    expect(await storedTasks((answer as { data: { document_id: string } }).data.document_id)).toBe(TASKS);

    // One notification after each batch, in order (100, 200, 300, 350 of 350), each sent on the wire.
    const batches = Math.ceil(TASKS / EMBED_BATCH_SIZE);
    expect(received.map(({ progress }) => progress)).toEqual(
      Array.from({ length: batches }, (_, i) => Math.min((i + 1) * EMBED_BATCH_SIZE, TASKS)),
    );
    expect(received.every(({ total }) => total === TASKS)).toBe(true);
    expect(received.at(-1)).toMatchObject({ message: `${TASKS} of ${TASKS} tasks embedded` });
    expect((await Promise.all(bodies)).join('').match(/"method":"notifications\/progress"/g)).toHaveLength(batches);
  });

  it('reports the stages of cluster-by-similarity', async () => {
    const client = await connect([]);
    clients.push(client);
    const added = await client.call('add-document', { title: 'Small launch plan', content: plan(12) });
    const taskIds = (added.structuredContent as ToolResult<{ tasks: { task_id: string }[] }> & { success: true }).data.tasks.map(
      ({ task_id }) => task_id,
    );
    expect(taskIds.length).toBeGreaterThanOrEqual(2);
    const received: Progress[] = [];
    const clustered = await client.call('cluster-by-similarity', { task_ids: taskIds }, (progress) => received.push(progress));
    expect(clustered.isError, JSON.stringify(clustered.structuredContent)).toBeFalsy();
    expect(received.map(({ progress, total }) => [progress, total])).toEqual([
      [1, 2],
      [2, 2],
    ]);
  });

  it('sends no notifications to a call without a progress token, and answers the same', async () => {
    const bodies: Promise<string>[] = [];
    const client = await connect(bodies);
    clients.push(client);
    const result = await client.call('add-document', { title: 'Quiet launch plan', content: plan(TASKS) });
    const answer = result.structuredContent as ToolResult<{ document_id: string; task_count: number }>;
    expect(result.isError, JSON.stringify(answer)).toBeFalsy();
    expect(answer.success && answer.data.task_count).toBe(TASKS);
    expect(await storedTasks((answer as { data: { document_id: string } }).data.document_id)).toBe(TASKS);
    const answered = await Promise.all(bodies);
    expect(answered.some((body) => body.includes('"task_count":' + TASKS))).toBe(true);
    expect(answered.filter((body) => body.includes('notifications/progress'))).toEqual([]);
  });
});
