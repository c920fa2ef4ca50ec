/**
 * The execution pipeline, written once for every tool and every transport:
 * authenticate -> read and validate the input -> rate limit and acquire a slot (while a cached key
 * is re-checked) -> execute (with retries) -> release -> answer with the envelope -> record the trace.
 *
 * Every path ends in an envelope; nothing a tool throws reaches the caller. Nothing about the
 * deployment's configuration is told to a caller before its key is verified.
 */
import { envelope, fail, FailureError, retryAfterMs, statusOf, type Failure, type Meta, type Outcome, type Warning } from '../core/contract.ts';
import { authenticate, deniedTool, type Authenticated, type AuthOptions } from './auth.ts';
import { admissionFromEnv, namespaceOf, redisFromEnv } from '../concurrency/admission.ts';
import { FailedAttempts } from '../concurrency/rate-limit.ts';
import type { LeaseLapse } from '../concurrency/semaphore.ts';
import { createDb, databaseFailure, type Database } from './db.ts';
import { nameBasedUuid } from './ids.ts';
import { claimIdempotencyKey, keyFromHeader } from './idempotency.ts';
import { runsLocally, type Env } from './env.ts';
import { linksFromEnv } from './links.ts';
import { grantOfToken, oauthEnabled } from './oauth.ts';
import { errorForLog, log } from '../observability/log.ts';
import type { Providers } from '../providers/index.ts';
import { ProviderError, providerFailure } from '../providers/types.ts';
import { DEFAULT_RETRIES, DEFAULT_RETRY_DELAY_MS, withRetries } from './retry.ts';
import type { AnyTool, ToolContext } from '../core/tool.ts';
import { describeCause, recordExecution, type RetryError } from '../observability/tracing.ts';
import { exportSpan, otlpConfigFromEnv, type ExecutionSpan } from '../observability/otlp.ts';
import { recordRefusal } from '../observability/refusals.ts';
import { startSpan, TOOL_CALL_ID_HEADER, toolCallIdOf } from '../observability/trace-context.ts';
import { DEFAULT_BODY_LIMIT_BYTES, type Parsed, readJsonObject } from '../core/body.ts';
import { validateInput } from '../core/validation.ts';

export interface PipelineOptions {
  /** Request bodies above this are refused with PAYLOAD_TOO_LARGE. */
  bodyLimitBytes?: number;
  /** Executions slower than this still complete, with `meta.performance_warning: true`. */
  slowCallMs?: number;
  /** Retries of transient failures, and the fixed delay before each. */
  retries?: number;
  retryDelayMs?: number;
  /** How API keys are cached and re-checked (shared/runtime/auth.ts, AUTH_DEFAULTS). */
  auth?: AuthOptions;
}

export const DEFAULT_SLOW_CALL_MS = 5_000;

/** What the pipeline needs from the Workers runtime for one request. */
export interface RequestScope {
  env: Env;
  waitUntil(promise: Promise<unknown>): void;
}

/** Who a request says it is: its `Authorization` header and the client's address. */
export interface Credentials {
  /** The `Authorization` header. */
  authorization: string | null;
  /** `CF-Connecting-IP`: failed authentications are bounded per address. */
  clientAddress: string | null;
  /** The URL the request came to: an OAuth access token is valid only for the resource it was issued for. */
  url?: string;
}

/** Reads the credentials of a request. */
export function credentialsOf(request: Request): Credentials {
  return { authorization: request.headers.get('authorization'), clientAddress: request.headers.get('cf-connecting-ip'), url: request.url };
}

/** One call as any transport (HTTP, MCP) hands it to the pipeline. */
export interface ToolCall extends Credentials {
  /** Reads and screens the raw input; `hint` is the example of a valid call for error messages. */
  readInput(hint: string): Promise<Parsed<Record<string, unknown>>>;
  /** Aborts when the caller goes away. */
  signal: AbortSignal;
  /** The idempotency key the call was sent with, as the transport read it (shared/runtime/idempotency.ts). */
  idempotencyKey?: Parsed<string>;
  /** The caller's W3C `traceparent`, if any: the execution becomes a span of the caller's trace. */
  traceparent?: string | null;
  /** The model's own id of this tool call, if the client sent one: the span's `gen_ai.tool.call.id`. */
  toolCallId?: string;
  /** The origin the request came to (`https://edge-tools.example.workers.dev`): links are absolute. */
  origin: string;
}

/** The outcome of a call and the meta of its envelope. */
export interface CallResult {
  outcome: Outcome<unknown>;
  meta: Meta;
}

/** Runs one HTTP tool call (the JSON body is the input) and answers with the envelope. Never throws. */
export async function runToolCall(tool: AnyTool, request: Request, scope: RequestScope, options: PipelineOptions = {}): Promise<Response> {
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const { outcome, meta } = await callTool(
    tool,
    {
      ...credentialsOf(request),
      readInput: (hint) => readJsonObject(request, hint, bodyLimitBytes),
      signal: request.signal,
      idempotencyKey: keyFromHeader(request.headers.get('idempotency-key')),
      traceparent: request.headers.get('traceparent'),
      toolCallId: toolCallIdOf(request.headers.get(TOOL_CALL_ID_HEADER)),
      origin: new URL(request.url).origin,
    },
    scope,
    options,
  );
  return respond(outcome, meta);
}

/** Runs one tool call through the whole pipeline. Never throws. */
export async function callTool(
  tool: AnyTool,
  call: ToolCall,
  scope: RequestScope,
  { slowCallMs = DEFAULT_SLOW_CALL_MS, retries = DEFAULT_RETRIES, retryDelayMs = DEFAULT_RETRY_DELAY_MS, auth }: PipelineOptions = {},
): Promise<CallResult> {
  const traceId = crypto.randomUUID();
  const startedAt = performance.now();
  const arrivedAt = new Date();
  const meta = (attempts = 0, queuedMs = 0, executionMs = 0): Meta => ({
    tool: tool.id,
    trace_id: traceId,
    duration_ms: round(performance.now() - startedAt),
    attempts,
    queued_ms: round(queuedMs),
    performance_warning: executionMs > slowCallMs,
  });
  // Refusals happen before execution: attempts stays 0.
  const refuse = (failure: Failure, projectId?: string): CallResult => {
    logUnsuccessful('call_refused', failure, { tool: tool.id, trace_id: traceId, project_id: projectId });
    return { outcome: failure, meta: meta() };
  };

  const caller = await authorize(call, scope, { traceId, auth });
  if (!caller.ok) return refuse(caller);
  const db = caller.db;
  // A refusal waits for the key's re-check, if one is under way: a key revoked meanwhile gets 401.
  // Otherwise the project is known, and the refusal is counted for its metrics.
  const refuseChecked = async (failure: Failure): Promise<CallResult> => {
    const revoked = await caller.confirmed;
    if (revoked) return refuse(revoked);
    const record = { traceId, projectId: caller.project.id, apiKeyId: caller.keyId, tool: tool.id, failure, startedAt: arrivedAt };
    const refused = refuse(failure, caller.project.id);
    scope.waitUntil(afterResponse(() => Promise.all([recordRefusal(db, record), sendSpan({ projectId: caller.project.id, outcome: failure, durationMs: refused.meta.duration_ms, refused: true })])));
    return refused;
  };
  // Every call of a known project is exported, refusals too; arguments as received, once read.
  let received: unknown;
  const otlp = otlpConfigFromEnv(scope.env);
  const span = startSpan(traceId, call.traceparent);
  const sendSpan = async (sent: Pick<ExecutionSpan, 'projectId' | 'durationMs' | 'refused'> & Partial<ExecutionSpan> & { outcome: Outcome<unknown> }) => {
    if (!otlp) return;
    const { outcome, ...rest } = sent;
    await exportSpan(otlp, {
      context: span,
      tool: tool.id,
      toolDescription: tool.description,
      executionId: traceId,
      toolCallId: call.toolCallId,
      startTimeMs: arrivedAt.getTime(),
      errorCode: outcome.ok ? undefined : outcome.error.code,
      errorMessage: outcome.ok ? undefined : outcome.error.message,
      attempts: 0,
      queuedMs: 0,
      performanceWarning: false,
      retries: [],
      content: { arguments: received ?? null, result: outcome.ok ? outcome.data : { code: outcome.error.code, message: outcome.error.message, details: outcome.error.details } },
      ...rest,
    });
  };
  const denied = deniedTool(caller, tool);
  if (denied) return refuseChecked(denied);
  // Read-only tools ignore the key: repeating them changes nothing.
  const key = tool.acceptsIdempotencyKey ? call.idempotencyKey : undefined;
  if (key && !key.ok) return refuseChecked(key);

  if (tool.unavailable) return refuseChecked(tool.unavailable);
  const admission = admissionFromEnv(scope.env, { local: runsLocally(scope.env) });
  if ('ok' in admission) return refuseChecked(admission);
  const raw = await call.readInput(tool.hint);
  if (!raw.ok) return refuseChecked(raw);
  received = raw.value;
  const input = validateInput(tool.input, raw.value, tool.hint);
  if (!input.ok) return refuseChecked(input);
  received = input.value;
  const links = linksFromEnv(scope.env, call.origin);
  if (!links.ok) return refuseChecked(links);

  // With an idempotency key: the stored answer is replayed, or the key is claimed for this call
  // (by a key confirmed valid: a revoked one neither replays nor claims).
  if (key) {
    const revoked = await caller.confirmed;
    if (revoked) return refuse(revoked);
  }
  const claim =
    key &&
    (await claimIdempotencyKey(db, {
      projectId: caller.project.id,
      toolId: tool.id,
      key: key.value,
      input: input.value,
      traceId,
      defer: (work) => scope.waitUntil(afterResponse(work)),
    }));
  if (claim && !claim.ok) return refuse(claim, caller.project.id);
  if (claim?.replay) return { outcome: claim.replay.outcome, meta: { ...meta(), trace_id: claim.replay.traceId, replayed: true } };

  let queued = false;
  const [admitted, revoked] = await Promise.all([
    admission.admit({
      callId: traceId,
      keyId: caller.keyId,
      rateLimitPerMinute: caller.rateLimitPerMinute,
      signal: call.signal,
      onQueued: (queueDepth) => {
        queued = true;
        log('info', 'queued', { tool: tool.id, trace_id: traceId, queue_depth: queueDepth });
      },
      waitUntil: scope.waitUntil,
    }),
    caller.confirmed,
  ]);
  if (revoked || !admitted.ok) {
    if (claim) scope.waitUntil(claim.release());
    if (admitted.ok) scope.waitUntil(admitted.permit.release());
    return revoked ? refuse(revoked) : refuseChecked(admitted as Failure);
  }
  if (queued) log('info', 'dequeued', { tool: tool.id, trace_id: traceId, queued_ms: round(admitted.queuedMs) });
  const admittedAtMs = Date.now();

  const { permit } = admitted;
  // A slot whose lease lapsed before the tool started is not used: the call did not run.
  const lapsedBefore = permit.lapse();
  if (lapsedBefore) {
    if (claim) scope.waitUntil(claim.release());
    scope.waitUntil(permit.release());
    return refuseChecked(leaseLapsedBeforeStart(lapsedBefore));
  }
  let outcome: Outcome<unknown>;
  let attempts: number;
  let lapse: LeaseLapse | undefined;
  const executionStartedAt = performance.now();
  const retryErrors: RetryError[] = [];
  try {
    // Aborted when the caller goes away. Never on a lapsed lease: see leaseWarning.
    const signal = call.signal;
    let providers: Providers | undefined;
    const context: ToolContext = {
      db: createDb(scope.env.DATABASE_URL!, { signal }),
      project: caller.project,
      get providers() {
        if (!tool.providers) throw new Error(`The tool '${tool.id}' reads context.providers, but its definition names none (providers: providersFromEnv).`);
        return (providers ??= tool.providers(scope.env as Record<string, unknown>));
      },
      signal,
      traceId,
      idFor: claim ? claim.idFor : (purpose) => nameBasedUuid(`${caller.project.id}:${tool.id}:${traceId}:${purpose}`),
      links: links.links,
    };
    ({ outcome, attempts } = await withRetries(() => execute(tool, input.value, context), {
      retries,
      delayMs: retryDelayMs,
      signal,
      onRetry: (attempt, failure) => {
        retryErrors.push({ attempt: attempt - 1, code: failure.error.code, message: failure.error.message, timeMs: Date.now(), cause: describeCause(failure.cause) });
        log('warn', 'retrying', { tool: tool.id, trace_id: traceId, attempt, code: failure.error.code, error: errorForLog(failure.cause) });
      },
    }));
    lapse = permit.lapse();
  } finally {
    scope.waitUntil(permit.release());
  }
  const executionMs = performance.now() - executionStartedAt;
  const warnings = lapse ? [leaseWarning(lapse)] : undefined;
  if (lapse) log('warn', 'lease_lost', { tool: tool.id, trace_id: traceId, project_id: caller.project.id, reason: lapse.reason, detail: lapse.detail, ok: outcome.ok });
  if (claim) await claim.settle(outcome);
  if (!outcome.ok) logUnsuccessful('call_failed', outcome, { tool: tool.id, trace_id: traceId, project_id: caller.project.id, attempts });

  const answerMeta = { ...meta(attempts, admitted.queuedMs, executionMs), ...(warnings && { warnings }) };
  if (answerMeta.performance_warning) {
    log('warn', 'slow_execution', { tool: tool.id, trace_id: traceId, execution_ms: round(executionMs), threshold_ms: slowCallMs });
  }
  // Deferred to a later task, so building and sending the record happens after the response is out.
  scope.waitUntil(
    afterResponse(async () => {
      await Promise.all([
        recordExecution(db, {
          traceId,
          tool: tool.id,
          projectId: caller.project.id,
          input: input.value,
          outcome,
          durationMs: answerMeta.duration_ms,
          attempts,
          queuedMs: answerMeta.queued_ms,
          performanceWarning: answerMeta.performance_warning,
          leaseLost: lapse !== undefined,
          startedAt: arrivedAt,
          apiKeyId: caller.keyId,
          retryErrors,
          span,
        }),
        sendSpan({
          projectId: caller.project.id,
          outcome,
          durationMs: answerMeta.duration_ms,
          refused: false,
          attempts,
          queuedMs: answerMeta.queued_ms,
          admittedAtMs,
          performanceWarning: answerMeta.performance_warning,
          retries: retryErrors,
        }),
      ]);
    }),
  );
  return { outcome, meta: answerMeta };
}

/**
 * The one place where unsuccessful calls are logged, one structured line each: `call_refused` for
 * a call answered without executing (validation with its failing fields, rate limit, no slot,
 * authentication, ...), `call_failed` for an execution that failed after its retries. A warning,
 * or an error when the failure is the service's (5xx).
 */
function logUnsuccessful(event: 'call_refused' | 'call_failed', failure: Failure, context: Record<string, unknown>): void {
  const status = statusOf(failure);
  const { code, retryable, details } = failure.error;
  const fields = details?.fields?.map(({ field, code: problem }) => ({ field, code: problem }));
  log(status >= 500 ? 'error' : 'warn', event, { ...context, code, status, retryable, ...(fields ? { fields } : {}) });
}

/** Runs `execute`, turning anything thrown and any output that breaks the schema into a failure. */
async function execute(tool: AnyTool, input: unknown, context: ToolContext): Promise<Outcome<unknown>> {
  let outcome: Outcome<unknown>;
  try {
    outcome = await tool.execute(input, context);
  } catch (error) {
    outcome = failureOf(error, context.traceId);
  }
  if (!outcome.ok) return outcome;
  const checked = tool.output.safeParse(outcome.data);
  if (checked.success) return { ...outcome, data: checked.data };
  return fail('UNKNOWN_ERROR', `The tool '${tool.id}' produced a result that does not match its declared output; this is a bug in the tool, recorded with trace id ${context.traceId}.`, {
    cause: checked.error,
  });
}

/** What a thrown error means for the caller: a carried failure, a provider or database failure, or a bug. */
function failureOf(error: unknown, traceId: string): Failure {
  if (error instanceof FailureError) return error.failure;
  if (error instanceof ProviderError) return providerFailure(error);
  return databaseFailure(error) ?? unexpected(error, traceId);
}

/**
 * The slot's lease lapsed while the tool ran, so another call may have run in its place: the limit
 * was possibly exceeded, and that can no longer be undone. The tool is never stopped for it (work
 * stopped half-way would be reported failed although partly written): its answer stands, with this
 * warning, the `lease_lost` log event and the trace of the call.
 */
function leaseWarning(lapse: LeaseLapse): Warning {
  return { code: 'lease_lost', message: `The execution slot could not be vouched for while the tool ran (${lapse.detail}); the limit on concurrent executions may have been exceeded. The answer is the tool's own: its work is done.` };
}

/** The slot's lease lapsed between the grant and the start: the tool did not run. */
function leaseLapsedBeforeStart(lapse: LeaseLapse): Failure {
  return fail('BUSY', `The execution slot was lost before the tool started (${lapse.detail}), so the call did not run. Repeat it in a moment.`, {
    retryable: true,
    details: { reason: 'lease_lost', retry_after_ms: 1_000 },
  });
}

function afterResponse(work: () => Promise<unknown>): Promise<unknown> {
  return new Promise((resolve) => setTimeout(resolve, 0)).then(work);
}

/**
 * Resolves the caller of a request from its credentials, with the database client for the
 * bookkeeping (trace) of the call. Answers UNAUTHENTICATED for a bad key, RATE_LIMITED for an
 * address with too many failed attempts. Without DATABASE_URL no key can be verified: every caller
 * gets the same CONFIG_ERROR, which names nothing (the cause goes to the log). Transports call it to
 * refuse a request before reading it (MCP); never throws.
 */
export async function authorize(
  credentials: Credentials,
  scope: RequestScope,
  { traceId = crypto.randomUUID(), auth }: { traceId?: string; auth?: AuthOptions } = {},
): Promise<(Authenticated & { db: Database }) | Failure> {
  const { env } = scope;
  if (!env.DATABASE_URL) {
    log('error', 'config_error', { trace_id: traceId, reason: 'missing_database_url', message: 'DATABASE_URL is not set: no API key can be verified and no tool can run. Set the secret (wrangler secret put DATABASE_URL).' });
    return fail('CONFIG_ERROR', `The service is not configured correctly, so it cannot verify API keys. Its operator can find the cause in the worker's log under trace id ${traceId}.`);
  }
  const db = createDb(env.DATABASE_URL);
  const token = /^Bearer\s+(\S+)\s*$/i.exec(credentials.authorization ?? '')?.[1];
  if (token && !token.startsWith('et_') && credentials.url && oauthEnabled(env, new URL(credentials.url))) {
    try {
      const grant = await grantOfToken(token, new URL(credentials.url), env, db);
      if ('error' in grant) return grant;
      const { project, apiKeyId: keyId, rateLimitPerMinute, toolsets, readOnly } = grant;
      return { ok: true, project, keyId, rateLimitPerMinute, toolsets, readOnly, confirmed: Promise.resolve(undefined), db };
    } catch (error) {
      return databaseFailure(error) ?? unexpected(error, traceId);
    }
  }
  const failures = new FailedAttempts({ redis: redisFromEnv(env), prefix: `${namespaceOf(env)}:auth-failures` });
  try {
    const caller = await authenticate(credentials.authorization, db, { clientAddress: credentials.clientAddress, failures, waitUntil: scope.waitUntil }, auth);
    return caller.ok ? { ...caller, db } : caller;
  } catch (error) {
    return databaseFailure(error) ?? unexpected(error, traceId);
  }
}

/** An error nobody anticipated: the caller learns the trace id, the trace keeps the stack. */
export function unexpected(error: unknown, traceId: string): Failure {
  return fail('UNKNOWN_ERROR', `The tool failed unexpectedly. The error was recorded with trace id ${traceId}; repeating the same call is unlikely to help.`, {
    cause: error,
  });
}

/**
 * Serialises an outcome into the envelope response: the one place every HTTP answer is built (tool
 * calls, the other routes, MCP's HTTP-level refusals). Every 429 and 503 carries `Retry-After`:
 * `details.retry_after_ms` in whole seconds, rounded up; every 401 a `WWW-Authenticate` challenge.
 */
export function respond(outcome: Outcome<unknown>, meta: Meta): Response {
  if (outcome.ok) return Response.json(envelope(outcome, meta));
  const waitMs = retryAfterMs(outcome);
  const status = statusOf(outcome);
  const headers: Record<string, string> = waitMs === undefined ? {} : { 'retry-after': String(Math.ceil(waitMs / 1000)) };
  // RFC 6750; with OAuth on, shared/http/oauth.ts adds where to authorize (resource_metadata).
  if (status === 401) headers['www-authenticate'] = 'Bearer realm="edge-tools"';
  return Response.json(envelope(outcome, meta), { status, headers });
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
