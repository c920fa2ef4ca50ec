/** W3C Trace Context: which traceparent headers make an execution a child span, per the specification's rules. */
import { describe, expect, it } from 'vitest';
import { parseTraceparent, startSpan, traceIdOf } from '../../shared/observability/trace-context.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('parseTraceparent', () => {
  it('reads a valid version 00 header and its sampled flag', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, parentSpanId: SPAN, sampled: true });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)).toEqual({ traceId: TRACE, parentSpanId: SPAN, sampled: false });
    // Other flag bits do not hide the sampled one.
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-03`)?.sampled).toBe(true);
    expect(parseTraceparent(` 00-${TRACE}-${SPAN}-01 `)?.traceId).toBe(TRACE);
  });

  it.each([
    ['missing', null],
    ['empty', ''],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['short parent id', `00-${TRACE}-${SPAN.slice(1)}-01`],
    ['non-hex flags', `00-${TRACE}-${SPAN}-zz`],
    ['version 00 with an extra field', `00-${TRACE}-${SPAN}-01-extra`],
    ['wrong separators', `00_${TRACE}_${SPAN}_01`],
  ])('ignores a traceparent that is %s', (_case, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });

  it('accepts a later version with more fields, reading the four it knows', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-what-the-future-holds`)).toEqual({ traceId: TRACE, parentSpanId: SPAN, sampled: true });
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01x`)).toBeUndefined();
  });
});

describe('startSpan', () => {
  const executionId = '5F0C2B1E-8D4A-4E7B-9C2F-1A2B3C4D5E6F';

  it("makes the execution a child of the caller's span", () => {
    const span = startSpan(executionId, `00-${TRACE}-${SPAN}-01`);
    expect(span).toEqual({ traceId: TRACE, spanId: expect.stringMatching(/^[0-9a-f]{16}$/), parentSpanId: SPAN, sampled: true });
    expect(span.spanId).not.toBe(SPAN);
  });

  it('without a valid traceparent, starts a sampled trace named after the execution', () => {
    const span = startSpan(executionId, 'garbage');
    expect(span).toEqual({ traceId: '5f0c2b1e8d4a4e7b9c2f1a2b3c4d5e6f', spanId: expect.stringMatching(/^[0-9a-f]{16}$/), sampled: true });
    expect(traceIdOf(executionId)).toBe(span.traceId);
  });

  it('draws a new span id for every execution', () => {
    const ids = new Set(Array.from({ length: 1_000 }, () => startSpan(executionId, null).spanId));
    expect(ids.size).toBe(1_000);
  });
});
