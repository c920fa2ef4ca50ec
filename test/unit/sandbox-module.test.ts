import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SANDBOX_MODULE, sandboxModuleSource } from '../../local/sandbox-module.ts';

describe('the committed execution module', () => {
  it('is exactly shared/codemode/sandbox/ bundled (run `npm run build:sandbox` after editing it)', async () => {
    expect(readFileSync(SANDBOX_MODULE, 'utf8')).toBe(await sandboxModuleSource());
  });

  it('imports nothing but the Workers runtime and the agent module written beside it', async () => {
    const source = await sandboxModuleSource();
    const imports = [...source.matchAll(/import\s*(?:\{[^}]*\}|[\w$]+)\s*from\\"([^"\\]+)\\"/g)].map((match) => match[1]);
    expect(imports.sort()).toEqual(['./agent.js', 'cloudflare:workers']);
  });
});
