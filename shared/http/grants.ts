/**
 * The project's connected clients, for the dashboard: `GET /grants` lists the OAuth grants people
 * approved (live ones: neither revoked nor expired), `DELETE /grants/:grant_id` revokes one, as
 * `npm run keys -- revoke-grant` does: its tokens stop working within about a second. Both take an
 * API key of the project that reaches every toolset: an OAuth token, or a key limited to toolsets,
 * may not list or revoke grants. Revoking changes state, so it gets the client that writes from the
 * gate (shared/auth/gate.ts), once the key is confirmed valid now, never alongside its re-check.
 */
import { Hono } from 'hono/tiny';
import * as z from 'zod';
import { fail, ok, type Failure } from '../core/contract.ts';
import { plural } from '../core/plural.ts';
import type { Caller } from '../auth/caller.ts';
import type { Env } from '../runtime/env.ts';
import { listGrants, revokeGrant } from '../auth/grants.ts';
import { authenticated, type ReadRouteOptions } from './read-route.ts';

/** One connected client, as `GET /grants` lists it. */
export const connectedClient = z.object({
  grant_id: z.string().describe('The grant: DELETE /grants/{grant_id} revokes it.'),
  client: z.string().describe('The name the client registered with.'),
  client_id: z.string(),
  redirect_host: z.string().describe('Where its authorizations were redirected.'),
  resource: z.string().describe('The MCP URL its tokens work on.'),
  toolsets: z.array(z.string()),
  read_only: z.boolean(),
  approved_with: z.string().describe('The prefix of the API key whose holder approved it.'),
  created_at: z.string(),
  expires_at: z.string(),
});

/** The data of `GET /grants`. */
export const connectedClients = z.object({
  grants: z.array(connectedClient).describe('Live grants (neither revoked nor expired), newest first.'),
});

/** The data of `DELETE /grants/:grant_id`. */
export const revokedGrant = z.object({ grant_id: z.string(), revoked: z.literal(true) });

export type ConnectedClient = z.output<typeof connectedClient>;
export type ConnectedClients = z.output<typeof connectedClients>;

const HINT = 'Example of a valid call: GET /grants, then DELETE /grants/<grant_id> with an API key of the project.';

/** The routes of connected clients, mounted by the gateway (shared/http/app.ts). */
export function grantRoutes(options: ReadRouteOptions) {
  return new Hono<{ Bindings: Env }>()
    .get('/grants', (c) =>
      authenticated(
        c,
        'grants',
        async (db, caller) => {
          const denied = withApiKeyOnly(caller);
          if (denied) return denied;
          const now = Date.now();
          const grants = (await listGrants(db, caller.project.id))
            .filter((grant) => grant.revokedAt === null && grant.expiresAt.getTime() > now)
            .map((grant): ConnectedClient => ({
              grant_id: grant.id,
              client: grant.client,
              client_id: grant.clientId,
              redirect_host: grant.redirectHost,
              resource: grant.resource,
              toolsets: grant.toolsets,
              read_only: grant.readOnly,
              approved_with: grant.approvedWith,
              created_at: grant.createdAt.toISOString(),
              expires_at: grant.expiresAt.toISOString(),
            }));
          return ok<ConnectedClients>(
            { grants },
            grants.length === 0 ? 'No client is connected through OAuth.' : `${plural(grants.length, 'connected client')}, newest first.`,
          );
        },
        options,
      ),
    )
    .delete('/grants/:grant_id', (c) =>
      authenticated(
        c,
        'grants',
        async (db, caller) => {
          const denied = withApiKeyOnly(caller);
          if (denied) return denied;
          const grantId = c.req.param('grant_id');
          if (!(await revokeGrant(db, grantId, { projectId: caller.project.id }))) {
            return fail('NOT_FOUND', `This project has no live grant with the id '${grantId.slice(0, 60)}' (it may be revoked already).`, {
              hint: `List the live grants with GET /grants. ${HINT}`,
              details: { entity_type: 'grant', query: { grant_id: grantId.slice(0, 60) } },
            });
          }
          return ok<z.output<typeof revokedGrant>>(
            { grant_id: grantId, revoked: true },
            `Revoked grant ${grantId}: its tokens stop working within about a second, and it can no longer be refreshed.`,
          );
        },
        options,
        { changesState: true },
      ),
    );
}

/** PERMISSION_DENIED for an OAuth token or a key limited to toolsets: grants are the project owner's, managed with a key that reaches every toolset. */
function withApiKeyOnly(caller: Caller): Failure | undefined {
  if (caller.credential === 'oauth') {
    return fail(
      'PERMISSION_DENIED',
      'Connected clients are listed and revoked with an API key of the project, not with an OAuth access token.',
      {
        hint: `Send 'Authorization: Bearer et_…' with a key of the project that is not limited to toolsets (npm run keys). ${HINT}`,
        details: { reason: 'api_key_required', credential: 'oauth' },
      },
    );
  }
  if (caller.toolsets === undefined) return undefined;
  return fail(
    'PERMISSION_DENIED',
    `Connected clients are listed and revoked with an API key that reaches every toolset, and this key is limited to ${caller.toolsets.join(', ') || 'no toolset'}.`,
    {
      hint: `Send 'Authorization: Bearer et_…' with a key of the project created without --toolsets (npm run keys -- create). ${HINT}`,
      details: { reason: 'full_api_key_required', credential: 'api_key', toolsets: [...caller.toolsets] },
    },
  );
}
