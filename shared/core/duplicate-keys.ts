/**
 * Keys named twice in one JSON object (`{"mood": "happy", "mood": "sad"}`). JSON.parse keeps the
 * last silently; which one the caller meant is ambiguous, so an input that does it is refused
 * (RFC 8259: "The names within an object SHOULD be unique"). Found in the text as sent, before
 * parsing forgets them, with the path to the object that repeats the key.
 */
import { fail, type Failure } from './contract.ts';

/** A key repeated in one object, and where that object is (`["params", "arguments"]`, `[0, "items", 2]`). */
export interface DuplicateKey {
  path: (string | number)[];
  key: string;
}

type Frame = { kind: 'object'; keys: Set<string>; key?: string } | { kind: 'array'; index: number };

/**
 * Every key repeated within one object of `text`, which must be valid JSON (parse it first). Keys
 * are compared decoded (`"m\u006fod"` is `"mood"`).
 */
export function duplicateKeys(text: string): DuplicateKey[] {
  const found: DuplicateKey[] = [];
  const stack: Frame[] = [];
  const path = () => stack.slice(0, -1).map((frame) => (frame.kind === 'object' ? frame.key! : frame.index));
  let expectingKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const top = stack[stack.length - 1];
      if (expectingKey && top?.kind === 'object') {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) found.push({ path: path(), key });
        top.keys.add(key);
        top.key = key;
        expectingKey = false;
      }
      i = end;
    } else if (c === '{') {
      stack.push({ kind: 'object', keys: new Set() });
      expectingKey = true;
    } else if (c === '[') {
      stack.push({ kind: 'array', index: 0 });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      const top = stack[stack.length - 1];
      if (top?.kind === 'object') expectingKey = true;
      else if (top) top.index++;
    }
  }
  return found;
}

/** VALIDATION_ERROR for an input that names `duplicate.key` twice (`at`: the object's field path, empty at the top). */
export function duplicateKeyFailure(duplicate: { key: string; at: string }, hint: string): Failure {
  const field = duplicate.at ? `${duplicate.at}.${duplicate.key}` : duplicate.key;
  const message = `Field '${field}' is given twice in the same object, so which value is meant is ambiguous; send it once.`;
  return fail('VALIDATION_ERROR', message, {
    hint,
    details: { fields: [{ field, code: 'duplicate_key', message, expected: 'each field at most once', received: 'the field twice' }] },
  });
}

/** A field path as messages write it: `items[2].title`. */
export function fieldPathOf(path: readonly (string | number)[]): string {
  return path.map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? part : `.${part}`)).join('');
}
