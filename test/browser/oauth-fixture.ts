/**
 * What the OAuth browser test runs on: the real worker under `wrangler dev` with the Neon stand-in
 * (one project, the study planner's demo data), the client's callback on 127.0.0.1 as a desktop
 * client's is, Debian's Chromium (playwright-core) for the person on the consent page, and an
 * in-memory `OAuthClientProvider` for the official MCP SDK's OAuth client. Everything it starts
 * is stopped by {@link OAuthStack.close}.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { count, eq } from 'drizzle-orm';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import type { documents, flashcards } from '../../drizzle/schema.ts';
import { createProject, migrateDatabase, type CreatedProject } from '../../local/database.ts';
import { startNeonStandIn, type NeonStandIn } from '../../local/neon-http.ts';
import { seedStudy } from '../../local/study-seed.ts';
import { freePort, startWranglerDev, type WranglerDev } from '../../local/wrangler-dev.ts';
import { createDb } from '../../shared/runtime/db.ts';
import { launchChromium } from './chromium.ts';

/** The name the test's OAuth client registers with. */
export const CLIENT_NAME = 'Edge Tools Test Agent';

/** A JSON body, as the test reads it. */
export type Json = Record<string, any>;

/** The client's redirect target: a server on 127.0.0.1 that keeps every URL it is called with. */
export interface Callback {
  url: string;
  /** The next callback's URL (waits for it). */
  next(): Promise<URL>;
  close(): Promise<void>;
}

/** Starts the callback server on a free port of 127.0.0.1. */
async function startCallback(): Promise<Callback> {
  const port = await freePort();
  const waiting: ((url: URL) => void)[] = [];
  const arrived: URL[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', `http://127.0.0.1:${port}`);
    // The browser asks for other things too (its favicon): only the callback path counts.
    if (url.pathname !== '/callback') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/plain' }).end('You may close this window.');
    const resolve = waiting.shift();
    if (resolve) resolve(url);
    else arrived.push(url);
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${port}/callback`,
    next: () => (arrived.length ? Promise.resolve(arrived.shift()!) : new Promise((resolve) => waiting.push(resolve))),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * What an MCP client keeps for one server, in memory: its registration, tokens and PKCE verifier;
 * `redirectToAuthorization` records the URL a desktop client would open in the browser.
 */
export class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrls: URL[] = [];

  readonly redirectUrl: string;

  constructor(redirectUrl: string) {
    this.redirectUrl = redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: CLIENT_NAME,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    return crypto.randomUUID();
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: OAuthClientInformationMixed) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'client') this.client = undefined;
  }
}

/** How the person answers the consent page: the toolsets to leave checked (all unless given), read-only, and the button. */
export interface Narrowing {
  toolsets?: string[];
  readOnly?: boolean;
  decision?: 'Approve' | 'Deny';
}

/** The stack one test file runs on, and what the test does with it. */
export interface OAuthStack {
  /** The worker's URL under wrangler dev. */
  base: string;
  /** The project the person approves with (its API key), holding the study planner's demo data. */
  tenant: CreatedProject;
  /** The Neon stand-in's connection string. */
  databaseUrl: string;
  /** The client's redirect target. */
  callback: Callback;
  /** The person's browser tab. */
  page: Page;
  /** A folder of the stack's own (wrangler's state, the browser profile), removed by {@link OAuthStack.close}. */
  temporary: string;
  /** Calls a tool over the HTTP API with the project's key: the judge of what a call wrote. */
  callOverHttp(tool: string, input: unknown): Promise<Json>;
  /** The project's rows of `table`, counted in the database. */
  rows(table: typeof documents | typeof flashcards): Promise<number>;
  /** The whole first connection: the SDK is refused, discovers, registers, and the person answers in the browser. */
  connect(
    path: string,
    narrowing?: Narrowing,
  ): Promise<{
    provider: MemoryProvider;
    requests: string[];
    serverUrl: URL;
    first: StreamableHTTPClientTransport;
    shown: string;
    answer: URL;
    recording: typeof fetch;
  }>;
  /** An SDK client connected to `serverUrl` with the provider's tokens. */
  clientFor(serverUrl: URL, provider: MemoryProvider, recording?: typeof fetch): Promise<Client>;
  /** Stops everything the stack started, and removes its folder. */
  close(): Promise<void>;
}

/** Starts the stack; on a failure, stops what had started before throwing. */
export async function startOAuthStack(): Promise<OAuthStack> {
  const temporary = mkdtempSync(join(tmpdir(), 'edge-tools-oauth-'));
  let neon: NeonStandIn | undefined;
  let worker: WranglerDev | undefined;
  let callback: Callback | undefined;
  let context: BrowserContext | undefined;
  const close = async () => {
    await context?.close();
    await callback?.close();
    worker?.stop();
    await neon?.close();
    rmSync(temporary, { recursive: true, force: true });
  };
  try {
    neon = await startNeonStandIn();
    await migrateDatabase(neon.connectionString);
    const tenant = await createProject(neon.connectionString, 'OAuth tenant');
    await seedStudy(neon.connectionString, tenant.projectId);
    worker = await startWranglerDev({
      vars: { DATABASE_URL: neon.connectionString },
      persistTo: join(temporary, 'wrangler-state'),
      sandbox: false,
    });
    const base = worker.url;
    callback = await startCallback();
    context = await launchChromium(join(temporary, 'profile'));
    const page = context.pages()[0] ?? (await context.newPage());
    return stackOn({ base, tenant, databaseUrl: neon.connectionString, callback, page, temporary, close });
  } catch (error) {
    await close();
    throw error;
  }
}

/** The test's actions on a started stack. */
function stackOn(started: Pick<OAuthStack, 'base' | 'tenant' | 'databaseUrl' | 'callback' | 'page' | 'temporary' | 'close'>): OAuthStack {
  const { base, tenant, databaseUrl, callback, page } = started;

  /** Calls a tool over the HTTP API with the project's key: the judge of what a call wrote. */
  async function callOverHttp(tool: string, input: unknown): Promise<Json> {
    const response = await fetch(`${base}/tools/${tool}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    return (await response.json()) as Json;
  }

  /** The project's rows of `table`, counted in the database. */
  async function rows(table: typeof documents | typeof flashcards): Promise<number> {
    return (await createDb(databaseUrl).select({ n: count() }).from(table).where(eq(table.projectId, tenant.projectId)))[0]!.n;
  }

  /** The person on the consent page at `url`: reads it, narrows it if told to, enters the key and presses a button. */
  async function consent(url: URL, { toolsets, readOnly = false, decision = 'Approve' }: Narrowing = {}) {
    await page.goto(url.toString());
    await page.getByLabel('API key').waitFor({ timeout: 30_000 });
    const shown = await page.locator('main').innerText();
    if (toolsets) {
      for (const box of await page.getByRole('checkbox').all()) {
        if (!toolsets.includes((await box.getAttribute('value'))!)) await box.uncheck();
      }
    }
    if (readOnly) await page.getByRole('radio', { name: /Read-only/ }).check();
    await page.getByLabel('API key').fill(tenant.apiKey);
    const answered = callback.next();
    await page.getByRole('button', { name: decision, exact: true }).click();
    return { shown, answer: await answered };
  }

  async function connect(path: string, narrowing: Narrowing = {}) {
    const provider = new MemoryProvider(callback.url);
    const requests: string[] = [];
    const recording = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const response = await fetch(input, init);
      requests.push(
        `${init?.method ?? 'GET'} ${new URL(String(input instanceof Request ? input.url : input)).pathname} ${response.status}`,
      );
      return response;
    }) as typeof fetch;
    const serverUrl = new URL(base + path);
    const first = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider, fetch: recording });
    await expect(new Client({ name: 'oauth-e2e', version: '1.0.0' }).connect(first)).rejects.toThrow(UnauthorizedError);
    expect(provider.authorizationUrls).toHaveLength(1);
    const { shown, answer } = await consent(provider.authorizationUrls[0]!, narrowing);
    return { provider, requests, serverUrl, first, shown, answer, recording };
  }

  async function clientFor(serverUrl: URL, provider: MemoryProvider, recording?: typeof fetch): Promise<Client> {
    const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider, fetch: recording }));
    return client;
  }

  return { ...started, callOverHttp, rows, connect, clientFor };
}
