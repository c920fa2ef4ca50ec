/**
 * What crosses between the gateway and the sandbox: messages cut into frames under Workers' 1 MiB
 * and joined back exactly, and every message from the sandbox checked before use (size before
 * parsing, nesting on the text, shape, bounded fields, logs counted again, the result cut).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkAnswer, MAX_MESSAGE_CHARS, readSandboxMessage } from '../../shared/codemode/answer.ts';
import { CODE_MODE_LIMITS } from '../../shared/codemode/limits.ts';
import { FRAME_CHARS, SANDBOX_CLOSE_CODES, toFrames, Unframer, type SandboxAnswer } from '../../shared/codemode/protocol.ts';
import { closedEarly, loadedWorkerFailed } from '../../shared/codemode/sandbox.ts';

const join = (frames: string[], maxChars = 10_000_000) => {
  const unframer = new Unframer(maxChars);
  const messages: string[] = [];
  for (const frame of frames) {
    const message = unframer.push(frame);
    if (message !== undefined) messages.push(message);
  }
  return messages;
};

describe('frames', () => {
  it('carries a short message whole and a long one in parts, joined back exactly, surrogate pairs unsplit', () => {
    expect(toFrames('{"a":1}')).toEqual(['{"a":1}']);
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.integer({ min: 4, max: 40 }), (text, frameChars) => {
        const message = JSON.stringify({ text });
        const frames = toFrames(message, frameChars);
        for (const frame of frames) {
          expect(frame.length).toBeLessThanOrEqual(frameChars);
          const last = frame.charCodeAt(frame.length - 1);
          expect(last >= 0xd800 && last <= 0xdbff, 'a frame ending in half a surrogate pair').toBe(false);
        }
        expect(join(frames)).toEqual([message]);
      }),
    );
  });

  it('keeps every frame of a 1 MiB call input under 1 MiB of UTF-8', () => {
    const message = JSON.stringify({ type: 'call', input: '€'.repeat(1024 * 1024) });
    const frames = toFrames(message);
    expect(frames.length).toBeGreaterThan(1);
    for (const frame of frames) expect(new TextEncoder().encode(frame).length).toBeLessThan(1024 * 1024);
    expect(FRAME_CHARS * 3).toBeLessThan(1024 * 1024);
    expect(join(frames)).toEqual([message]);
  });

  it('refuses a message over the bound, a binary frame, an unknown frame, and a whole message in the middle of parts', () => {
    expect(() => join(toFrames(JSON.stringify({ a: 'x'.repeat(100) }), 20), 50)).toThrow(/more than 50 characters/);
    expect(() => join(['{"a":"' + 'x'.repeat(100) + '"}'], 50)).toThrow(/more than 50 characters/);
    expect(() => new Unframer(100).push(new ArrayBuffer(4))).toThrow(/binary/);
    expect(() => new Unframer(100).push('hello')).toThrow(/neither/);
    const unframer = new Unframer(100);
    unframer.push('>{"a":');
    expect(() => unframer.push('{"b":1}')).toThrow(/before the last part/);
  });
});

describe('readSandboxMessage', () => {
  it('reads each kind of message', () => {
    expect(readSandboxMessage('{"type":"running"}')).toEqual({ ok: true, message: { type: 'running' } });
    expect(readSandboxMessage('{"type":"call","id":3,"name":"listPlans","input":"{}"}')).toEqual({
      ok: true,
      message: { type: 'call', id: 3, name: 'listPlans', input: '{}' },
    });
    expect(readSandboxMessage('{"type":"failed","failure":"Worker exceeded CPU time limit."}')).toMatchObject({ ok: true });
  });

  it('refuses a message over the bound before parsing it, and one nested deeper than its shape', () => {
    expect(readSandboxMessage(`{"type":"running","x":"${'x'.repeat(MAX_MESSAGE_CHARS)}"}`)).toMatchObject({
      ok: false,
      problem: /characters, over/,
    });
    expect(readSandboxMessage(`{"type":"running","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`)).toMatchObject({
      ok: false,
      problem: /nested deeper/,
    });
  });

  it('refuses what breaks the shape: an unknown type, a wrong field, an extra field, an input over 1 MiB', () => {
    for (const text of [
      'not json',
      '[]',
      '{"type":"hello"}',
      '{"type":"call","id":-1,"name":"x","input":null}',
      '{"type":"call","id":1,"name":3,"input":null}',
      '{"type":"running","extra":true}',
      `{"type":"call","id":1,"name":"x","input":"${'x'.repeat(1024 * 1024 + 1)}"}`,
      '{"type":"end","answer":{"logs":"one line","logsDropped":0,"stopped":null},"callsRefused":0}',
      '{"type":"end","answer":{"logs":[],"logsDropped":0,"stopped":"forged"},"callsRefused":0}',
    ])
      expect(readSandboxMessage(text).ok, text.slice(0, 80)).toBe(false);
  });

  it('cuts the names and messages it reads to their bounds', () => {
    const read = readSandboxMessage(
      JSON.stringify({ type: 'call', id: 1, name: 'n'.repeat(5_000), input: null, problem: 'p'.repeat(50_000) }),
    );
    if (!read.ok || read.message.type !== 'call') throw new Error('expected a call');
    expect(read.message.name.length).toBeLessThanOrEqual(200);
    expect(read.message.problem!.length).toBeLessThanOrEqual(2_000);
  });
});

describe('checkAnswer', () => {
  const answer = (fields: Partial<SandboxAnswer>): SandboxAnswer => ({ logs: [], logsDropped: 0, stopped: null, ...fields });

  it('counts the logs again: lines and characters within the bounds, the rest dropped, whatever the sandbox claimed', () => {
    const lines = Array.from({ length: 5_000 }, (_, i) => `line ${i} ${'x'.repeat(50)}`);
    const checked = checkAnswer(answer({ result: '1', logs: lines, logsDropped: 7 }));
    if (!checked.ok) throw new Error(checked.problem);
    expect(checked.answer.logs.length).toBeLessThanOrEqual(CODE_MODE_LIMITS.logLines);
    expect(checked.answer.logs.join('').length).toBeLessThanOrEqual(CODE_MODE_LIMITS.logChars);
    expect(checked.answer.logs.length + checked.answer.logsDropped).toBe(5_007);
  });

  it('cuts the result to the budget and the depth, keeping the full length the sandbox counted', () => {
    const big = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ({ i })));
    const checked = checkAnswer(answer({ result: big.slice(0, CODE_MODE_LIMITS.resultHandedBackChars), resultChars: big.length }));
    if (!checked.ok) throw new Error(checked.problem);
    expect(checked.answer.result).toMatchObject({ chars: big.length, cut: true, tooDeep: false });
    expect(JSON.stringify(checked.answer.result!.value).length).toBeLessThanOrEqual(CODE_MODE_LIMITS.resultChars);
    const small = checkAnswer(answer({ result: '{"a":[1,2]}', resultChars: 11 }));
    expect(small.ok && small.answer.result).toEqual({ value: { a: [1, 2] }, chars: 11, cut: false, tooDeep: false });
  });

  it('bounds what the code threw, and refuses a result that is not JSON or an answer with neither or both', () => {
    const threw = checkAnswer(answer({ error: { name: 'E'.repeat(1_000), message: 'm'.repeat(100_000) } }));
    expect(threw.ok && threw.answer.error!.name.length).toBe(200);
    expect(threw.ok && threw.answer.error!.message.length).toBe(2_000);
    expect(checkAnswer(answer({ result: '{"a":' })).ok).toBe(false);
    expect(checkAnswer(answer({})).ok).toBe(false);
    expect(checkAnswer(answer({ result: '1', error: { name: 'E', message: 'm' } })).ok).toBe(false);
  });
});

describe('how a sandbox that did not answer ended', () => {
  it("names Cloudflare's CPU and memory errors of a loaded worker as those bounds", () => {
    expect(loadedWorkerFailed('Worker exceeded CPU time limit.')).toMatchObject({ reason: 'limit', limit: 'cpu_ms' });
    expect(loadedWorkerFailed('Worker has exceeded memory limit.')).toMatchObject({ reason: 'limit', limit: 'memory_mb' });
    expect(loadedWorkerFailed('Worker exceeded memory limit.')).toMatchObject({ reason: 'limit', limit: 'memory_mb' });
    expect(loadedWorkerFailed('Network connection lost.')).toMatchObject({ reason: 'sandbox_failed' });
  });

  it("names the bound the sandbox host's close code says, and BUSY when no process was free", () => {
    expect(closedEarly(SANDBOX_CLOSE_CODES.memory, 'its resident memory reached 400 MB')).toMatchObject({
      reason: 'limit',
      limit: 'memory_mb',
    });
    expect(closedEarly(SANDBOX_CLOSE_CODES.blocking, '')).toMatchObject({ reason: 'limit', limit: 'blocking_ms' });
    expect(closedEarly(SANDBOX_CLOSE_CODES.cpu, '')).toMatchObject({ reason: 'limit', limit: 'cpu_ms' });
    expect(closedEarly(SANDBOX_CLOSE_CODES.busy, '')).toMatchObject({ reason: 'busy' });
    expect(closedEarly(1006, '')).toMatchObject({ reason: 'sandbox_failed' });
  });
});
