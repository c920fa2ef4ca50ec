/**
 * A synthetic corpus of project-plan markdown documents, for the seed (`npm run seed`), the demo
 * project of `npm run dev`, tests and benchmarks.
 *
 * Deterministic: the same options always give the same documents. Each document is a plan on one
 * theme (revenue, hiring, infrastructure, compliance, …): a title, an intro, goals, workstream
 * sections of prose and checkbox tasks, risks. Tasks are built from the theme's own verbs, objects
 * and qualifiers, so tasks of a theme share vocabulary and themes differ: semantic search and
 * clustering have real signal. About a quarter of the tasks name an earlier task of their document
 * ("… once we migrate the primary Postgres database with zero downtime", "(blocked by “Collect the
 * access review evidence for the SOC 2 audit”)"), which is the wording the offline dependency
 * heuristic reads. Generating is cheap: 100k tasks take well under a second.
 */
import { MONTHS, OWNERS, THEMES, type Theme } from './corpus-themes.ts';
import { seededRandom } from './random.ts';

export interface CorpusOptions {
  /** Number of documents, >= 1. Default 50. */
  documents?: number;
  /** Number of checkbox tasks over all documents, >= documents (every document gets at least one). Default 1000. */
  tasks?: number;
  /** PRNG seed: another seed gives another corpus of the same shape. Default 1. */
  seed?: number;
}

/** The defaults of {@link CorpusOptions}. */
export const CORPUS_DEFAULTS = { documents: 50, tasks: 1000, seed: 1 } as const satisfies Required<CorpusOptions>;

export interface CorpusDocument {
  title: string;
  /** Markdown; its checkbox items are the tasks. */
  content: string;
  /** The theme the document was written on (one of {@link CORPUS_THEMES}). */
  theme: string;
}

/** Share of tasks (other than a document's first) whose wording names an earlier task. */
const DEPENDENCY_SHARE = 0.25;
/** A named task is at most this many tasks earlier, so a 50-task window holds both ends. */
const DEPENDENCY_REACH = 20;
/** Tasks per workstream section: realistic sections, and long documents get many of them. */
const SECTION_TASKS = { min: 4, max: 14 };

/** The theme names, in the order documents cycle through them. */
export const CORPUS_THEMES: readonly string[] = THEMES.map((theme) => theme.name);

/**
 * Ways a task names an earlier one by its wording (verb, object and qualifier: a plan often has the
 * same action on the same object twice), each behind a cue the heuristic reads. No other content
 * word is added, so the named task is the best match for the phrase, ahead of tasks that name it too.
 */
const DEPENDENCY_WORDING: ((earlier: string) => string)[] = [
  (e) => `once we ${e}`,
  (e) => `after we ${e}`,
  (e) => `(requires that we ${e})`,
  (e) => `(blocked by “${capitalize(e)}”)`,
  (e) => `(depends on “${capitalize(e)}”)`,
];

/**
 * Generates the corpus: `documents` plans whose checkbox tasks add up to exactly `tasks`, spread
 * unevenly (each document gets at least one). Documents cycle through the themes in a seeded order.
 * Throws RangeError unless documents >= 1, tasks >= documents, and all three options are integers.
 */
export function generateCorpus(options: CorpusOptions = {}): CorpusDocument[] {
  const { documents, tasks, seed } = { ...CORPUS_DEFAULTS, ...options };
  if (!Number.isInteger(documents) || documents < 1) throw new RangeError(`documents must be an integer >= 1, got ${documents}`);
  if (!Number.isInteger(tasks) || tasks < documents)
    throw new RangeError(`tasks must be an integer >= documents (${documents}), got ${tasks}`);
  if (!Number.isInteger(seed)) throw new RangeError(`seed must be an integer, got ${seed}`);
  const random = seededRandom(seed);
  const themeOrder = shuffle([...THEMES], random);
  return spread(tasks, documents, random).map((count, index) => writeDocument(themeOrder[index % themeOrder.length]!, count, random));
}

/** Splits `total` into `parts` counts >= 1 with seeded weights in [0.4, 1.6) (largest remainder). */
function spread(total: number, parts: number, random: () => number): number[] {
  const weights = Array.from({ length: parts }, () => 0.4 + 1.2 * random());
  const sum = weights.reduce((a, b) => a + b, 0);
  const extra = total - parts;
  const shares = weights.map((w) => (extra * w) / sum);
  const counts = shares.map((share) => 1 + Math.floor(share));
  let missing = total - counts.reduce((a, b) => a + b, 0);
  const byRemainder = shares.map((share, i) => ({ i, rest: share - Math.floor(share) })).sort((a, b) => b.rest - a.rest || a.i - b.i);
  for (const { i } of byRemainder) {
    if (missing-- <= 0) break;
    counts[i]!++;
  }
  return counts;
}

function writeDocument(theme: Theme, taskCount: number, random: () => number): CorpusDocument {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const quarter = `Q${1 + Math.floor(random() * 4)} ${2025 + Math.floor(random() * 2)}`;
  const fill = (sentence: string, objects = pick(theme.workstreams).objects) => {
    const object = pick(objects);
    const plural = be(object) === 'are';
    return sentence
      .replace('{object}', object)
      .replace('{is}', plural ? 'are' : 'is')
      .replace('{has}', plural ? 'have' : 'has')
      .replace('{team}', pick(theme.teams))
      .replace('{quarter}', quarter)
      .replace(/^[a-z]/, (c) => c.toUpperCase());
  };
  const paragraph = (sentences: number, objects?: string[]) =>
    shuffle([...theme.prose], random)
      .slice(0, sentences)
      .map((sentence) => fill(sentence, objects))
      .join(' ');
  const title = `${pick(theme.titles)}, ${quarter}`;
  const lines: string[] = [`# ${title}`, '', paragraph(3), '', '## Goals', ''];
  for (const goal of shuffle([...theme.goals], random).slice(0, 3)) lines.push(`- ${goal}`);
  lines.push(
    '',
    '| Owner | Team | Review |',
    '|---|---|---|',
    `| ${pick(OWNERS)} | ${pick(theme.teams)} | every ${pick(['Monday', 'Wednesday', 'Friday'])} |`,
  );

  /** The wording of each task so far, without its notes: what later tasks name it by. */
  const written: string[] = [];
  let section = 0;
  while (written.length < taskCount) {
    section++;
    const workstream = theme.workstreams[(section - 1) % theme.workstreams.length]!;
    const size = Math.min(
      taskCount - written.length,
      SECTION_TASKS.min + Math.floor(random() * (SECTION_TASKS.max - SECTION_TASKS.min + 1)),
    );
    // Long plans repeat their workstreams in phases.
    const phase = Math.ceil(section / theme.workstreams.length);
    lines.push(
      '',
      `## ${workstream.heading}${taskCount > 3 * SECTION_TASKS.max ? ` (phase ${phase})` : ''}`,
      '',
      paragraph(1 + Math.floor(random() * 2), workstream.objects),
      '',
    );
    // Earlier sections are further along: more of their tasks are done.
    const doneShare = Math.max(0, 0.5 - (0.5 * written.length) / taskCount);
    for (let i = 0; i < size; i++) {
      const words = `${pick(workstream.verbs)} ${pick(workstream.objects)} ${pick(theme.qualifiers)}`;
      let text = capitalize(words);
      if (written.length > 0 && random() < DEPENDENCY_SHARE) {
        const earlier = written[Math.max(0, written.length - 1 - Math.floor(random() * DEPENDENCY_REACH))]!;
        text += ` ${pick(DEPENDENCY_WORDING)(earlier)}`;
      }
      // In parentheses, which end a dependency phrase: the owner and date never read as part of it.
      const notes = [
        random() < 0.4 ? `@${pick(OWNERS).toLowerCase()}` : '',
        random() < 0.3 ? `due ${pick(MONTHS)} ${1 + Math.floor(random() * 28)}` : '',
      ];
      if (notes.some(Boolean)) text += ` (${notes.filter(Boolean).join(', ')})`;
      // A few tasks are sub-steps of the one above.
      const nested = i > 0 && random() < 0.08;
      lines.push(`${nested ? '  ' : ''}- [${random() < doneShare ? 'x' : ' '}] ${text}`);
      written.push(words);
    }
  }
  lines.push('', '## Risks', '');
  for (const risk of shuffle([...theme.risks], random).slice(0, 2)) lines.push(`- ${risk}`);
  lines.push('', `Progress is reviewed at the end of ${quarter}; open items move to the next plan.`, '');
  return { title, content: lines.join('\n'), theme: theme.name };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** "are" for a plural noun phrase ("the offer letters"), else "is". */
function be(object: string): string {
  return /[^s]s$/.test(object) ? 'are' : 'is';
}

/** Fisher–Yates, in place. */
function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
