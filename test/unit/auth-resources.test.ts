/**
 * The auth concern's pure parts, against expectations written out by hand: which resource each
 * spelling of a URL is, what an OAuth setting may hold, and where registration stops.
 */
import { describe, expect, it } from 'vitest';
import { bearerToken } from '../../shared/auth/bearer.ts';
import {
  canonicalResource,
  canonicalResourceParameter,
  MCP_RESOURCE_PATHS,
  namedResource,
  oauthSettings,
  toolsetsOfResource,
} from '../../shared/auth/oauth.ts';
import { registrationProblem } from '../../shared/auth/registration.ts';

const O = 'https://x.dev';

describe('canonical resources', () => {
  it('reads every spelling the router accepts as one resource, and the HTTP routes as the origin', () => {
    const cases: [string, string | undefined][] = [
      ['/mcp', `${O}/mcp`],
      ['/mcp/', `${O}/mcp`],
      ['/mcp/study', `${O}/mcp/study`],
      ['/mcp/Study', `${O}/mcp/study`],
      ['/mcp/STUDY/', `${O}/mcp/study`],
      ['/mcp/task_analysis', `${O}/mcp/task-analysis`],
      ['/mcp/study,documents', `${O}/mcp/documents,study`],
      ['/mcp/Study,%20task_analysis', `${O}/mcp/task-analysis,study`],
      ['/mcp/code', `${O}/mcp/code`],
      ['/mcp/code/', `${O}/mcp/code`],
      ['/mcp/Code', undefined],
      ['/mcp/studies', undefined],
      ['/mcp/study/extra', undefined],
      ['/mcp/%E0%A4%A', undefined],
      ['/tools/list-plans', O],
      ['/', O],
    ];
    for (const [path, expected] of cases) expect(canonicalResource(new URL(O + path)), path).toBe(expected);
  });

  it('names the resource as the client spelled it, for its metadata and challenge', () => {
    expect(namedResource(new URL(`${O}/mcp/Study/`))).toBe(`${O}/mcp/Study`);
    expect(namedResource(new URL(`${O}/tools`))).toBe(O);
    expect(namedResource(new URL(`${O}/mcp/nothing`))).toBeUndefined();
    expect(toolsetsOfResource(`${O}/mcp/Study`)).toEqual(['study']);
    expect(toolsetsOfResource(O)).toEqual(['documents', 'task-analysis', 'table-tools', 'study']);
    expect(toolsetsOfResource(`${O}/mcp/code`)).toEqual(['documents', 'task-analysis', 'table-tools', 'study']);
  });

  it("canonicalises a client's resource parameter of this origin only", () => {
    expect(canonicalResourceParameter(`${O}/mcp/Study`, O)).toBe(`${O}/mcp/study`);
    expect(canonicalResourceParameter('https://other.dev/mcp/Study', O)).toBe('https://other.dev/mcp/Study');
    expect(canonicalResourceParameter(`${O}/mcp/study?x=1`, O)).toBe(`${O}/mcp/study?x=1`);
    expect(canonicalResourceParameter('not a url', O)).toBe('not a url');
  });

  it('has one MCP resource per non-empty choice of four toolsets, /mcp and /mcp/code', () => {
    expect(MCP_RESOURCE_PATHS).toHaveLength(17);
    expect(new Set(MCP_RESOURCE_PATHS).size).toBe(17);
    expect(MCP_RESOURCE_PATHS).toContain('/mcp/code');
    expect(MCP_RESOURCE_PATHS).toContain('/mcp/documents,task-analysis,table-tools,study');
  });
});

describe('OAuth settings', () => {
  it('takes a whole number of seconds from 60 to 30 days, and names the variable otherwise', () => {
    expect(oauthSettings({})).toEqual({ accessTokenTtlSeconds: 3600, registrationsPerHour: 20 });
    expect(oauthSettings({ OAUTH_ACCESS_TOKEN_TTL_SECONDS: '60' })).toEqual({ accessTokenTtlSeconds: 60, registrationsPerHour: 20 });
    for (const wrong of ['59', '0', '-5', '1e3', '90.5', 'an hour', '2592001']) {
      const settings = oauthSettings({ OAUTH_ACCESS_TOKEN_TTL_SECONDS: wrong });
      expect('problem' in settings && settings.problem, wrong).toContain('OAUTH_ACCESS_TOKEN_TTL_SECONDS');
    }
  });

  it('takes registrations per address an hour from 1 to 100,000, and names the variable otherwise', () => {
    expect(oauthSettings({ OAUTH_REGISTRATIONS_PER_HOUR: ' 500 ' })).toEqual({ accessTokenTtlSeconds: 3600, registrationsPerHour: 500 });
    for (const wrong of ['0', '-1', '2.5', 'many', '100001']) {
      const settings = oauthSettings({ OAUTH_REGISTRATIONS_PER_HOUR: wrong });
      expect('problem' in settings && settings.problem, wrong).toContain(
        `OAUTH_REGISTRATIONS_PER_HOUR must be a whole number of registrations from 1 to 100000 (default 20), but it is '${wrong}'.`,
      );
    }
  });
});

describe('the bearer credential', () => {
  it('is read from "Bearer <one token>" only', () => {
    expect(bearerToken('Bearer et_abc')).toBe('et_abc');
    expect(bearerToken('bearer   tok  ')).toBe('tok');
    for (const header of [null, undefined, '', 'Basic abc', 'Bearer', 'Bearer a b', 'et_abc'])
      expect(bearerToken(header), String(header)).toBeUndefined();
  });
});

describe('registration bounds', () => {
  const valid = { client_name: 'Agent', redirect_uris: ['https://a.example/cb'] };
  it('accepts an ordinary registration and refuses each excess with what was allowed', () => {
    expect(registrationProblem(JSON.stringify(valid))).toBeUndefined();
    expect(registrationProblem(JSON.stringify({ ...valid, client_name: 'x'.repeat(101) }))?.error_description).toContain(
      'at most 100 characters, but has 101',
    );
    expect(registrationProblem(JSON.stringify({ ...valid, redirect_uris: Array(11).fill('https://a.example/cb') }))?.error).toBe(
      'invalid_redirect_uri',
    );
    expect(registrationProblem(JSON.stringify({ ...valid, contacts: Array(11).fill('a@b.c') }))?.error_description).toContain(
      "'contacts' may list at most 10",
    );
    expect(registrationProblem('x'.repeat(20_000))?.error_description).toContain('at most 16384');
    expect(registrationProblem('[1]')?.error).toBe('invalid_client_metadata');
  });
});
