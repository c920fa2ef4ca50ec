/**
 * What the task-analysis tests share: three small documents (hiring, infrastructure, compliance)
 * added through the gateway as an agent adds them, in a project of the calling file's own. Files
 * run side by side, each adding its own copy: in tenant A the copies would rank the same (the same
 * texts embed the same), and a search could answer another file's copy first.
 */
import { sql } from 'drizzle-orm';
import { callTool, createTenant, db, tenantC } from './helpers.ts';

/** A tool's answer data, as the tests read it. */
export type Data = Record<string, any>;

export const HIRING = `# Hiring plan
We need to grow the platform team this quarter.
- [ ] Open the senior backend engineer role
- [ ] Interview backend engineer candidates after the senior backend engineer role is open
- [ ] Hire two backend engineers
- [ ] Onboard the new backend engineers
`;
export const INFRASTRUCTURE = `# Infrastructure
- [ ] Migrate the Postgres database to the new cluster
- [ ] Set up database replication and backups
- [ ] Load test the database cluster
`;
export const COMPLIANCE = `# Compliance
- [ ] Renew the SOC 2 audit with the auditor
- [ ] Collect SOC 2 audit evidence for access reviews
`;

/** Tests that load many similar tasks do it in tenant C, so searches over the file's project never rank them. */
export const heavy = tenantC;
/**
 * Documents of hundreds of tasks: every embedded task also enters the HNSW search index, which the
 * stand-in's pgvector (WASM, one thread) builds at about 100 tasks/s.
 */
export const HNSW_LOAD_TIMEOUT_MS = 30_000;

/** Every task id of a document, in order (answers list the first ones only). */
export async function taskIdsOf(documentId: string): Promise<string[]> {
  const { rows } = await db.execute(sql`select id from tasks where document_id = ${documentId} order by position`);
  return rows.map((row) => String(row.id));
}

/** The id of the task at `position` in an add-document answer. */
export const taskId = (document: Data, position: number): string => document.tasks[position].task_id;

/** Calls through the gateway with `defaultKey()` unless a key is given: the whole answer (`call`) or its data (`data`, which throws on a failure). */
export function callsWith(defaultKey: () => string) {
  const call = async (toolId: string, input: unknown, key = defaultKey()) => callTool<Data>(toolId, input, { key });
  async function data(toolId: string, input: unknown, key = defaultKey()): Promise<Data> {
    const { status, body } = await call(toolId, input, key);
    if (!body.success) throw new Error(`${toolId} failed with ${status}: ${body.message}`);
    return body.data;
  }
  return { call, data };
}

/** A project of its own (`name`, with a key) holding the three documents, as add-document answered them. */
export async function documentsProject(name: string) {
  const { projectId, apiKey } = await createTenant(name);
  const { data } = callsWith(() => apiKey);
  return {
    projectId,
    apiKey,
    hiring: await data('add-document', { title: 'Hiring plan', content: HIRING }),
    infrastructure: await data('add-document', { title: 'Infrastructure', content: INFRASTRUCTURE }),
    compliance: await data('add-document', { title: 'Compliance', content: COMPLIANCE }),
  };
}
