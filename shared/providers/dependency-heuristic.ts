/**
 * The offline dependency detector ('offline-heuristic-v1'): a transparent heuristic, no model, no
 * network. Every relationship it reports carries a rationale quoting the wording or the figures that
 * triggered it, so a person can check it at a glance.
 */
import { embedText } from './hashing-embedder.ts';
import type { DependencyTask, DetectedRelationship } from '../core/providers.ts';
import { roundToHundredths } from '../core/numbers.ts';

/** Stored as `detection_method` on every relationship this detector finds. */
export const HEURISTIC_DETECTOR_ID = 'offline-heuristic-v1';

/** What the heuristic reads of a task. Ids must be unique. */
export type HeuristicTask = Pick<DependencyTask, 'id' | 'text' | 'position' | 'documentId'>;

export interface HeuristicOptions {
  /** documentId -> the document's markdown; its prose is scanned for dependency wording between its tasks. */
  documentContext?: Map<string, string>;
  /** Fraction of a cue phrase's content words a task must contain to be the task it names. Default 0.5. */
  minimumMatch?: number;
  /** Share of content words (Jaccard) above which two tasks of one document are 'related'. Default 0.5. */
  overlapThreshold?: number;
  /** Hashing-embedder cosine similarity above which two tasks are 'related'. Default 0.45. */
  similarityThreshold?: number;
}

/** The defaults of {@link HeuristicOptions}. */
export const HEURISTIC_DEFAULTS = { minimumMatch: 0.5, overlapThreshold: 0.5, similarityThreshold: 0.45 } as const;

type Settings = Required<Omit<HeuristicOptions, 'documentContext'>>;
type Ordered = Exclude<DetectedRelationship['type'], 'related'>;

/**
 * Detects relationships between `tasks` (meant for 2–50: every pair is compared).
 *
 * Direction convention, for both ordered types: the source is the task that comes first, the target
 * the task that waits. `prerequisite`: the source must be done before the target can start; `blocks`:
 * the source stands in the way of the target (used when the wording speaks of blocking). `related`
 * has no order; its source is the task earlier in canonical order (documentId, position, id).
 *
 * Signals, strongest first:
 * 1. Wording in a task's text that names another task (confidence 0.65–0.9, higher the more of
 *    the phrase's and of the named task's words match). The phrase after a cue
 *    — "after X", "once X (is done)", "requires X", "needs X", "depends on X", "waiting for X" (X is a
 *    prerequisite of this task), "blocked by X" (X blocks this task), "before X" / "prior to X" (this
 *    task is a prerequisite of X), "blocks X" / "unblocks X" (this task blocks X) — up to the end of
 *    its clause, is matched against the other tasks by content words (light stemming, stop words
 *    ignored): the best task containing at least `minimumMatch` of the phrase's words is named.
 * 2. The same wording in the prose of `documentContext` ("Deploy the API after the migration.", "After
 *    the migration, deploy the API."): both sides must name distinct tasks of that document
 *    (confidence 0.5–0.75). Checkbox lines are skipped: they are the tasks of signal 1.
 * 3. 'related' (confidence 0.3–0.6), for pairs without an ordered relationship: tasks of the same
 *    document sharing at least `overlapThreshold` of their content words, and/or tasks whose
 *    hashing-embedder similarity is at least `similarityThreshold`.
 *
 * At most one ordered relationship per (source, target), the most confident. Opposite relationships
 * are both kept, so circular dependencies are returned as found, never dropped. The result is
 * deterministic and independent of the input order: sorted by source, then target, in canonical order.
 */
export function detectDependencies(tasks: HeuristicTask[], options: HeuristicOptions = {}): DetectedRelationship[] {
  const settings: Settings = {
    minimumMatch: options.minimumMatch ?? HEURISTIC_DEFAULTS.minimumMatch,
    overlapThreshold: options.overlapThreshold ?? HEURISTIC_DEFAULTS.overlapThreshold,
    similarityThreshold: options.similarityThreshold ?? HEURISTIC_DEFAULTS.similarityThreshold,
  };
  const profiles = [...tasks].sort(canonicalOrder).map((task, index) => ({ task, index, stems: stemSet(task.text) }));
  const found = new Map<string, DetectedRelationship>();
  for (const edge of [...taskWording(profiles, settings), ...contextWording(profiles, options.documentContext, settings)]) {
    const key = `${edge.sourceTaskId}\u0000${edge.targetTaskId}`;
    if ((found.get(key)?.confidence ?? -1) < edge.confidence) found.set(key, edge);
  }
  const ordered = [...found.values()];
  const rank = new Map(profiles.map((p) => [p.task.id, p.index]));
  return [...ordered, ...related(profiles, ordered, settings)].sort(
    (a, b) => rank.get(a.sourceTaskId)! - rank.get(b.sourceTaskId)! || rank.get(a.targetTaskId)! - rank.get(b.targetTaskId)!,
  );
}

interface Profile {
  task: HeuristicTask;
  /** Rank in canonical order. */
  index: number;
  stems: Set<string>;
}

function canonicalOrder(a: HeuristicTask, b: HeuristicTask): number {
  return compareStrings(a.documentId, b.documentId) || a.position - b.position || compareStrings(a.id, b.id);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---- Cue wording -----------------------------------------------------------------------------------

/** Which side of a cue names the task that comes first, and the type it implies. */
interface CueRule {
  /** 'phrase': the words after the cue name the first task ("after X"); 'subject': the words before do ("X before Y"). */
  first: 'phrase' | 'subject';
  type: Ordered;
}

const CUE_RULES: [RegExp, CueRule][] = [
  [/^(?:after|once|requires?|required|needs|depends on|dependent on|waiting (?:for|on))$/, { first: 'phrase', type: 'prerequisite' }],
  [/^blocked (?:by|on)$/, { first: 'phrase', type: 'blocks' }],
  [/^(?:before|prior to|ahead of)$/, { first: 'subject', type: 'prerequisite' }],
  [/^(?:blocks|blocking|unblocks)$/, { first: 'subject', type: 'blocks' }],
];

/** A cue word and the phrase after it, up to the end of its clause. */
const CUE =
  /\b(after|once|requires?|required|needs|depends on|dependent on|waiting (?:for|on)|blocked (?:by|on)|before|prior to|ahead of|blocks|blocking|unblocks)\s+([^.;:!?,()[\]]+)/gi;

/** Words the phrase is cut at: the clause goes on about something else. */
const CLAUSE_BREAK = /\s(?:and then|then|so that|because|while)\s.*$/i;

function ruleFor(cue: string): CueRule {
  const normalised = cue.toLowerCase().replace(/\s+/g, ' ');
  return CUE_RULES.find(([pattern]) => pattern.test(normalised))![1];
}

interface CueMatch {
  cue: string;
  phrase: string;
  rule: CueRule;
  /** Offset of the cue in the text. */
  at: number;
}

function cues(text: string): CueMatch[] {
  return [...text.matchAll(CUE)].map((m) => ({
    cue: m[1]!,
    phrase: m[2]!.replace(CLAUSE_BREAK, '').trim(),
    rule: ruleFor(m[1]!),
    at: m.index,
  }));
}

/** Signal 1: each task's own wording names another task. */
function taskWording(profiles: Profile[], settings: Settings): DetectedRelationship[] {
  const edges: DetectedRelationship[] = [];
  for (const self of profiles) {
    for (const cue of cues(self.task.text)) {
      const named = bestMatch(cue.phrase, profiles, settings, (p) => p !== self, self);
      if (!named) continue;
      const [source, target] = cue.rule.first === 'phrase' ? [named.profile, self] : [self, named.profile];
      edges.push({
        sourceTaskId: source.task.id,
        targetTaskId: target.task.id,
        type: cue.rule.type,
        confidence: roundToHundredths(0.6 + 0.15 * named.score + 0.15 * named.specificity),
        rationale: `"${self.task.text}" says "${cue.cue} ${cue.phrase}", which names "${named.profile.task.text}" (shared words: ${named.words.join(', ')}).`,
      });
    }
  }
  return edges;
}

const CHECKBOX_LINE = /^\s*(?:[-*+]|\d{1,9}[.)])\s+\[[ xX]\]/;

/** Signal 2: prose sentences of a document that relate two of its tasks. */
function contextWording(profiles: Profile[], context: Map<string, string> | undefined, settings: Settings): DetectedRelationship[] {
  const edges: DetectedRelationship[] = [];
  for (const [documentId, markdown] of context ?? []) {
    const local = profiles.filter((p) => p.task.documentId === documentId);
    if (local.length < 2) continue;
    for (const sentence of sentences(markdown)) {
      for (const cue of cues(sentence)) {
        const subject = subjectOf(sentence, cue);
        const phraseTask = bestMatch(cue.phrase, local, settings, () => true);
        const subjectTask = phraseTask && bestMatch(subject, local, settings, (p) => p !== phraseTask.profile);
        if (!phraseTask || !subjectTask) continue;
        const [source, target] = cue.rule.first === 'phrase' ? [phraseTask, subjectTask] : [subjectTask, phraseTask];
        edges.push({
          sourceTaskId: source.profile.task.id,
          targetTaskId: target.profile.task.id,
          type: cue.rule.type,
          confidence: roundToHundredths(
            0.45 + 0.15 * Math.min(source.score, target.score) + 0.15 * Math.min(source.specificity, target.specificity),
          ),
          rationale: `The document says "${sentence}", relating "${subjectTask.profile.task.text}" and "${phraseTask.profile.task.text}".`,
        });
      }
    }
  }
  return edges;
}

/** Prose sentences: checkbox lines and fenced code dropped, split at sentence punctuation and line ends. */
function sentences(markdown: string): string[] {
  const prose = markdown
    .replace(/^\s*(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\s*\1[^\n]*$/gm, '')
    .split(/\r\n|\n|\r/)
    .filter((line) => !CHECKBOX_LINE.test(line))
    .map((line) => line.replace(/^\s*(?:#{1,6}\s+|[-*+>]\s+|\d{1,9}[.)]\s+)/, ''));
  return prose
    .flatMap((line) => line.split(/(?<=[.!?])\s+/))
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * The other side of a cue in a sentence: the words before it ("Deploy after X"), or, when the
 * sentence starts with the cue ("After X, deploy"), the words after the phrase's comma.
 */
function subjectOf(sentence: string, cue: CueMatch): string {
  const before = sentence.slice(0, cue.at).split(/[,;:]/).at(-1)!.trim();
  if (before !== '') return before;
  const rest = sentence
    .slice(cue.at + cue.cue.length)
    .trim()
    .slice(cue.phrase.length);
  return rest.replace(/^[\s,;:]+/, '');
}

interface Match {
  profile: Profile;
  /** Fraction of the phrase's content words the task contains. */
  score: number;
  /** Fraction of the task's content words the phrase contains. */
  specificity: number;
  /** The phrase's words the task contains, as written. */
  words: string[];
}

/**
 * The task a phrase names: the highest share of the phrase's content words, then the highest share of
 * the task's own words (the more specific task), then — when `near` is given — the same document and
 * the nearest position, then canonical order.
 */
function bestMatch(
  phrase: string,
  candidates: Profile[],
  settings: Settings,
  allowed: (p: Profile) => boolean,
  near?: Profile,
): Match | undefined {
  const words = contentWords(phrase);
  if (words.length === 0) return undefined;
  const stems = new Set(words.map(stem));
  let best: (Match & { distance: number }) | undefined;
  for (const profile of candidates) {
    if (!allowed(profile) || profile.stems.size === 0) continue;
    const shared = [...stems].filter((s) => profile.stems.has(s));
    const score = shared.length / stems.size;
    if (score < settings.minimumMatch) continue;
    const specificity = shared.length / profile.stems.size;
    const distance = near ? distanceBetween(near, profile) : 0;
    const better =
      !best ||
      score > best.score ||
      (score === best.score && (specificity > best.specificity || (specificity === best.specificity && distance < best.distance)));
    if (better) best = { profile, score, words: words.filter((w) => profile.stems.has(stem(w))), specificity, distance };
  }
  return best && { profile: best.profile, score: best.score, specificity: best.specificity, words: [...new Set(best.words)] };
}

/** Same document first, then by distance in position; other documents after all of them. */
function distanceBetween(a: Profile, b: Profile): number {
  return a.task.documentId === b.task.documentId ? Math.abs(a.task.position - b.task.position) : Number.MAX_SAFE_INTEGER;
}

// ---- Related ---------------------------------------------------------------------------------------

/** Signal 3, for every pair not already related by an ordered relationship. */
function related(profiles: Profile[], ordered: DetectedRelationship[], settings: Settings): DetectedRelationship[] {
  const linked = new Set(ordered.flatMap((e) => [`${e.sourceTaskId}\u0000${e.targetTaskId}`, `${e.targetTaskId}\u0000${e.sourceTaskId}`]));
  const vectors = profiles.map((p) => embedText(p.task.text));
  const edges: DetectedRelationship[] = [];
  for (const a of profiles) {
    for (const b of profiles.slice(a.index + 1)) {
      if (linked.has(`${a.task.id}\u0000${b.task.id}`)) continue;
      const edge = relatedPair(a, b, dot(vectors[a.index]!, vectors[b.index]!), settings);
      if (edge) edges.push(edge);
    }
  }
  return edges;
}

function relatedPair(a: Profile, b: Profile, similarity: number, settings: Settings): DetectedRelationship | undefined {
  const reasons: string[] = [];
  let confidence = 0;
  if (a.task.documentId === b.task.documentId) {
    const shared = [...a.stems].filter((s) => b.stems.has(s));
    const jaccard = shared.length / (a.stems.size + b.stems.size - shared.length || 1);
    if (shared.length > 0 && jaccard >= settings.overlapThreshold) {
      const words = contentWords(a.task.text).filter((w) => b.stems.has(stem(w)));
      reasons.push(
        `items ${a.task.position + 1} and ${b.task.position + 1} of the same document share the words ${[...new Set(words)].map((w) => `"${w}"`).join(', ')}`,
      );
      confidence = 0.3 + 0.3 * jaccard;
    }
  }
  if (similarity >= settings.similarityThreshold) {
    reasons.push(`their texts are similar (offline hashing embedding, cosine ${similarity.toFixed(2)})`);
    confidence = Math.max(confidence, 0.6 * similarity);
  }
  if (reasons.length === 0) return undefined;
  return {
    sourceTaskId: a.task.id,
    targetTaskId: b.task.id,
    type: 'related',
    confidence: roundToHundredths(Math.min(0.6, Math.max(0.3, confidence))),
    rationale: `"${a.task.text}" and "${b.task.text}": ${reasons.join('; ')}.`,
  };
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

// ---- Words -----------------------------------------------------------------------------------------

/** Function words, cue words and status words: none of them says which task is meant. */
const IGNORED = new Set(
  (
    'a an and are as at be been being by for from has have in into is it its of on or our so that the their them then this these those to was we were will with ' +
    'all any can do does get not out up via should must can could would first also new ' +
    'after once require requires required need needs depend depends dependent depending waiting wait blocked blocks blocking unblocks before prior ahead ' +
    'done complete completed finished ready merged approved live shipped landed place'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}]+/gu;

/** The words of `text` that can identify a task, lower-cased, in order. */
function contentWords(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).filter((w) => !IGNORED.has(w));
}

function stemSet(text: string): Set<string> {
  return new Set(contentWords(text).map(stem));
}

const SUFFIXES = ['ments', 'ment', 'ions', 'ion', 'ings', 'ing', 'ers', 'er', 'ed', 'es', 's'];

/**
 * A deliberately light stemmer: strips the first matching suffix that leaves at least three letters,
 * then a final e (deploy/deploys/deployed/deploying/deployment -> deploy; migrate/migration -> migrat;
 * announce/announcement -> announc). Words ending in "ss" keep their s (process/processes -> process).
 */
function stem(word: string): string {
  const suffix = SUFFIXES.find((x) => word.endsWith(x) && word.length - x.length >= 3 && !(x === 's' && word.endsWith('ss')));
  const stripped = suffix ? word.slice(0, -suffix.length) : word;
  return stripped.endsWith('e') && stripped.length > 3 ? stripped.slice(0, -1) : stripped;
}
