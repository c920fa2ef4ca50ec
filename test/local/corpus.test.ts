import { describe, expect, it } from 'vitest';
import { detectDependencies } from '../../shared/providers/dependency-heuristic.ts';
import { extractTasks } from '../../functions/documents/lib/task-extraction.ts';
import { embedText, HASHING_EMBEDDER_DIMENSIONS } from '../../shared/providers/hashing-embedder.ts';
import { CORPUS_DEFAULTS, CORPUS_THEMES, generateCorpus } from '../../local/corpus.ts';

const DEPENDENCY_CUE = /\b(?:once we|after we|requires that we|blocked by|depends on)\b/;

/** A task's wording without its dependency phrase and notes, lower-cased. */
function ownWording(text: string): string {
  return text.replace(/ (?:once we|after we|\().*$/, '').toLowerCase();
}

describe('generateCorpus', () => {
  const corpus = generateCorpus();

  it('is deterministic, and another seed gives another corpus', () => {
    expect(generateCorpus()).toEqual(corpus);
    expect(generateCorpus({ seed: 2 })).not.toEqual(corpus);
  });

  it.each([
    [{}, CORPUS_DEFAULTS.documents, CORPUS_DEFAULTS.tasks],
    [{ documents: 1, tasks: 1 }, 1, 1],
    [{ documents: 7, tasks: 7 }, 7, 7],
    [{ documents: 3, tasks: 500, seed: 9 }, 3, 500],
    [{ documents: 120, tasks: 5_000 }, 120, 5_000],
  ])('honours the sizes %j: every document has checkbox tasks, all found by extractTasks', (options, documents, tasks) => {
    const generated = generateCorpus(options);
    expect(generated).toHaveLength(documents);
    const counts = generated.map((document) => extractTasks(document.content).length);
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(1);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(tasks);
    for (const document of generated) {
      expect(document.title).not.toBe('');
      expect(document.content.startsWith(`# ${document.title}\n`)).toBe(true);
      expect(CORPUS_THEMES).toContain(document.theme);
    }
  });

  it('spreads tasks unevenly and covers every theme', () => {
    const counts = corpus.map((document) => extractTasks(document.content).length);
    expect(Math.max(...counts)).toBeGreaterThan(1.5 * Math.min(...counts));
    expect(new Set(corpus.map((document) => document.theme))).toEqual(new Set(CORPUS_THEMES));
    expect(CORPUS_THEMES.length).toBeGreaterThanOrEqual(10);
  });

  it('rejects sizes it cannot honour', () => {
    expect(() => generateCorpus({ documents: 0 })).toThrow(RangeError);
    expect(() => generateCorpus({ documents: 5, tasks: 4 })).toThrow(RangeError);
    expect(() => generateCorpus({ tasks: 10.5 })).toThrow(RangeError);
  });

  it('generates 100k tasks in 50 documents, every one found by extractTasks', () => {
    const large = generateCorpus({ documents: 50, tasks: 100_000 });
    expect(large).toHaveLength(50);
    expect(large.reduce((n, document) => n + extractTasks(document.content).length, 0)).toBe(100_000);
  });

  it('words some tasks as depending on earlier ones, and the offline heuristic finds those edges', () => {
    let cued = 0;
    let named = 0;
    let unexpected = 0;
    corpus.forEach((document, d) => {
      const tasks = extractTasks(document.content).map((task) => ({
        id: String(task.position),
        text: task.text,
        position: task.position,
        documentId: String(d),
      }));
      tasks.forEach((task, i) => {
        if (!DEPENDENCY_CUE.test(task.text)) return;
        cued++;
        // The 50 tasks up to this one (detect-dependencies takes at most 50), which hold the task it names.
        const ordered = detectDependencies(tasks.slice(Math.max(0, i - 49), i + 1)).filter((edge) => edge.type !== 'related');
        unexpected += ordered.filter((edge) => !DEPENDENCY_CUE.test(tasks[Number(edge.targetTaskId)]!.text)).length;
        const sources = ordered.filter((edge) => edge.targetTaskId === task.id).map((edge) => tasks[Number(edge.sourceTaskId)]!);
        // The source is the task named: its own wording (before any cue or note) is quoted.
        if (sources.some((source) => source.position < task.position && task.text.toLowerCase().includes(ownWording(source.text)))) named++;
      });
    });
    expect(cued).toBeGreaterThan(0.15 * CORPUS_DEFAULTS.tasks);
    // A named task with long wording of its own can lose to a task that names it too: the heuristic's limit.
    expect(named / cued).toBeGreaterThan(0.9);
    expect(unexpected).toBe(0);
  });

  it('keeps themes apart: tasks of a theme are clearly more similar to each other than to other themes', () => {
    // Sums per theme give every pair's mean similarity exactly: Σ_{i≠j} a_i·a_j = |Σa|² − Σ|a|², Σ a_i·b_j = Σa·Σb.
    const themes = new Map<string, { sum: Float64Array; squares: number; count: number }>();
    for (const document of corpus) {
      const theme = themes.get(document.theme) ?? { sum: new Float64Array(HASHING_EMBEDDER_DIMENSIONS), squares: 0, count: 0 };
      themes.set(document.theme, theme);
      for (const task of extractTasks(document.content)) {
        const vector = embedText(task.text);
        for (let k = 0; k < vector.length; k++) {
          theme.sum[k]! += vector[k]!;
          theme.squares += vector[k]! * vector[k]!;
        }
        theme.count++;
      }
    }
    const dot = (a: Float64Array, b: Float64Array) => a.reduce((s, x, k) => s + x * b[k]!, 0);
    let within = 0;
    let withinPairs = 0;
    let across = 0;
    let acrossPairs = 0;
    const list = [...themes.values()];
    list.forEach((a, i) => {
      within += dot(a.sum, a.sum) - a.squares;
      withinPairs += a.count * (a.count - 1);
      for (const b of list.slice(i + 1)) {
        across += dot(a.sum, b.sum);
        acrossPairs += a.count * b.count;
      }
    });
    expect(within / withinPairs).toBeGreaterThan(2 * (across / acrossPairs));
  });
});
