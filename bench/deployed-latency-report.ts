/**
 * What bench/deployed-latency.ts measured, as its markdown section: the figures of every call beside
 * its minimum and the bare peer, the minimum's essential queries by name, and what the stand-ins
 * received before each answer, in order.
 */
import { describeRoundTrip, describeRoundTrips, type RoundTrips } from '../local/round-trip.ts';
import type { Minimum } from './deployed-latency-calls.ts';
import { percentile } from './measure.ts';
import { describe, OFF_THE_ANSWER_PATH, purposesOf, stepsOf, type Purpose, type Served } from './served-requests.ts';

/** The round trips every call is run at, interleaved: both, each alone, none. */
export const SETTINGS = ['both', 'database only', 'Redis only', 'none'] as const;
export type Setting = (typeof SETTINGS)[number];
/** The settings the bare peer is run at (it sends nothing to Redis). */
export const PEER_SETTINGS = ['both', 'none'] as const;
export type PeerSetting = (typeof PEER_SETTINGS)[number];

/** One timed request. */
export interface Sample {
  wallMs: number;
  status: number;
  /** Whether the answer was the one the call is meant to get. */
  ok: boolean;
  sentAt: number;
  /** Requests the stand-ins received before the answer that it may have waited for. */
  before: Served[];
  /** Requests received before the answer that carried only `waitUntil` work (release, trace, ...). */
  notAwaited: Served[];
}

/** A call's samples: the gateway's at every setting, the peer's at its settings. */
export interface Runs {
  gateway: Record<Setting, Sample[]>;
  peer: Record<PeerSetting, Sample[]>;
}

/** One row of the report. */
export interface Row {
  name: string;
  minimum: Minimum;
  runs: Runs;
  /** What of the gateway's database requests the peer runs (the tool's own statements, mostly). */
  peerRuns: ReadonlySet<Purpose>;
  load: number;
}

/** What the section is made of. */
export interface Report {
  heading: string;
  rows: Row[];
  fresh: { runs: Runs; load: number };
  roundTrips: RoundTrips;
  samples: number;
  pacedMs: number;
  corpus: { documents: number; tasks: number };
}

const ms = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? '–' : value.toFixed(0));
const p = (samples: Sample[], q: number) => {
  const walls = samples.filter((sample) => sample.ok).map((sample) => sample.wallMs);
  return walls.length ? percentile(walls, q) : NaN;
};
const median = (values: number[]) => (values.length ? percentile(values, 0.5) : NaN);

/** What one row's figures come to. */
function figuresOf({ runs, minimum }: Row, { neon, upstash }: RoundTrips) {
  const g = runs.gateway;
  const p50 = p(g.both, 0.5);
  const none = p(g.none, 0.5);
  const minimumMs = minimum.redis * upstash.rttMs + minimum.database.length * neon.rttMs;
  const peer50 = p(runs.peer.both, 0.5);
  const count = (service: Served['service']) => median(g.both.map((sample) => sample.before.filter((r) => r.service === service).length));
  // What the round trips add: the p50 less the same call's with nothing injected (wrangler's proxy,
  // workerd and the stand-ins' own work, which a deployment does not pay in the same way), for the
  // gateway and the peer alike. The targets are judged on it.
  const added = p50 - none;
  const peerAdded = peer50 - p(runs.peer.none, 0.5);
  return {
    p50,
    p95: p(g.both, 0.95),
    none,
    databaseInSeries: neon.rttMs ? (p(g['database only'], 0.5) - none) / neon.rttMs : NaN,
    redisInSeries: upstash.rttMs ? (p(g['Redis only'], 0.5) - none) / upstash.rttMs : NaN,
    databaseRequests: count('database'),
    redisRequests: count('redis'),
    minimumMs,
    peer50,
    peer95: p(runs.peer.both, 0.95),
    failed: Object.values(g)
      .flat()
      .filter((sample) => !sample.ok).length,
    peerFailed: Object.values(runs.peer)
      .flat()
      .filter((sample) => !sample.ok).length,
    added,
    peerAdded,
    withinMinimum: added <= 1.15 * minimumMs,
    withinPeer: added <= 1.1 * peerAdded + upstash.rttMs,
  };
}

/**
 * Why a call's median sample waited for more round trips than its minimum, from what the stand-ins
 * received: the credential's re-check in series before a write (the freshness rule: nothing writes
 * for a credential verified more than a second ago before it is confirmed), and the database steps
 * beyond the minimum's. Empty when it waited for no more.
 */
function whyMore(row: Row): string {
  const sample = medianSample(row.runs.gateway.both);
  if (!sample) return '';
  const steps = stepsOf(sample.before.filter((request) => request.service === 'database'));
  const reasons: string[] = [];
  const recheck = steps.findIndex((step) => step.some((r) => purposesOf(r).some((q) => q === 'key lookup' || q === 'OAuth grant read')));
  const firstTool = steps.findIndex((step) => step.some((r) => purposesOf(r).includes('tool')));
  if (recheck !== -1 && firstTool > recheck && steps[recheck]!.every((r) => !purposesOf(r).includes('tool')))
    reasons.push("+1 DB: the credential's re-check before a write (the freshness rule; it was verified more than 1 s ago)");
  const toolSteps = steps.filter((step) => step.some((r) => purposesOf(r).includes('tool'))).length;
  if (toolSteps > row.minimum.database.length)
    reasons.push(
      `+${toolSteps - row.minimum.database.length} DB: the tool sends ${toolSteps} statements in turn where ${row.minimum.database.length} are essential`,
    );
  return reasons.join('; ');
}

/** The sample of median wall time at `both`, for the diagnosis. */
function medianSample(samples: Sample[]): Sample | undefined {
  const ok = samples.filter((sample) => sample.ok).sort((a, b) => a.wallMs - b.wallMs);
  return ok[Math.floor((ok.length - 1) / 2)];
}

/**
 * The round trips a sample waited for in series, by the order of its requests: each step (requests
 * sent together) counts as one round trip of the slower service it reached.
 */
function seriesByOrder(sample: Sample | undefined, { neon, upstash }: RoundTrips): string {
  if (!sample) return '–';
  const counts = { database: 0, redis: 0 };
  for (const step of stepsOf(sample.before)) {
    const services = new Set(step.map((request) => request.service));
    const slower = services.has('database') && (!services.has('redis') || neon.rttMs >= upstash.rttMs) ? 'database' : 'redis';
    counts[slower]++;
  }
  return `${counts.database} + ${counts.redis}`;
}

/** `+0 DB key lookup ‖ +1 Redis slot acquire + rate limit → +27 DB tool: select study_plans → answer +58`. */
function sequence(sample: Sample): string {
  const steps = stepsOf(sample.before).map((step) => step.map((request) => describe(request, sample.sentAt)).join(' ‖ '));
  return [...steps, `answer +${Math.round(sample.wallMs)}`].join(' → ');
}

/** The purposes of the requests sent before the answer but not waited for. */
function notAwaited(sample: Sample): string {
  const purposes = new Set(
    sample.notAwaited.flatMap((request) => purposesOf(request).filter((purpose) => OFF_THE_ANSWER_PATH.has(purpose))),
  );
  return purposes.size ? [...purposes].join(', ') : '–';
}

/** The tool's own requests in turn, measured (median over the samples at `both`). */
function measuredSteps(samples: Sample[], runs: (request: Served) => boolean): number {
  return median(samples.filter((sample) => sample.ok).map((sample) => stepsOf(sample.before.filter(runs)).length));
}

/** The markdown section. */
export function latencyMarkdown({ heading, rows, fresh, roundTrips, samples, pacedMs, corpus }: Report): string {
  const { neon, upstash } = roundTrips;
  const rtts = describeRoundTrips(roundTrips);
  const figures = rows.map((row) => ({ row, f: figuresOf(row, roundTrips) }));
  const yes = (value: boolean) => (value ? 'yes' : '**no**');
  const lines = [
    heading,
    '',
    `The gateway under \`wrangler dev\` against the Neon and Upstash stand-ins, every answer held for the injected round trip (**${rtts}**; \`local/round-trip.ts\`), on a project of ${corpus.documents} documents with ${corpus.tasks} tasks and the study planner's demo data; every tool with its own example. ${samples} samples per call at each of four settings, interleaved: both round trips, the database's alone, Redis's alone, none. "In series" is (p50 with that round trip alone − p50 with none) ÷ the round trip: how many of them the call waited for one after another; "by the requests' order" counts the same from what the stand-ins received in the median sample (each step of requests sent together is one round trip of the slower service it reached), which load cannot blur. "Requests before the answer" counts what the stand-ins received before the answer, less what \`waitUntil\` sends (the slot's release, the trace), which the answer never waits for. Credentials are used as an agent calling every few seconds uses them: each of a pool of API keys (or OAuth tokens) is used again only after ${pacedMs} ms, when its cached verification is due for the re-check; rows marked "warm" follow another call with the same credential. The minimum is one Redis round trip (admission) and the tool's essential database round trips (named below); the bare peer is a Hono route running the same statements with \`@neondatabase/serverless\` (bench/bare-peer/), also under \`wrangler dev\`, against the same stand-ins at the same round trips. "p50 with no round trip" is the same call with nothing injected: what this machine adds (wrangler's proxy, workerd, the stand-ins' own work), which is in every figure here, the peer's too, and not in the minimum; "round trips add" is the p50 less it. Targets, judged on what round trips add (the gateway's and the peer's alike): within 1.15× the minimum, and within 1.1× the peer's plus one Redis round trip. "Why more" names, from the requests' order, what a call waited for beyond its minimum. Load: the 1-minute load average when the row was done.`,
    '',
    `| call (at ${rtts}) | p50 / p95 ms | p50 with no round trip, ms | round trips add, ms | DB round trips in series | Redis round trips in series | in series by the requests' order, DB + Redis | DB / Redis requests before the answer | minimum ms | added ÷ minimum | peer p50 / p95 ms | peer: round trips add, ms | ≤ 1.15× minimum | ≤ 1.1× peer + Redis | why more | failed (gateway / peer) | load |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|---:|',
    ...figures.map(
      ({ row, f }) =>
        `| ${row.name} | ${ms(f.p50)} / ${ms(f.p95)} | ${ms(f.none)} | ${ms(f.added)} | ${f.databaseInSeries.toFixed(1)} | ${f.redisInSeries.toFixed(1)} | ${seriesByOrder(medianSample(row.runs.gateway.both), roundTrips)} | ${f.databaseRequests} / ${f.redisRequests} | ${f.minimumMs} | ${(f.added / f.minimumMs).toFixed(2)} | ${ms(f.peer50)} / ${ms(f.peer95)} | ${ms(f.peerAdded)} | ${yes(f.withinMinimum)} | ${yes(f.withinPeer)} | ${whyMore(row) || '–'} | ${f.failed} / ${f.peerFailed} | ${row.load.toFixed(1)} |`,
    ),
    '',
    `Met, on what round trips add: ${figures.filter(({ f }) => f.withinMinimum).length} of ${figures.length} calls within 1.15× their minimum, ${figures.filter(({ f }) => f.withinPeer).length} within 1.1× the peer plus one Redis round trip (${describeRoundTrip(upstash)}).`,
    '',
    '### What each minimum is made of',
    '',
    `Neon ${describeRoundTrip(neon)} per database round trip, Upstash ${describeRoundTrip(upstash)} per Redis round trip. "Measured" is how many requests in turn the gateway sent of those the minimum counts (the tool's own statements; for the replay, the claim that reads the stored answer), which the bare peer replays.`,
    '',
    '| call | Redis | essential database round trips, in turn | measured | why |',
    '|---|---:|---|---:|---|',
    ...rows.map((row) => {
      const measured = measuredSteps(
        row.runs.gateway.both,
        (request) => request.service === 'database' && purposesOf(request).every((purpose) => row.peerRuns.has(purpose)),
      );
      const flag = measured === row.minimum.database.length ? '' : ' ≠';
      return `| ${row.name} | ${row.minimum.redis} | ${row.minimum.database.map((query, i) => `${i + 1}. ${query}`).join('; ')} | ${measured}${flag} | ${row.minimum.why} |`;
    }),
    '',
    `### What the stand-ins received before each answer (the median sample at ${rtts})`,
    '',
    'Milliseconds after the call was sent; `‖` parallel (sent before the one beside it was answered), `→` in turn. "Not waited for": what the same call sent before its answer through `waitUntil`.',
    '',
    '| call | before the answer | not waited for |',
    '|---|---|---|',
    ...rows.map((row) => {
      const sample = medianSample(row.runs.gateway.both);
      return `| ${row.name} | ${sample ? sequence(sample) : '–'} | ${sample ? notAwaited(sample) : '–'} |`;
    }),
    '',
    freshMarkdown(fresh, roundTrips),
  ];
  return lines.join('\n');
}

/** The fresh isolates' table. */
function freshMarkdown({ runs, load }: Report['fresh'], roundTrips: RoundTrips): string {
  const { neon, upstash } = roundTrips;
  const g = runs.gateway;
  const none = p(g.none, 0.5);
  const sample = medianSample(g.both);
  const n = g.both.length;
  return [
    `### The first call of a fresh isolate (list-plans; load ${load.toFixed(1)})`,
    '',
    `Each sample a new \`workerd serve\` of the dry-run bundle (bench/cold-start.ts), timed from when it listens to the answer: module work on first use, and the key's first lookup (nothing is cached). ${n} samples per setting (p95 is the slowest).`,
    '',
    "| worker | p50 / p95 ms at both | DB round trips in series | Redis round trips in series | in series by the requests' order, DB + Redis | p50 / p95 ms with none | failed |",
    '|---|---:|---:|---:|---:|---:|---:|',
    `| gateway | ${ms(p(g.both, 0.5))} / ${ms(p(g.both, 0.95))} | ${((p(g['database only'], 0.5) - none) / neon.rttMs).toFixed(1)} | ${((p(g['Redis only'], 0.5) - none) / upstash.rttMs).toFixed(1)} | ${seriesByOrder(sample, roundTrips)} | ${ms(none)} / ${ms(p(g.none, 0.95))} | ${
      Object.values(g)
        .flat()
        .filter((s) => !s.ok).length
    } |`,
    `| bare peer | ${ms(p(runs.peer.both, 0.5))} / ${ms(p(runs.peer.both, 0.95))} | ${((p(runs.peer.both, 0.5) - p(runs.peer.none, 0.5)) / neon.rttMs).toFixed(1)} | – | ${seriesByOrder(medianSample(runs.peer.both), roundTrips)} | ${ms(p(runs.peer.none, 0.5))} / ${ms(p(runs.peer.none, 0.95))} | ${
      Object.values(runs.peer)
        .flat()
        .filter((s) => !s.ok).length
    } |`,
    '',
    `The gateway's median first call: ${sample ? sequence(sample) : '–'}. Minimum: the key's lookup, one Redis round trip and list-plans' query: ${2 * neon.rttMs + upstash.rttMs} ms.`,
  ].join('\n');
}
