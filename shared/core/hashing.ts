/**
 * Hashing and comparing secrets, written once for every layer that stores or checks one (API keys,
 * the metrics token): a key is stored only as its SHA-256, and compared in constant time. Hex
 * encoding of bytes (digests, random ids) is here too, once.
 */

/** Bytes as lower-case hex, two digits a byte: `[0x0a, 0xff]` -> `'0aff'`. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The SHA-256 of a text (its UTF-8 bytes), hex-encoded. */
export async function sha256Hex(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))));
}

/** The SHA-256 of a key, hex-encoded: what `api_keys.key_hash` stores. */
export function hashApiKey(key: string): Promise<string> {
  return sha256Hex(key);
}

/** Compares two strings in time that depends only on their length. */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** Bytes as unpadded base64url (RFC 4648 §5): the alphabet of API keys. */
export function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}
