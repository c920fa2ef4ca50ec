/**
 * Reading a tool's input: a request body read with a size limit and parsed as one JSON object,
 * or arguments already parsed (MCP) checked to be one. What the object holds is screened and
 * validated by validateInput (validation.ts).
 */
import { fail, type Failure } from './contract.ts';
import { duplicateKeyFailure, duplicateKeys, fieldPathOf } from './duplicate-keys.ts';
import { kindOf, quote } from './text.ts';

/** Bodies above this are refused with PAYLOAD_TOO_LARGE before they are parsed. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

/** A value read from the caller, or the failure that answers the call. */
export type Parsed<T> = { ok: true; value: T } | Failure;

const JSON_CONTENT_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Reads a request body as a JSON object, refusing wrong content types, bodies over `limitBytes`,
 * malformed JSON, a key given twice in one object (ambiguous) and non-objects. What the object holds is screened by validateInput.
 * Never throws.
 */
export async function readJsonObject(
  request: Request,
  hint: string,
  limitBytes = DEFAULT_BODY_LIMIT_BYTES,
): Promise<Parsed<Record<string, unknown>>> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!JSON_CONTENT_TYPE.test(contentType)) {
    return fail(
      'VALIDATION_ERROR',
      `The request must have Content-Type: application/json, but received ${contentType ? quote(contentType) : 'no Content-Type'}.`,
      { hint },
    );
  }
  const text = await readBody(request, limitBytes);
  if (!text.ok) return text;
  if (text.value.trim() === '') {
    return fail('VALIDATION_ERROR', 'The request body is empty; expected a JSON object with the tool input.', { hint });
  }

  let value: unknown;
  try {
    value = JSON.parse(text.value);
  } catch (error) {
    return fail('VALIDATION_ERROR', `The request body is not valid JSON (${(error as Error).message}). Send one JSON object.`, { hint });
  }
  const [repeated] = duplicateKeys(text.value);
  if (repeated) return duplicateKeyFailure({ key: repeated.key, at: fieldPathOf(repeated.path) }, hint);
  return screenInput(value, hint);
}

/**
 * Reads a request body as text, or answers PAYLOAD_TOO_LARGE as soon as it (or its declared
 * Content-Length) exceeds `limitBytes`. Never throws.
 */
export async function readBody(request: Request, limitBytes = DEFAULT_BODY_LIMIT_BYTES): Promise<Parsed<string>> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > limitBytes) return tooLarge(declared, limitBytes);
  const text = await readTextWithin(request, limitBytes);
  return text === undefined ? tooLarge(undefined, limitBytes) : { ok: true, value: text };
}

/**
 * Checks that an input already parsed (a JSON body, or MCP tool arguments) is a JSON object; its
 * content is screened by validateInput.
 */
export function screenInput(value: unknown, hint: string): Parsed<Record<string, unknown>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail('VALIDATION_ERROR', `The input must be a JSON object, but received ${kindOf(value)}.`, { hint });
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** Reads the body as text, or returns undefined as soon as it exceeds `limitBytes`. */
async function readTextWithin(request: Request, limitBytes: number): Promise<string | undefined> {
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

function tooLarge(declared: number | undefined, limitBytes: number): Failure {
  const received = declared === undefined ? 'more than that' : `${declared} bytes`;
  return fail('PAYLOAD_TOO_LARGE', `The request body must be at most ${limitBytes} bytes, but received ${received}.`, {
    hint: 'Send less data in one call: split large inputs over several calls.',
  });
}
