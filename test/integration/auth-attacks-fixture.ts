/**
 * What the auth-attacks-*.test.ts files share: what an attack tries to write, and the judges of
 * what it reached: the rows of a project (documents, mood entries, live grants), what a token lists
 * and calls over MCP, and a client's grant row. The gateway runs with OAuth on an https origin, as
 * deployed (oauth-flow.ts).
 */
import { and, count, eq, isNull } from 'drizzle-orm';
import { documents, moodEntries, oauthGrants } from '../../drizzle/schema.ts';
import { db } from './helpers.ts';
import { mcp, type Json } from './oauth-flow.ts';

/** A document an attack tries to add. */
export const DOCUMENT = { title: 'Attack', content: '# Attack\n- [ ] must never be written\n' };
/** A mood entry an attack tries to log. */
export const MOOD = { user_id: 'attacker', mood: 'happy', energy_level: 7, timestamp: '2031-01-01T00:00:00Z' };
/** A tool of the study toolset. */
export const STUDY_TOOL = 'list-plans';

/** The rows an attack could write: documents, mood entries, and live grants of `projectId`. */
export async function rowsOf(projectId: string): Promise<{ documents: number; moods: number; liveGrants: number }> {
  const [d] = await db.select({ n: count() }).from(documents).where(eq(documents.projectId, projectId));
  const [m] = await db.select({ n: count() }).from(moodEntries).where(eq(moodEntries.projectId, projectId));
  const [g] = await db
    .select({ n: count() })
    .from(oauthGrants)
    .where(and(eq(oauthGrants.projectId, projectId), isNull(oauthGrants.revokedAt)));
  return { documents: d!.n, moods: m!.n, liveGrants: g!.n };
}

/** The tools a token lists on an MCP path (undefined when it is refused there), and the status. */
export async function listed(path: string, token: string): Promise<{ status: number; names?: string[] }> {
  const answer = await mcp(path, token, 'tools/list');
  return { status: answer.status, names: answer.body.result?.tools?.map((tool: { name: string }) => tool.name) };
}

/** Calls a tool over MCP; the envelope (or the HTTP status when the request itself is refused). */
export async function callOverMcp(path: string, token: string, name: string, args: Json): Promise<{ status: number; envelope?: Json }> {
  const answer = await mcp(path, token, 'tools/call', { name, arguments: args });
  return { status: answer.status, envelope: answer.body.result?.structuredContent };
}

/** The grant row of an OAuth client. */
export async function grantRowOf(clientId: string) {
  const [row] = await db.select().from(oauthGrants).where(eq(oauthGrants.clientId, clientId));
  return row!;
}
