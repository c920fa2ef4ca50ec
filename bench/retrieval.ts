/**
 * Retrieval benchmark: does semantic-search find what a person would expect, with its default
 * settings? Run with `node bench/retrieval.ts`; `runRetrievalBench()` returns the report as a
 * markdown section for bench/RESULTS.md.
 *
 * Data: the corpus `npm run dev` seeds (local/corpus.ts, defaults: 50 plans, 1,000 tasks, 12 themes).
 * Queries: written by hand per theme in everyday wording (not copied from task texts: other words
 * around, other inflections, other order), plus off-topic queries that should find nothing. A result
 * is judged relevant when its task belongs to a plan of the query's theme. The search is the tool's:
 * exact cosine similarity over every task, the top `limit` (20) whose similarity, shown to 4 decimals
 * rounded down, reaches the threshold. Computed in memory: the tool's exact scan ranks the same way.
 *
 * Peers, side by side in one run: the offline embedder before (offline-hashing-v1, kept in
 * bench/hashing-embedder-v1.ts, with the old universal default threshold 0.7) and after
 * (offline-hashing-v2, with its own default threshold).
 */
import { shownSimilarity } from '../functions/task-analysis/lib/similarity.ts';
import { extractTasks } from '../functions/documents/lib/task-extraction.ts';
import { CORPUS_DEFAULTS, generateCorpus } from '../local/corpus.ts';
import { embedText, HASHING_EMBEDDER_ID, HASHING_EMBEDDER_THRESHOLD } from '../shared/providers/hashing-embedder.ts';
import { searchTerms } from '../shared/providers/text.ts';
import { embedTextV1, HASHING_EMBEDDER_V1_ID, HASHING_EMBEDDER_V1_THRESHOLD } from './hashing-embedder-v1.ts';
import { dot, thousands } from './measure.ts';

/** Queries per theme (the theme names of local/corpus.ts), as a person would type them. */
export const THEME_QUERIES: Readonly<Record<string, readonly string[]>> = {
  revenue: [
    'increase monthly revenue',
    'how should we price the enterprise tier',
    'forecasting renewals for next quarter',
    'discounts for renewing customers',
    'commissions for sales reps',
    'grow bookings in the mid-market',
  ],
  hiring: [
    'hire backend engineers',
    'interviewing candidates',
    'job offers and compensation',
    'relocating new hires',
    'train our interviewers',
    'recruiting a data engineer',
  ],
  infrastructure: [
    'move our services to kubernetes',
    'database backups and replicas',
    'upgrading postgres',
    'alerting with prometheus',
    'terraform modules for networking',
    'autoscaling under heavy load',
  ],
  compliance: [
    'get ready for the SOC 2 audit',
    'GDPR data processing agreements',
    'policies employees have to sign',
    'collecting evidence for auditors',
    'assess vendor risks',
    'how long do we retain data',
  ],
  marketing: [
    'launch campaign for the new product',
    'write blog posts for SEO',
    'grow the newsletter audience',
    'refresh our logo and brand',
    'webinars for technical buyers',
    'case studies from happy customers',
  ],
  security: [
    'rotate secrets and credentials',
    'patching critical vulnerabilities',
    'enforce MFA with hardware keys',
    'findings from the penetration test',
    'rehearse incident response',
    'tune SIEM detections',
  ],
  product: [
    'redesign onboarding for new users',
    'mobile app beta',
    'measure activation and retention',
    'prototype the dashboard',
    'ship dark mode',
    'feature flags for the release',
  ],
  'customer support': [
    'answer tickets faster',
    'update help center articles',
    'customer satisfaction surveys',
    'escalated tickets for tier two',
    'support macros in zendesk',
    'refund requests',
  ],
  finance: [
    'close the books faster at month end',
    'annual budget for next year',
    'cut what we spend on vendors',
    'how much cash runway do we have',
    'reconcile bank accounts',
    'file quarterly taxes',
  ],
  'data and analytics': [
    'build dashboards in looker',
    'data warehouse in snowflake',
    'dbt models and data tests',
    'airflow pipelines',
    'backfill event tracking',
    'document tables in the data catalog',
  ],
  partnerships: [
    'sign new resellers',
    'salesforce integration',
    'list partners in the marketplace',
    'register partner deals',
    'co-marketing with partners',
    'certify systems integrators',
  ],
  'workplace IT': [
    'laptops for new employees',
    'enroll devices in MDM',
    'wifi in the london office',
    'consolidate zoom licenses',
    'password manager for everyone',
    'moving to the new office',
  ],
};

/** Queries about nothing in the corpus: at the default threshold they should find nothing. */
export const OFF_TOPIC_QUERIES: readonly string[] = [
  'bake sourdough bread',
  'quantum chromodynamics lattice',
  'plan a birthday party',
  'repair the kitchen sink',
  'learn to play the violin',
  'feed the neighbour’s cat',
];

/** A query and a task that say the same in other inflections and another word order. */
export const REWORDED_PAIRS: readonly (readonly [string, string])[] = [
  ['hiring backend engineers', 'Hire a backend engineer'],
  ['migrated databases', 'Migrate the database'],
  ['deployments of the API', 'Deploy the API'],
  ['audit evidence collection', 'Collect the evidence for the audit'],
  ['renewing contracts with vendors', 'Renew the vendor contract'],
  ['tested backups', 'Test the nightly backup'],
  ['interviewers trained', 'Train the interviewer'],
  ['policy signatures', 'Sign the security policies'],
];

const BENCH = {
  /** semantic-search's default limit. */
  limit: 20,
  hitsAt: [1, 5, 10],
  precisionAt: 10,
  /** Thresholds of the calibration tables. */
  sweep: [0.1, 0.12, 0.13, 0.14, 0.15, 0.2, 0.3, 0.5, 0.7],
  /**
   * The calibration rule: the default threshold is the highest at which this share of the pairs
   * sharing exactly one content word, between a short query and a typical task, still pass.
   */
  oneWordRecall: 0.99,
  /** "Short query" and "typical task", in content words (the corpus's median task has 8). */
  shortQueryTerms: 4,
  typicalTaskTerms: 10,
} as const;

interface Peer {
  label: string;
  id: string;
  threshold: number;
  embed(text: string): Float32Array;
}

const PEERS: Peer[] = [
  { label: 'before', id: HASHING_EMBEDDER_V1_ID, threshold: HASHING_EMBEDDER_V1_THRESHOLD, embed: (text) => embedTextV1(text) },
  { label: 'after', id: HASHING_EMBEDDER_ID, threshold: HASHING_EMBEDDER_THRESHOLD, embed: (text) => embedText(text) },
];

interface CorpusTask {
  text: string;
  theme: string;
  terms: Set<string>;
}

interface Query {
  text: string;
  /** Absent for off-topic queries. */
  theme?: string;
  terms: Set<string>;
}

/** What one peer's search answers for a query: the top `limit` tasks, best first, with shown similarities. */
type Ranking = { similarity: number; theme: string }[];

interface AtThreshold {
  threshold: number;
  answered: number;
  precision: number;
  offTopicSilent: number;
  /** Query–task pairs sharing exactly one content word (short query, typical task) that pass. */
  oneWord: number;
  /** Query–task pairs sharing no content word that pass. */
  noWord: number;
}

interface PeerFigures {
  peer: Peer;
  /** Similarity of each of {@link REWORDED_PAIRS}. */
  reworded: number[];
  hits: number[];
  precision: number;
  atDefault: AtThreshold;
  sweep: AtThreshold[];
  /** The highest sweep threshold meeting the calibration rule. */
  calibrated: number | undefined;
}

/** Runs the benchmark and returns its report as a markdown section. */
export async function runRetrievalBench(): Promise<string> {
  const tasks: CorpusTask[] = generateCorpus().flatMap((document) =>
    extractTasks(document.content).map((task) => ({ text: task.text, theme: document.theme, terms: new Set(searchTerms(task.text)) })),
  );
  const queries: Query[] = [
    ...Object.entries(THEME_QUERIES).flatMap(([theme, texts]) => texts.map((text) => ({ text, theme, terms: new Set(searchTerms(text)) }))),
    ...OFF_TOPIC_QUERIES.map((text) => ({ text, terms: new Set(searchTerms(text)) })),
  ];
  const figures = PEERS.map((peer) => measure(peer, tasks, queries));
  return report(tasks.length, queries, figures);
}

function measure(peer: Peer, tasks: CorpusTask[], queries: Query[]): PeerFigures {
  const vectors = tasks.map((task) => peer.embed(task.text));
  const oneWord: number[] = [];
  const noWord: number[] = [];
  const rankings = queries.map((query): Ranking => {
    const vector = peer.embed(query.text);
    const scored = vectors.map((task, i) => {
      const similarity = shownSimilarity(dot(task, vector));
      const shared = [...query.terms].filter((term) => tasks[i]!.terms.has(term)).length;
      if (shared === 0) noWord.push(similarity);
      else if (shared === 1 && query.terms.size <= BENCH.shortQueryTerms && tasks[i]!.terms.size <= BENCH.typicalTaskTerms)
        oneWord.push(similarity);
      return { similarity, theme: tasks[i]!.theme };
    });
    return scored.sort((a, b) => b.similarity - a.similarity).slice(0, BENCH.limit);
  });
  const onTopic = queries.flatMap((query, i) => (query.theme === undefined ? [] : [{ theme: query.theme, top: rankings[i]! }]));
  const offTopic = queries.flatMap((query, i) => (query.theme === undefined ? [rankings[i]!] : []));
  const at = (threshold: number): AtThreshold => {
    const passing = onTopic.map(({ theme, top }) => top.filter((t) => t.similarity >= threshold).map((t) => t.theme === theme));
    const returned = passing.flat();
    return {
      threshold,
      answered: share(passing.filter((results) => results.length > 0).length, passing.length),
      precision: share(returned.filter(Boolean).length, returned.length),
      offTopicSilent: share(offTopic.filter((top) => !top.some((t) => t.similarity >= threshold)).length, offTopic.length),
      oneWord: share(oneWord.filter((s) => s >= threshold).length, oneWord.length),
      noWord: share(noWord.filter((s) => s >= threshold).length, noWord.length),
    };
  };
  const sweep = BENCH.sweep.map(at);
  return {
    peer,
    reworded: REWORDED_PAIRS.map(([query, task]) => shownSimilarity(dot(peer.embed(query), peer.embed(task)))),
    hits: BENCH.hitsAt.map((k) =>
      share(onTopic.filter(({ theme, top }) => top.slice(0, k).some((t) => t.theme === theme)).length, onTopic.length),
    ),
    precision: mean(
      onTopic.map(({ theme, top }) => share(top.slice(0, BENCH.precisionAt).filter((t) => t.theme === theme).length, BENCH.precisionAt)),
    ),
    atDefault: at(peer.threshold),
    sweep,
    calibrated: sweep.filter((row) => row.oneWord >= BENCH.oneWordRecall).at(-1)?.threshold,
  };
}

function report(taskCount: number, queries: Query[], figures: PeerFigures[]): string {
  const percent = (x: number) => (Number.isNaN(x) ? '–' : `${Math.round(x * 100)} %`);
  const fine = (x: number) => (x === 0 ? '0 %' : x < 0.001 ? `${(x * 100).toFixed(3)} %` : `${(x * 100).toFixed(1)} %`);
  const passes = (f: PeerFigures, similarity: number) => `${similarity}${similarity >= f.peer.threshold ? '' : ' (missed)'}`;
  const { documents, seed } = CORPUS_DEFAULTS;
  const onTopic = queries.filter((q) => q.theme !== undefined).length;
  const after = figures.at(-1)!;
  return [
    '## Retrieval: semantic-search with its default settings (bench/retrieval.ts)',
    '',
    `The corpus \`npm run dev\` seeds (${documents} plans, ${thousands(taskCount)} tasks, seed ${seed}); ${onTopic} queries written per theme in everyday ` +
      `wording and ${queries.length - onTopic} off-topic ones (listed in bench/retrieval.ts). A result is relevant when its task belongs to a plan of the query's theme. ` +
      'Search as the tool does it: exact cosine over every task, similarities shown to 4 decimals rounded down, ' +
      `the top ${BENCH.limit} (default limit) that reach the threshold. hits@k: share of queries with a relevant task among the top k (ranking only). ` +
      'Answered: share of queries with at least one result at the default threshold; precision: share of those results that are relevant; ' +
      'off-topic silent: share of off-topic queries answered with no result.',
    '',
    `| embedder | default threshold | ${BENCH.hitsAt.map((k) => `hits@${k}`).join(' | ')} | precision@${BENCH.precisionAt} | answered at default | precision at default | off-topic silent |`,
    `|---|---:|${BENCH.hitsAt.map(() => '---:').join('|')}|---:|---:|---:|---:|`,
    ...figures.map(
      (f) =>
        `| ${f.peer.label}: ${f.peer.id} | ${f.peer.threshold} | ${f.hits.map(percent).join(' | ')} | ${percent(f.precision)} | ` +
        `${percent(f.atDefault.answered)} | ${percent(f.atDefault.precision)} | ${percent(f.atDefault.offTopicSilent)} |`,
    ),
    '',
    `Calibration of the default threshold. Over every query–task pair: "one word" is the share of pairs sharing exactly one content word ` +
      `(Porter2 stem, stop words aside), between a query of at most ${BENCH.shortQueryTerms} content words and a task of at most ${BENCH.typicalTaskTerms}, ` +
      'whose similarity reaches the threshold (a person expects those to be found); "no word" the share of pairs sharing none that reach it ' +
      '(noise: trigrams of different words, hash collisions). Then answered / precision / off-topic silent as above.',
    '',
    `| threshold | ${figures.map((f) => `${f.peer.id}: one word | no word | answered / precision / off-topic silent`).join(' | ')} |`,
    `|---:|${figures.map(() => '---:|---:|---').join('|')}|`,
    ...BENCH.sweep.map(
      (threshold, i) =>
        `| ${threshold} | ${figures
          .map((f) => {
            const row = f.sweep[i]!;
            return `${fine(row.oneWord)} | ${fine(row.noWord)} | ${percent(row.answered)} / ${percent(row.precision)} / ${percent(row.offTopicSilent)}`;
          })
          .join(' | ')} |`,
    ),
    '',
    `Rule: the default is the highest threshold at which ${percent(BENCH.oneWordRecall)} of one-word pairs pass. Measured: ` +
      `${after.calibrated ?? 'none of the thresholds tried'} for ${after.peer.id}, whose declared default is ${after.peer.threshold}` +
      `${after.calibrated === after.peer.threshold ? '' : ' (they differ: re-run and update HASHING_EMBEDDER_THRESHOLD)'}.`,
    '',
    'Other inflections, other word order: the similarity of a query and a task that say the same thing ("(missed)": below that embedder\'s default threshold).',
    '',
    `| query | task | ${figures.map((f) => f.peer.id).join(' | ')} |`,
    `|---|---|${figures.map(() => '---:').join('|')}|`,
    ...REWORDED_PAIRS.map(([query, task], i) => `| ${query} | ${task} | ${figures.map((f) => passes(f, f.reworded[i]!)).join(' | ')} |`),
  ].join('\n');
}

// ---- helpers ------------------------------------------------------------------------------------

function share(count: number, total: number): number {
  return total === 0 ? NaN : count / total;
}

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

if (import.meta.main) {
  console.log(await runRetrievalBench());
}
