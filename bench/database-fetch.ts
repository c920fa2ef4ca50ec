/**
 * What the benches see of the database client's requests: the global fetch is wrapped, process-wide,
 * until the returned function restores it. Requests to an SQL endpoint (`…/sql`, Neon's and the
 * stand-in's) go to `handle`, which gets the original fetch to forward them; every other request
 * (Redis, OTLP) passes through untouched.
 */
export function interceptDatabase(handle: (url: string, init: RequestInit, forward: typeof fetch) => Promise<Response>): () => void {
  const original = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    return new URL(url).pathname === '/sql' ? handle(url, init ?? {}, original) : original(input, init);
  };
  return () => void (globalThis.fetch = original);
}
