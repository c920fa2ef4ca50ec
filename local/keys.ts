/**
 * `npm run keys`: lists, creates and revokes API keys.
 *
 *   npm run keys -- list [--project <name or id>]
 *   npm run keys -- create --project <name or id> [--name <label>] [--toolsets study,documents]
 *   npm run keys -- create --project <name> --new-project       (a new project: another tenant)
 *   npm run keys -- revoke <key id, key prefix or the key itself>
 *   npm run keys -- grants [--project <name or id>]     (what people approved for OAuth clients)
 *   npm run keys -- revoke-grant <grant id>
 *
 * Works on DATABASE_URL when set (Neon), else on the local database of `npm run dev` (through the
 * running `npm run dev` when there is one, otherwise by opening its data directory). A key is shown
 * once, when it is created; only its SHA-256 is stored. A revoked key stops working on every isolate
 * within about a second (workers re-check cached keys), however it was revoked: this command, or
 * `update api_keys set revoked_at = now() where …` straight in SQL. A key created with --toolsets
 * lists and runs the tools of those toolsets only (the others answer 403 PERMISSION_DENIED);
 * changing `api_keys.toolsets` in SQL takes effect within about a second the same way. Revoking a key also stops the
 * OAuth grants approved with it; revoking a grant stops its tokens the same way.
 */
import { parseArgs } from 'node:util';
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import { apiKeys, projects } from '../drizzle/schema.ts';
import { parseToolsets, type Toolset } from '../shared/core/toolsets.ts';
import { API_KEY_FORMAT, hashApiKey, issueApiKey, KEY_PREFIX_LENGTH } from '../shared/auth/keys.ts';
import { createDb } from '../shared/runtime/db.ts';
import { type Database } from '../shared/core/database.ts';
import { listGrants, revokeGrant } from '../shared/auth/grants.ts';
import { createProject } from './database.ts';
import { LOCAL_DATA_DIR, localDatabaseHolder, openLocalDatabase } from './seed.ts';

const USAGE = `npm run keys -- list [--project <name or id>]
npm run keys -- create --project <name or id> [--name <label>] [--toolsets study,documents]
npm run keys -- create --project <name> --new-project    (creates the project: another tenant)
  --toolsets limits the key to those toolsets (documents, task-analysis, table-tools, study); default all.
npm run keys -- revoke <key id, key prefix or the key itself>
npm run keys -- grants [--project <name or id>]    (OAuth clients people approved)
npm run keys -- revoke-grant <grant id>
Works on DATABASE_URL when set, else on the local database of \`npm run dev\`.`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** `api_keys.key_prefix` holds a key's first 8 characters. */

/** Keys as `list` shows them, oldest first (optionally of one project). */
export async function listKeys(db: Database, project?: string) {
  const projectFilter = project ? (UUID.test(project) ? eq(projects.id, project) : eq(projects.name, project)) : undefined;
  return db
    .select({
      id: apiKeys.id,
      prefix: apiKeys.keyPrefix,
      name: apiKeys.name,
      project: projects.name,
      toolsets: apiKeys.toolsets,
      createdAt: apiKeys.createdAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .innerJoin(projects, eq(projects.id, apiKeys.projectId))
    .where(projectFilter)
    .orderBy(asc(apiKeys.createdAt));
}

/** Options of {@link createKey}. */
export interface NewKeyOptions {
  /** The key's label in `list`. Default "npm run keys". */
  name?: string;
  /** The toolsets the key is limited to, comma-separated as on the command line ("study,documents"). Default: every toolset. */
  toolsets?: string;
}

/**
 * Issues a new key for the project (by id, or the oldest project of that name), limited to
 * `toolsets` when given. Throws when the project or a toolset does not exist.
 */
export async function createKey(
  db: Database,
  project: string,
  { name = 'npm run keys', toolsets }: NewKeyOptions = {},
): Promise<{ key: string; id: string; project: string; toolsets: Toolset[] | null }> {
  const limitedTo = toolsets === undefined ? null : toolsetList(toolsets);
  const [found] = await db
    .select({ id: projects.id, name: projects.name })
    .from(projects)
    .where(UUID.test(project) ? eq(projects.id, project) : eq(projects.name, project))
    .orderBy(asc(projects.createdAt))
    .limit(1);
  if (!found)
    throw new Error(
      `No project '${project}'. List the keys (npm run keys -- list) to see the projects, or add --new-project to create it.`,
    );
  const { key, id } = await issueApiKey(db, { projectId: found.id, name, toolsets: limitedTo });
  return { key, id, project: found.name, toolsets: limitedTo };
}

/** The toolsets of a `--toolsets` list, or an error naming the unknown ones and listing the toolsets. */
function toolsetList(list: string): Toolset[] {
  const parsed = parseToolsets(list, {
    source: '--toolsets',
    hint: 'For example --toolsets study,documents; leave --toolsets out for a key that reaches every toolset.',
  });
  if (!parsed.ok) throw new Error(`${parsed.error.message} ${parsed.error.hint}`);
  return parsed.toolsets;
}

/**
 * Creates a project (a tenant of its own) named `name`, with its first key. Throws when a project
 * of that name exists: add a key to it with {@link createKey} instead.
 */
export async function createProjectWithKey(databaseUrl: string, name: string): Promise<{ key: string; projectId: string }> {
  const [existing] = await createDb(databaseUrl).select({ id: projects.id }).from(projects).where(eq(projects.name, name)).limit(1);
  if (existing) throw new Error(`A project named '${name}' exists already (${existing.id}): leave out --new-project to add a key to it.`);
  const created = await createProject(databaseUrl, name);
  return { key: created.apiKey, projectId: created.projectId };
}

/**
 * Revokes the one live key named by `which`: its id, its 8-character prefix, or the key itself.
 * Throws when none or several match.
 */
export async function revokeKey(db: Database, which: string): Promise<{ id: string; prefix: string }> {
  const named = UUID.test(which)
    ? eq(apiKeys.id, which)
    : which.length !== KEY_PREFIX_LENGTH && API_KEY_FORMAT.test(which)
      ? eq(apiKeys.keyHash, await hashApiKey(which))
      : eq(apiKeys.keyPrefix, which);
  const matches = await db
    .select({ id: apiKeys.id, prefix: apiKeys.keyPrefix })
    .from(apiKeys)
    .where(and(isNull(apiKeys.revokedAt), named));
  if (matches.length === 0) throw new Error(`No live key has the id, prefix or value '${which.slice(0, KEY_PREFIX_LENGTH)}…'.`);
  if (matches.length > 1)
    throw new Error(`${matches.length} live keys start with '${which}': revoke one by id (${matches.map((m) => m.id).join(', ')}).`);
  await db
    .update(apiKeys)
    .set({ revokedAt: sql`now()` })
    .where(eq(apiKeys.id, matches[0]!.id));
  return matches[0]!;
}

/** What the command line asks for, checked before the database is opened (a mistake costs nothing). */
type Command = {
  command: string;
  argument: string | undefined;
  values: { project?: string; name?: string; toolsets?: string; 'new-project'?: boolean };
};

/** The command line read and checked, or undefined after printing the usage. */
function parseCommand(): Command | undefined {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      project: { type: 'string' },
      name: { type: 'string' },
      toolsets: { type: 'string' },
      'new-project': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, argument] = positionals;
  if (values.help || !command || !['list', 'create', 'revoke', 'grants', 'revoke-grant'].includes(command)) {
    console.log(USAGE);
    if (!values.help) process.exitCode = 2;
    return undefined;
  }
  if (command === 'create' && !values.project) throw new Error('create needs --project <name or id>.');
  if (values.toolsets !== undefined && command !== 'create')
    throw new Error('--toolsets belongs to create: it limits the key being created.');
  if (values.toolsets !== undefined && values['new-project']) {
    throw new Error(
      '--toolsets limits a key of an existing project: create the project first (--new-project), then a limited key with create --project <name> --toolsets <list>.',
    );
  }
  // Checked before the database is opened: a mistyped toolset costs nothing.
  if (values.toolsets !== undefined) toolsetList(values.toolsets);
  if (command === 'revoke' && !argument) throw new Error('revoke needs the key id or prefix (npm run keys -- list shows them).');
  if (command === 'revoke-grant' && !argument) throw new Error('revoke-grant needs the grant id (npm run keys -- grants shows them).');
  return { command, argument, values };
}

async function main(): Promise<void> {
  const parsed = parseCommand();
  if (!parsed) return;
  let databaseUrl = process.env.DATABASE_URL;
  let opened: Awaited<ReturnType<typeof openLocalDatabase>> | undefined;
  if (!databaseUrl) {
    databaseUrl = localDatabaseHolder()?.databaseUrl;
    if (!databaseUrl) {
      console.error(`Opening the local database ${LOCAL_DATA_DIR} (PGlite takes a few seconds to start)...`);
      opened = await openLocalDatabase();
      databaseUrl = opened.connectionString;
    }
  }
  try {
    await run(createDb(databaseUrl), databaseUrl, parsed);
  } finally {
    await opened?.close();
  }
}

/** Runs one checked command against the database. */
async function run(db: Database, databaseUrl: string, { command, argument, values }: Command): Promise<void> {
  if (command === 'list') {
    const keys = await listKeys(db, values.project);
    console.table(
      keys.map((k) => ({
        id: k.id,
        prefix: k.prefix,
        name: k.name,
        project: k.project,
        toolsets: k.toolsets?.join(',') ?? 'all',
        created: k.createdAt.toISOString(),
        revoked: k.revokedAt?.toISOString() ?? '',
      })),
    );
  } else if (command === 'grants') {
    const grants = await listGrants(db, values.project);
    console.table(
      grants.map((g) => ({
        id: g.id,
        project: g.project,
        client: `${g.client} (${g.redirectHost})`,
        url: g.resource,
        toolsets: g.toolsets.join(','),
        access: g.readOnly ? 'read-only' : 'read and write',
        'approved with': `${g.approvedWith}…`,
        created: g.createdAt.toISOString(),
        state: g.revokedAt ? `revoked ${g.revokedAt.toISOString()}` : g.expiresAt < new Date() ? 'expired' : 'live',
      })),
    );
  } else if (command === 'revoke-grant') {
    if (!(await revokeGrant(db, argument!)))
      throw new Error(`No live grant has the id '${argument!.slice(0, 40)}' (npm run keys -- grants lists them).`);
    console.log(
      `Revoked grant ${argument}. Its tokens stop working on every worker within about a second, and it can no longer be refreshed.`,
    );
  } else if (command === 'create' && values['new-project']) {
    const created = await createProjectWithKey(databaseUrl, values.project!);
    console.log(`Created project '${values.project}' (${created.projectId}) with its first key. Shown once, keep it now:\n${created.key}`);
  } else if (command === 'create') {
    const created = await createKey(db, values.project!, { name: values.name, toolsets: values.toolsets });
    const reach = created.toolsets ? `limited to the toolsets ${created.toolsets.join(', ')}` : 'reaching every toolset';
    console.log(`Created key ${created.id} for project '${created.project}', ${reach}. Shown once, keep it now:\n${created.key}`);
  } else {
    const revoked = await revokeKey(db, argument!);
    console.log(`Revoked key ${revoked.id} (${revoked.prefix}…). It stops working on every worker within about a second.`);
  }
}

if (import.meta.main) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
