/**
 * The dashboard's calls to the worker's JSON routes: the API key the person entered travels as a
 * bearer token (kept in this tab's sessionStorage only), and each answer's envelope becomes its
 * data or an Error with the answer's own message.
 */
import type { ExecutionDetail, ExecutionsPage } from '../../../observability/executions.ts';
import type { Metrics } from '../../../observability/metrics.ts';
import type { RefusalsPage } from '../../../observability/refusals.ts';
import type { ConnectedClients } from '../../grants.ts';

export type { ExecutionDetail, ExecutionsPage, Metrics, RefusalsPage, ConnectedClients };
export type Execution = ExecutionsPage['executions'][number];
export type Refusal = RefusalsPage['refusals'][number];
export type ConnectedClient = ConnectedClients['grants'][number];

const STORAGE_KEY = 'edge-tools-api-key';

/** Thrown when the worker refuses the key: the page asks for one again. */
export class KeyRefused extends Error {}

interface Envelope<T> {
  success: boolean;
  data?: T;
  message?: string;
  error?: { code: string; message: string };
}

/** The key of this tab, if one was entered. */
export function storedKey(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

/** Keeps the key for this tab (or forgets it, with null). */
export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(STORAGE_KEY);
  else sessionStorage.setItem(STORAGE_KEY, key);
}

/** Calls one JSON route with the tab's key; answers its data, or throws with its message. */
export async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers: { authorization: `Bearer ${storedKey() ?? ''}` }, cache: 'no-store' });
  } catch (error) {
    throw new Error(`The worker could not be reached: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const body = (await response.json().catch(() => null)) as Envelope<T> | null;
  if (!body) throw new Error(`The worker answered ${response.status} without the expected JSON.`);
  if (response.status === 401) throw new KeyRefused(`The API key was refused: ${body.error?.message ?? body.message ?? 'unknown key'}`);
  if (!body.success || body.data === undefined)
    throw new Error(body.error?.message ?? body.message ?? `The worker answered ${response.status}.`);
  return body.data;
}

/** A query string from the parameters that have a value. */
export function query(parameters: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined && value !== '') search.set(name, String(value));
  return search.toString();
}
