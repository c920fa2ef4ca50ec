/**
 * The environment wrangler runs with: no metrics, no update check, no network look-ups. Offline
 * runs (dev, dry-run deploys) also keep wrangler's config inside the project (.wrangler/, git-ignored);
 * a real deploy keeps the user's own config, where `wrangler login` stored the credentials.
 */
import { join } from 'node:path';

export function wranglerEnv(root: string, { offline }: { offline: boolean }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WRANGLER_SEND_METRICS: 'false',
    WRANGLER_HIDE_BANNER: 'true',
  };
  if (offline) {
    env.CLOUDFLARE_CF_FETCH_ENABLED = 'false';
    env.XDG_CONFIG_HOME = join(root, '.wrangler', 'config');
  }
  return env;
}
