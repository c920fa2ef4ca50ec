/**
 * `npm run keys` against the Neon stand-in, judged by the gateway itself: a created key works, a
 * revoked key is refused (the worker's own authentication is the judge, not the command's output).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import logMood from '../../functions/table-tools/log-mood.ts';
import { createKey, createProjectWithKey, listKeys, revokeKey } from '../../local/keys.ts';
import { createProject, migrateDatabase } from '../../local/database.ts';
import { startNeonStandIn, type NeonStandIn } from '../../local/neon-http.ts';
import { createGateway } from '../../shared/http/app.ts';
import { createDb } from '../../shared/runtime/db.ts';

let neon: NeonStandIn;
let projectId: string;
const gateway = createGateway([logMood], { auth: { recheckAfterMs: 0 } });

beforeAll(async () => {
  neon = await startNeonStandIn();
  await migrateDatabase(neon.connectionString);
  ({ projectId } = await createProject(neon.connectionString, 'Keys project'));
  // PGlite takes over a minute to start on a busy 2-core machine: a generous ceiling.
}, 240_000);
afterAll(async () => {
  await neon?.close();
});

/** A log-mood call through the gateway, in process (local: the in-process semaphore). */
async function statusWith(key: string): Promise<number> {
  const pending: Promise<unknown>[] = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p), passThroughOnException() {}, props: {} };
  const response = await gateway.fetch(
    new Request('http://edge-tools.test/tools/log-mood', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...logMood.example, user_id: `user_${crypto.randomUUID().slice(0, 8)}` }),
    }),
    { DATABASE_URL: neon.connectionString },
    ctx as unknown as Parameters<typeof gateway.fetch>[2],
  );
  await Promise.all(pending);
  return response.status;
}

/** `npm run keys -- <args>` on the stand-in. */
const run = (...args: string[]) =>
  promisify(execFile)(process.execPath, ['local/keys.ts', ...args], { env: { ...process.env, DATABASE_URL: neon.connectionString } });

describe('npm run keys', () => {
  it('creates a key that works, lists it, and revokes it by prefix: the worker refuses it at once', async () => {
    const db = createDb(neon.connectionString);
    const created = await createKey(db, 'Keys project', { name: 'ci' });
    expect(created.key).toMatch(/^et_[A-Za-z0-9_-]{43}$/);
    expect(await statusWith(created.key)).toBe(200);

    const listed = await listKeys(db, projectId);
    expect(listed.find((k) => k.id === created.id)).toMatchObject({
      prefix: created.key.slice(0, 8),
      name: 'ci',
      project: 'Keys project',
      revokedAt: null,
    });
    expect(JSON.stringify(listed)).not.toContain(created.key);

    await revokeKey(db, created.key.slice(0, 8));
    expect(await statusWith(created.key)).toBe(401);
    expect((await listKeys(db, 'Keys project')).find((k) => k.id === created.id)!.revokedAt).toBeInstanceOf(Date);
    await expect(revokeKey(db, created.id)).rejects.toThrow(/No live key/);
  });

  it('revokes by id or by the key itself, and refuses an unknown project', async () => {
    const db = createDb(neon.connectionString);
    const [a, b] = [await createKey(db, projectId), await createKey(db, projectId)];
    await revokeKey(db, a.id);
    await revokeKey(db, b.key);
    expect(await statusWith(a.key)).toBe(401);
    expect(await statusWith(b.key)).toBe(401);
    await expect(createKey(db, 'No such project')).rejects.toThrow(/No project 'No such project'/);
  });

  it('creates a new project (another tenant) with its first key, and refuses a name already taken', async () => {
    const db = createDb(neon.connectionString);
    const name = `Tenant ${crypto.randomUUID().slice(0, 8)}`;
    const created = await createProjectWithKey(neon.connectionString, name);
    expect(created.projectId).not.toBe(projectId);
    expect(await statusWith(created.key)).toBe(200);
    expect(await listKeys(db, name)).toMatchObject([{ project: name, revokedAt: null }]);
    await expect(createProjectWithKey(neon.connectionString, name)).rejects.toThrow(/exists already/);
    // Keys are then added to it as to any project.
    expect(await statusWith((await createKey(db, name)).key)).toBe(200);
  });

  it('limits a key to toolsets: the worker refuses the tools outside them, and list shows them', async () => {
    const db = createDb(neon.connectionString);
    const study = await createKey(db, 'Keys project', { toolsets: 'Study' });
    const tables = await createKey(db, 'Keys project', { toolsets: 'study, table_tools' });
    expect(study.toolsets).toEqual(['study']);
    expect(tables.toolsets).toEqual(['table-tools', 'study']);
    // log-mood belongs to table-tools.
    expect(await statusWith(study.key)).toBe(403);
    expect(await statusWith(tables.key)).toBe(200);
    const listed = await listKeys(db, projectId);
    expect(listed.find((k) => k.id === study.id)?.toolsets).toEqual(['study']);
    expect(listed.find((k) => k.id === tables.id)?.toolsets).toEqual(['table-tools', 'study']);
    // A key created without --toolsets reaches every toolset.
    expect(listed.find((k) => k.name === 'ci')?.toolsets).toBeNull();
  });

  it('refuses an unknown toolset, naming it and listing the toolsets, and creates nothing', async () => {
    const db = createDb(neon.connectionString);
    const before = (await listKeys(db, projectId)).length;
    await expect(createKey(db, 'Keys project', { toolsets: 'study,flashcards' })).rejects.toThrow(
      /'flashcards'.*documents.*task-analysis.*table-tools.*study/,
    );
    await expect(createKey(db, 'Keys project', { toolsets: ' , ' })).rejects.toThrow(/names no toolset/);
    expect((await listKeys(db, projectId)).length).toBe(before);
  });

  it('runs as a command', { timeout: 240_000 }, async () => {
    const created = await run('create', '--project', 'Keys project', '--name', 'from the command');
    const key = /et_[A-Za-z0-9_-]{43}/.exec(created.stdout)![0];
    expect(await statusWith(key)).toBe(200);
    expect((await run('revoke', key.slice(0, 8))).stdout).toMatch(/Revoked key/);
    expect(await statusWith(key)).toBe(401);
    const tenant = await run('create', '--project', `Command tenant ${crypto.randomUUID().slice(0, 8)}`, '--new-project');
    expect(tenant.stdout).toMatch(/Created project/);
    expect(await statusWith(/et_[A-Za-z0-9_-]{43}/.exec(tenant.stdout)![0])).toBe(200);
  });

  it('creates a key limited to toolsets as a command, lists them, and refuses a mistyped one', { timeout: 240_000 }, async () => {
    const limited = await run('create', '--project', 'Keys project', '--name', 'study only', '--toolsets', 'study');
    expect(limited.stdout).toMatch(/limited to the toolsets study\./);
    expect(await statusWith(/et_[A-Za-z0-9_-]{43}/.exec(limited.stdout)![0])).toBe(403);
    const listed = (await run('list', '--project', 'Keys project')).stdout.split('\n');
    expect(listed.find((line) => line.includes('study only'))).toMatch(/│ 'study'\s+│/);
    expect(listed.find((line) => line.includes('from the command'))).toMatch(/│ 'all'\s+│/);
    const mistyped = run('create', '--project', 'Keys project', '--toolsets', 'study,documnets');
    await expect(mistyped).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/--toolsets names a toolset that does not exist: 'documnets'\. Toolsets: documents/),
    });
  });
});
