/**
 * The caller: who a request is, whatever credential it sent, as a plain typed value every route
 * and the call pipeline take. It is built in one place (shared/auth/authorize.ts) and checked in
 * one place: {@link deniedTool} and {@link deniedToolsets} say what it may list and run, and
 * {@link confirmedFor} is the one gate before anything that writes or changes state.
 */
import { fail, type Failure } from '../core/contract.ts';
import type { AnyTool, Project } from '../core/tool.ts';

/** Who is calling: the project (tenant), the key that vouches for it, and what it may do now. */
export interface Caller {
  project: Project;
  /** The API key (for an OAuth token: the key that approved its grant). */
  keyId: string;
  /** Calls per minute per key; null means the deployment default. */
  rateLimitPerMinute: number | null;
  /**
   * The toolsets the credential reaches now; undefined for every toolset. For an OAuth token:
   * what its grant names that the approving key still reaches (the effective scope).
   */
  toolsets?: readonly string[];
  /** True when the credential may run only tools that do not write (annotations.readOnlyHint). */
  readOnly?: boolean;
  /** What the credential is: an API key, or an OAuth access token (then `grantId` names its grant). */
  credential: 'api_key' | 'oauth';
  /** The OAuth grant of an access token. */
  grantId?: string;
}

/**
 * A caller whose credential was valid when last verified. Pass this object itself along (to the
 * pipeline, to every inner call): a key's re-check refreshes its toolsets in place, and the gate
 * judges the object it is given, so a copy made before the re-check keeps the old scope.
 */
export interface Authenticated extends Caller {
  ok: true;
  /**
   * Settles once the credential is known to be valid now: undefined at once when it was verified
   * within the re-check period, else after a re-check already under way (which also refreshes
   * this caller's toolsets); a failure when it was revoked meanwhile or could not be checked.
   * Reads may run alongside it; anything that changes state goes through {@link confirmedFor}.
   */
  confirmed: Promise<Failure | undefined>;
}

/**
 * THE gate: resolves once the caller's credential is confirmed valid now, to undefined when it may
 * go on, or to why not: the credential was revoked or could not be checked, or (with `tool`) the
 * refreshed scope no longer reaches the tool. Nothing that writes or changes state (a tool call,
 * revoking a grant, approving a client) runs before it resolves to undefined.
 */
export async function confirmedFor(
  caller: Authenticated,
  tool?: Pick<AnyTool, 'id' | 'toolset' | 'annotations'>,
): Promise<Failure | undefined> {
  const failure = await caller.confirmed;
  if (failure) return failure;
  return tool ? deniedTool(caller, tool) : undefined;
}

/**
 * Why `caller` may not run `tool`, or undefined when it may: a tool outside the credential's
 * toolsets, or a tool that writes for a read-only credential, is PERMISSION_DENIED (and is not
 * listed to it either).
 */
export function deniedTool(caller: Caller, tool: Pick<AnyTool, 'id' | 'toolset' | 'annotations'>): Failure | undefined {
  if (caller.toolsets && !caller.toolsets.includes(tool.toolset)) {
    if (caller.toolsets.length === 0) return reachesNothing(caller);
    return fail(
      'PERMISSION_DENIED',
      `The credential may use the toolsets ${caller.toolsets.join(', ')} only, and '${tool.id}' belongs to ${tool.toolset}.`,
      {
        hint: `Call a tool of ${caller.toolsets.join(', ')}, or use a credential granted ${tool.toolset} (authorize again, or an API key of the project).`,
        details: { reason: 'toolset_not_granted', toolsets: [...caller.toolsets], tool_toolset: tool.toolset },
      },
    );
  }
  if (caller.readOnly && !tool.annotations.readOnlyHint) {
    return fail('PERMISSION_DENIED', `The credential is read-only, and '${tool.id}' writes.`, {
      hint: 'Call a tool that only reads, or authorize again with read and write access.',
      details: { reason: 'read_only', tool: tool.id },
    });
  }
  return undefined;
}

/**
 * Why `caller` may not use `what` (an MCP URL, a listing, a read route), which serves the
 * toolsets `serves` only, or undefined when the credential reaches one of them.
 */
export function deniedToolsets(caller: Caller, serves: readonly string[], what: string): Failure | undefined {
  const granted = caller.toolsets;
  if (!granted || serves.some((toolset) => granted.includes(toolset))) return undefined;
  if (granted.length === 0) return reachesNothing(caller);
  return fail(
    'PERMISSION_DENIED',
    `The credential may use the toolsets ${granted.join(', ')} only, and ${what} serves ${serves.join(', ')}.`,
    {
      hint: `Use what serves ${granted.join(', ')} (over MCP: POST /mcp/${granted.join(',')}), or a credential granted ${serves.join(' or ')}.`,
      details: { reason: 'toolset_not_granted', toolsets: [...granted], requested_toolsets: [...serves] },
    },
  );
}

/** An OAuth grant whose approving key no longer reaches any toolset the grant names. */
function reachesNothing(caller: Caller): Failure {
  return fail(
    'PERMISSION_DENIED',
    'The credential reaches no toolset now: the API key that approved its grant was limited to other toolsets since.',
    {
      hint: 'Authorize the client again with a key that reaches the toolsets it needs, or use an API key of the project.',
      details: { reason: 'approving_key_narrowed', credential: caller.credential },
    },
  );
}
