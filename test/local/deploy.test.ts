/**
 * What `npm run deploy` asks wrangler for: the gateway alone gets the Cron Trigger (retention runs
 * once per deployment), a tool's own worker gets none, since both are built from wrangler.toml and a
 * Workers Free account has 5 Cron Triggers in all.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { deployArgs, GATEWAY_CRON, WITHOUT_SANDBOX_CONFIG } from '../../local/deploy.ts';

/** The values `args` gives `--triggers`, however many times it is given. */
function triggers(args: string[]): string[] {
  return args.flatMap((arg, index) => (args[index - 1] === '--triggers' ? [arg] : []));
}

describe('npm run deploy', () => {
  it('gives the gateway one hourly Cron Trigger, dry run or not', () => {
    expect(GATEWAY_CRON).toMatch(/^\d{1,2} \* \* \* \*$/);
    expect(triggers(deployArgs(undefined, false))).toEqual([GATEWAY_CRON]);
    expect(triggers(deployArgs(undefined, true))).toEqual([GATEWAY_CRON]);
  });

  it("gives a tool's own worker none, and wrangler.toml declares none for it to inherit", () => {
    expect(deployArgs('log-mood', false)).not.toContain('--triggers');
    const config = readFileSync(new URL('../../wrangler.toml', import.meta.url), 'utf8');
    expect(config).not.toMatch(/^\s*\[triggers\]|^\s*crons\s*=/m);
  });

  it("leaves code mode's sandbox binding out of a tool's worker, and of the gateway with --no-code-mode, and out of nothing else", () => {
    const configOf = (args: string[]) => args[args.indexOf('--config') + 1];
    expect(configOf(deployArgs('log-mood', true))).toBe(WITHOUT_SANDBOX_CONFIG);
    expect(configOf(deployArgs(undefined, true, { codeMode: false }))).toBe(WITHOUT_SANDBOX_CONFIG);
    expect(deployArgs(undefined, true)).not.toContain('--config');
    const full = readFileSync(new URL('../../wrangler.toml', import.meta.url), 'utf8');
    const without = readFileSync(new URL(`../../${WITHOUT_SANDBOX_CONFIG}`, import.meta.url), 'utf8');
    expect(full).toMatch(/^\[\[services\]\]\nbinding = "SANDBOX"$/m);
    expect(without).not.toContain('SANDBOX');
    // Everything else is kept as written.
    for (const line of full.split('\n').filter((line) => /^\[|^\w+ = /.test(line) && !/services|SANDBOX|edge-tools-sandbox/.test(line)))
      expect(without).toContain(line);
  });
});
