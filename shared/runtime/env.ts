/**
 * The bindings and variables a worker reads, and what a request brings from the Workers runtime.
 * The runtime and the HTTP surfaces read them; tools never see `env`.
 */
import type { AdmissionEnv } from '../concurrency/admission.ts';
import type { OtlpEnv } from '../observability/otlp.ts';
import type { MetricsEnv } from '../observability/prometheus.ts';
import type { RetentionEnv } from '../observability/retention.ts';
import type { AiBinding } from '../providers/index.ts';
import { isLocalDatabaseUrl } from './db.ts';
import type { LinksEnv } from './link-templates.ts';
import type { OAuthEnv } from '../auth/oauth.ts';

export interface Env extends AdmissionEnv, OtlpEnv, MetricsEnv, RetentionEnv, LinksEnv, OAuthEnv {
  /** Postgres connection string: Neon in production, the local stand-in (loopback) in development. */
  DATABASE_URL?: string;
  /** Provider choice: 'offline' (default), 'openai' or 'workers-ai' (see shared/providers). */
  EMBEDDINGS_PROVIDER?: string;
  LLM_PROVIDER?: string;
  OPENAI_BASE_URL?: string;
  OPENAI_API_KEY?: string;
  EMBEDDINGS_MODEL?: string;
  EMBEDDINGS_DIMENSIONS?: string;
  /** semantic-search's default threshold, 0..1; unset: the embeddings provider's own. */
  EMBEDDINGS_THRESHOLD?: string;
  LLM_MODEL?: string;
  /** The Workers AI binding, for the workers-ai providers. */
  AI?: AiBinding;
  /**
   * Browser origins allowed to call `/mcp`, comma-separated (`https://app.example.com,
   * https://inspector.example.com`), or `*` for any. Requests without an `Origin` header (agents
   * calling from a server) never need it. Default: none, except loopback pages when the server
   * itself is addressed on loopback (local development).
   */
  MCP_ALLOWED_ORIGINS?: string;
  /**
   * `true`: MCP's `initialize`, `server/discover` and `tools/list` answer without a credential,
   * listing every tool a credential could reach at the URL (registries, "mixed auth" clients); every
   * tool call still needs one. Default: off, and a request without a credential is refused.
   */
  PUBLIC_TOOL_LIST?: string;
  /**
   * The sandbox worker code mode runs agents' code in (functions/sandbox.ts), as a service binding
   * (`[[services]]` in wrangler.toml); without it (and without SANDBOX_URL) code mode is off.
   */
  SANDBOX?: ServiceFetcher;
  /**
   * The sandbox host's URL on this machine (local/sandbox-host.ts), set by `npm run dev`, the tests
   * and local/wrangler-dev.ts: locally it takes the place of the SANDBOX binding.
   */
  SANDBOX_URL?: string;
}

/**
 * A service binding as the runtime uses it: a fetch to another worker (workers-types' `Fetcher`,
 * written out so that code type-checked for Node, which imports this file, needs no Workers types).
 */
export interface ServiceFetcher {
  fetch(input: string, init?: RequestInit): Promise<Response>;
}

/** What the runtime needs from the Workers runtime for one request: its variables and `waitUntil`. */
export interface RequestScope {
  env: Env;
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * Whether the worker runs on a developer's machine (`npm run dev`, `wrangler dev`, the tests): its
 * database is the local stand-in on a loopback address, which no deployed worker can reach.
 */
export function runsLocally(env: Env): boolean {
  return env.DATABASE_URL !== undefined && isLocalDatabaseUrl(env.DATABASE_URL);
}
