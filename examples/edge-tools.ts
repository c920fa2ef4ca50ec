/**
 * What every example needs: the gateway's MCP URL for a toolset and an API key, from the
 * environment when an example runs on its own:
 *
 *   EDGE_TOOLS_URL  a toolset's MCP endpoint (default: the local stack, http://127.0.0.1:8787/mcp/study)
 *   EDGE_TOOLS_KEY  an API key of the project (`npm run keys -- create`, or the one `npm run dev` prints)
 */

/** Where the gateway's MCP endpoint is and the key to call it with. */
export interface EdgeTools {
  /** A toolset's MCP URL, e.g. `https://edge-tools.<account>.workers.dev/mcp/study`. */
  url: string;
  /** An API key of the project. */
  key: string;
}

/** The defaults of {@link edgeToolsFromEnv}. */
export const EDGE_TOOLS_DEFAULTS = { url: 'http://127.0.0.1:8787/mcp/study' } as const;

/** {@link EdgeTools} from EDGE_TOOLS_URL and EDGE_TOOLS_KEY; throws without a key. */
export function edgeToolsFromEnv(env: Record<string, string | undefined> = process.env): EdgeTools {
  const key = env.EDGE_TOOLS_KEY;
  if (!key) throw new Error('Set EDGE_TOOLS_KEY to an API key of the project (npm run keys -- create).');
  return { url: env.EDGE_TOOLS_URL ?? EDGE_TOOLS_DEFAULTS.url, key };
}

/** The header every MCP request to the gateway carries. */
export function authorization({ key }: EdgeTools): { Authorization: string } {
  return { Authorization: `Bearer ${key}` };
}
