/**
 * OAuth as a hosted agent's client runs it, end to end: the official MCP TypeScript SDK's OAuth
 * client (an `OAuthClientProvider` given to `StreamableHTTPClientTransport`, and its `auth()`)
 * against the real worker under `wrangler dev` with the Neon stand-in, the consent page driven in
 * Debian's Chromium by playwright-core, the client's callback a server on 127.0.0.1 as a desktop
 * client's is. Judges other than the gateway's OAuth code: the SDK (discovery, registration, PKCE,
 * token exchange and refresh are its own), the HTTP API with the project's API key (what a call
 * wrote, what a toolset holds), the grants table, and the official MCP conformance suite's
 * authorization-server scenarios, run by its own CLI with the same browser approving. The stack
 * (wrangler dev, the callback, Chromium) and the SDK's client provider are in oauth-fixture.ts.
 *
 * Without Chromium (set CHROMIUM_PATH, or install Debian's `chromium`) it is skipped, loudly;
 * CI installs it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { auth, discoverAuthorizationServerMetadata, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documents, flashcards } from '../../drizzle/schema.ts';
import type { CreatedProject } from '../../local/database.ts';
import { createDb } from '../../shared/runtime/db.ts';
import { listGrants } from '../../shared/auth/grants.ts';
import { hasChromium } from './chromium.ts';
import { clientOf } from './oauth-client.ts';
import { CLIENT_NAME, startOAuthStack, type Callback, type Json, type OAuthStack } from './oauth-fixture.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const chromiumFound = hasChromium('OAuth browser test');

describe.skipIf(!chromiumFound)('OAuth with the MCP SDK and a person in Chromium', () => {
  let stack: OAuthStack;
  let base: string;
  let tenant: CreatedProject;
  let callback: Callback;
  let page: Page;

  beforeAll(async () => {
    stack = await startOAuthStack();
    ({ base, tenant, callback, page } = stack);
  }, 300_000);

  afterAll(async () => {
    await stack?.close();
  });

  it('discovers from a 401, registers, is approved in the browser, calls its toolset only, refreshes with rotation, and stops when revoked', async () => {
    const { provider, requests, serverUrl, first, shown, answer, recording } = await stack.connect('/mcp/study');

    // Discovery came from the 401's challenge: the resource's metadata, then the authorization server's, then registration.
    expect(requests.slice(0, 4)).toEqual([
      'POST /mcp/study 401',
      'GET /.well-known/oauth-protected-resource/mcp/study 200',
      'GET /.well-known/oauth-authorization-server 200',
      'POST /oauth/register 201',
    ]);
    const asked = provider.authorizationUrls[0]!.searchParams;
    expect(Object.fromEntries(asked)).toMatchObject({
      response_type: 'code',
      code_challenge_method: 'S256',
      resource: `${base}/mcp/study`,
      scope: 'study:read study:write',
      redirect_uri: callback.url,
    });

    // The page named the client, where access goes, and what it asked for.
    expect(shown).toContain(`Connect ${CLIENT_NAME} to edge-tools?`);
    expect(shown).toContain(`Access will be sent to ${new URL(callback.url).hostname}.`);
    expect(shown).toMatch(/study: study plans/);
    expect(shown).not.toMatch(/documents:/);

    // The browser was sent back with a code for this request.
    expect(answer.pathname).toBe('/callback');
    expect(answer.searchParams.get('state')).toBe(asked.get('state'));
    expect(asked.get('state')).toBeTruthy();
    expect(answer.searchParams.get('iss')).toBe(base);
    await first.finishAuth(answer.searchParams.get('code')!);
    expect(provider.saved).toMatchObject({ token_type: expect.stringMatching(/^bearer$/i), scope: 'study:read study:write' });
    expect(provider.saved!.refresh_token).toBeTruthy();

    // tools/list is the study toolset, as the catalog lists it; a read and a write work, as the project.
    const client = await stack.clientFor(serverUrl, provider, recording);
    const listed = (await client.listTools()).tools.map((tool) => tool.name).sort();
    const catalog = (await (await fetch(`${base}/tools?toolset=study`)).json()) as Json;
    expect(listed).toEqual(catalog.data.tools.map((tool: { id: string }) => tool.id).sort());
    const plans = await client.callTool({ name: 'list-plans', arguments: {} });
    expect((plans.structuredContent as Json).data.plans.length).toBeGreaterThan(0);
    const session = `oauth-${crypto.randomUUID()}`;
    const saved = await client.callTool({
      name: 'save-message',
      arguments: { session_id: session, role: 'user', content: 'Saved with an OAuth token.' },
    });
    expect(saved.isError, JSON.stringify(saved.structuredContent)).toBeFalsy();
    const readBack = await stack.callOverHttp('get-messages', { session_id: session });
    expect(readBack.data.messages.map((message: Json) => message.content)).toEqual(['Saved with an OAuth token.']);

    // Another toolset's tool is refused here, and the token is refused on that toolset's URL: nothing written.
    const documentsBefore = await stack.rows(documents);
    const refused = await client.callTool({ name: 'add-document', arguments: { title: 'Not granted', content: '- [ ] a task' } });
    expect(refused.isError).toBe(true);
    const elsewhere = await clientOf(base).mcp('/mcp/documents', provider.saved!.access_token, 'tools/list');
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(elsewhere.headers.get('www-authenticate')).toContain(
      `resource_metadata="${base}/.well-known/oauth-protected-resource/mcp/documents"`,
    );
    expect(await stack.rows(documents)).toBe(documentsBefore);

    // Refresh as the SDK does it when a token expires: new tokens each time, rotating the refresh token.
    const original = provider.saved!;
    expect(await auth(provider, { serverUrl })).toBe('AUTHORIZED');
    const refreshed = provider.saved!;
    expect(refreshed.access_token).not.toBe(original.access_token);
    expect(refreshed.refresh_token).not.toBe(original.refresh_token);
    expect(await auth(provider, { serverUrl })).toBe('AUTHORIZED');
    expect((await client.listTools()).tools.length).toBe(listed.length);

    // Revocation (RFC 7009) at the endpoint the metadata names: the token stops working, the SDK's
    // refresh fails, and the client is sent back to the person for a new authorization.
    const metadata = (await discoverAuthorizationServerMetadata(base)) as Json;
    const revoked = await fetch(metadata.revocation_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: provider.saved!.refresh_token!,
        token_type_hint: 'refresh_token',
        client_id: provider.client!.client_id,
      }),
    });
    expect(revoked.status).toBe(200);
    const lastToken = provider.saved!.access_token;
    const afterRevocation = await clientOf(base).mcp('/mcp/study', lastToken, 'tools/list');
    expect(afterRevocation.status).toBe(401);
    expect(afterRevocation.headers.get('www-authenticate')).toContain('error="invalid_token"');
    await expect(client.callTool({ name: 'list-plans', arguments: {} })).rejects.toThrow(UnauthorizedError);
    expect(provider.authorizationUrls).toHaveLength(2);

    // A refresh token already exchanged is refused with invalid_grant and issues nothing (its replay
    // on a live grant revokes the grant: test/integration/auth-attacks-hygiene.test.ts).
    const stale = await clientOf(base).tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: original.refresh_token!,
      client_id: provider.client!.client_id,
    });
    expect(stale.status).toBe(400);
    expect(stale.body.error).toBe('invalid_grant');
    expect(stale.body.access_token).toBeUndefined();
    await client.close();
  });

  it('a toolset URL pasted in another spelling (/mcp/Study/, /mcp/task_analysis): the SDK accepts its metadata, and the token works on that URL', async () => {
    for (const [path, toolset] of [
      ['/mcp/Study/', 'study'],
      ['/mcp/task_analysis', 'task-analysis'],
    ] as const) {
      const { provider, serverUrl, first, shown, answer } = await stack.connect(path);
      expect(provider.authorizationUrls[0]!.searchParams.get('scope'), path).toBe(`${toolset}:read ${toolset}:write`);
      expect(shown, path).toContain(`${toolset}:`);
      await first.finishAuth(answer.searchParams.get('code')!);
      const client = await stack.clientFor(serverUrl, provider);
      const listed = (await client.listTools()).tools.map((tool) => tool.name).sort();
      const catalog = (await (await fetch(`${base}/tools?toolset=${toolset}`)).json()) as Json;
      expect(listed, path).toEqual(catalog.data.tools.map((tool: { id: string }) => tool.id).sort());
      await client.close();
    }
  });

  it('a person who narrows the grant to one toolset, read-only: only its reading tools are listed, the rest refused, the grant recorded so', async () => {
    const { provider, serverUrl, first, shown, answer } = await stack.connect('/mcp', { toolsets: ['study'], readOnly: true });
    for (const toolset of ['documents', 'task-analysis', 'table-tools', 'study']) expect(shown).toContain(`${toolset}:`);
    await first.finishAuth(answer.searchParams.get('code')!);
    expect(provider.saved!.scope).toBe('study:read');

    const client = await stack.clientFor(serverUrl, provider);
    const tools = (await client.listTools()).tools;
    expect(tools.map((tool) => tool.name)).toContain('list-plans');
    expect(tools.every((tool) => tool.annotations?.readOnlyHint === true)).toBe(true);
    const [cardsBefore, documentsBefore] = [await stack.rows(flashcards), await stack.rows(documents)];
    for (const [name, args, reason] of [
      ['create-flashcard', { front: 'el perro', back: 'the dog' }, 'read_only'],
      ['add-document', { title: 'Not granted', content: '- [ ] a task' }, 'toolset_not_granted'],
    ] as const) {
      const refused = await client.callTool({ name, arguments: args });
      expect((refused.structuredContent as Json).error).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason } });
    }
    expect([await stack.rows(flashcards), await stack.rows(documents)]).toEqual([cardsBefore, documentsBefore]);
    await client.close();

    const grants = await listGrants(createDb(stack.databaseUrl), tenant.projectId);
    const grant = grants.find((row) => row.clientId === provider.client!.client_id)!;
    expect(grant).toMatchObject({
      client: CLIENT_NAME,
      redirectHost: new URL(callback.url).hostname,
      resource: `${base}/mcp`,
      toolsets: ['study'],
      readOnly: true,
      revokedAt: null,
    });
  });

  it('a person who denies: the client is told access_denied, gets no token, and nothing is recorded', async () => {
    const { provider, answer } = await stack.connect('/mcp/study', { decision: 'Deny' });
    expect(answer.searchParams.get('error')).toBe('access_denied');
    expect(answer.searchParams.get('code')).toBeNull();
    expect(provider.saved).toBeUndefined();
    const grants = await listGrants(createDb(stack.databaseUrl), tenant.projectId);
    expect(grants.filter((row) => row.clientId === provider.client!.client_id)).toEqual([]);
  });

  it("passes the MCP conformance suite's authorization-server scenarios, the person approving in the browser", async () => {
    const results = join(stack.temporary, 'conformance');
    const suite = spawn(
      process.execPath,
      ['local/mcp-conformance.ts', '--authorization', '--url', `${base}/mcp/study`, '--output-dir', results],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    const authorizationUrl = new Promise<URL>((resolve) => {
      suite.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const found = /^(http\S+\/authorize\?\S+)$/m.exec(output);
        if (found) resolve(new URL(found[1]!));
      });
    });
    suite.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(suite, 'exit') as Promise<[number | null]>;
    // The suite's own callback server receives the browser's redirect.
    const url = await Promise.race([
      authorizationUrl,
      exited.then(() => Promise.reject(new Error(`The suite ended without an authorization URL:\n${output}`))),
    ]);
    await page.goto(url.toString());
    await page.getByLabel('API key').fill(tenant.apiKey, { timeout: 30_000 });
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    const [code] = await exited;

    const checks = readdirSync(results, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('checks.json'))
      .flatMap((file) => JSON.parse(readFileSync(join(results, file), 'utf8')) as { id: string; status: string }[]);
    expect(checks.map((check) => check.id).sort()).toEqual([
      'authorization-code-grant',
      'authorization-server-metadata',
      'authorization-server-metadata-cimd',
    ]);
    expect(
      checks.filter((check) => check.status !== 'SUCCESS'),
      output,
    ).toEqual([]);
    expect(code, output).toBe(0);
  }, 120_000);
});
