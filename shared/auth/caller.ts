/**
 * The caller: who a request is, whatever credential it sent, as an immutable typed value every
 * route and the call pipeline take. It is built in one place (shared/auth/authorize.ts);
 * {@link deniedTool} and {@link deniedToolsets} say what it may list and run, and the gate
 * (shared/auth/gate.ts) is the one way to anything that writes or changes state.
 */
import { fail, type Failure } from '../core/contract.ts';
import type { AnyTool, Project } from '../core/tool.ts';

/**
 * Who is calling: the project (tenant), the key that vouches for it, and what it may do, as last
 * verified. An immutable value: a credential verified again gives a new one (shared/auth/gate.ts).
 */
export interface Caller {
  readonly project: Readonly<Project>;
  /** The API key (for an OAuth token: the key that approved its grant). */
  readonly keyId: string;
  /** Calls per minute per key; null means the deployment default. */
  readonly rateLimitPerMinute: number | null;
  /**
   * The toolsets the credential reaches; undefined for every toolset. For an OAuth token: what
   * its grant names that the approving key still reaches (the effective scope).
   */
  readonly toolsets?: readonly string[];
  /** True when the credential may run only tools that do not write (annotations.readOnlyHint). */
  readonly readOnly?: boolean;
  /** What the credential is: an API key, or an OAuth access token (then `grantId` names its grant). */
  readonly credential: 'api_key' | 'oauth';
  /** The OAuth grant of an access token. */
  readonly grantId?: string;
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
