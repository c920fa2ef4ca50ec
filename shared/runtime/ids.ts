/**
 * Ids derived from a name instead of drawn at random, so that a repeated attempt of the same call
 * writes the same rows again (and recognises them) instead of new ones.
 */
import { toHex } from '../core/hashing.ts';

/** The namespace of every id this project derives (a fixed random UUID, as RFC 9562 suggests). */
export const ID_NAMESPACE = '6f1d3c2a-8b4e-4f0a-9c5d-2e7b1a4c8d3f';

/**
 * A name-based UUID (version 5, RFC 9562: SHA-1 of a namespace and the name). The same name gives
 * the same id on every isolate, today and later. `namespace` defaults to {@link ID_NAMESPACE}.
 *
 * @example
 * await nameBasedUuid('project:tool:call:document') // '8f0e…' every time
 */
export async function nameBasedUuid(name: string, namespace: string = ID_NAMESPACE): Promise<string> {
  const space = hexToBytes(namespace);
  const nameBytes = new TextEncoder().encode(name);
  const input = new Uint8Array(space.length + nameBytes.length);
  input.set(space);
  input.set(nameBytes, space.length);
  const hash = new Uint8Array(await crypto.subtle.digest('SHA-1', input)).slice(0, 16);
  hash[6] = (hash[6]! & 0x0f) | 0x50; // version 5
  hash[8] = (hash[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const hex = toHex(hash);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function hexToBytes(uuid: string): Uint8Array {
  const hex = uuid.replace(/-/g, '');
  return Uint8Array.from({ length: hex.length / 2 }, (_, i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16));
}
