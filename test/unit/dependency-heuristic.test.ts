import { describe, expect, it } from 'vitest';
import { detectDependencies, HEURISTIC_DETECTOR_ID, type HeuristicTask } from '../../shared/providers/dependency-heuristic.ts';

/** Tasks of one document ('d1' unless given), ids t0, t1, … in order. */
function tasks(texts: string[], documentId = 'd1', prefix = 't'): HeuristicTask[] {
  return texts.map((text, position) => ({ id: `${prefix}${position}`, text, position, documentId }));
}

/** [source, target, type] of every relationship. */
function edges(list: HeuristicTask[], options = {}) {
  return detectDependencies(list, options).map((r) => [r.sourceTaskId, r.targetTaskId, r.type]);
}

describe('detectDependencies (offline-heuristic-v1)', () => {
  it('is labelled offline-heuristic-v1', () => {
    expect(HEURISTIC_DETECTOR_ID).toBe('offline-heuristic-v1');
  });

  it('reads "after X" as X being a prerequisite of the task, and quotes the wording', () => {
    const list = tasks(['Write the database migration', 'Deploy the API after the database migration is merged']);
    const [relationship, ...rest] = detectDependencies(list);
    expect(rest).toEqual([]);
    expect(relationship).toMatchObject({ sourceTaskId: 't0', targetTaskId: 't1', type: 'prerequisite' });
    expect(relationship!.confidence).toBeGreaterThanOrEqual(0.65);
    expect(relationship!.confidence).toBeLessThanOrEqual(0.9);
    expect(relationship!.rationale).toBe(
      '"Deploy the API after the database migration is merged" says "after the database migration is merged", which names "Write the database migration" (shared words: database, migration).',
    );
  });

  it.each([
    ['Launch the beta once the security review is done', 'prerequisite'],
    ['Launch the beta; requires the security review', 'prerequisite'],
    ['Launch the beta (depends on security review)', 'prerequisite'],
    ['Launch the beta, needs the security reviews', 'prerequisite'],
    ['Launch the beta, waiting for security review', 'prerequisite'],
    ['Launch the beta - blocked by the security review', 'blocks'],
  ])('reads %j as the review coming first (%s)', (text, type) => {
    expect(edges(tasks(['Run a security review', text]))).toEqual([['t0', 't1', type]]);
  });

  it('reads "before X" and "blocks X" from the other side: the task itself comes first', () => {
    expect(edges(tasks(['Freeze the API before the beta launch', 'Beta launch']))).toEqual([['t0', 't1', 'prerequisite']]);
    expect(edges(tasks(['Beta launch', 'Fix the login crash, it blocks the beta launch']))).toEqual([['t1', 't0', 'blocks']]);
    expect(edges(tasks(['Beta launch', 'Fix the login crash prior to beta launch']))).toEqual([['t1', 't0', 'prerequisite']]);
  });

  it('returns circular dependencies as found', () => {
    const list = tasks(['Set up staging after the load test', 'Run the load test once staging is ready']);
    const found = detectDependencies(list);
    expect(found.map((r) => [r.sourceTaskId, r.targetTaskId, r.type])).toEqual([
      ['t0', 't1', 'prerequisite'],
      ['t1', 't0', 'prerequisite'],
    ]);
    expect(found[0]!.rationale).toContain('"once staging is ready"');
    expect(found[1]!.rationale).toContain('"after the load test"');
  });

  it('follows a chain across documents', () => {
    const list = [...tasks(['Sign the vendor contract']), ...tasks(['Onboard the vendor after the vendor contract is signed'], 'd2', 'u')];
    expect(edges(list)).toEqual([['t0', 'u0', 'prerequisite']]);
  });

  it('names nothing when the phrase matches no task well enough', () => {
    expect(edges(tasks(['Ship the release after Friday', 'Write release notes before the holidays']))).toEqual([]);
    expect(edges(tasks(['Deploy after the big quarterly planning offsite', 'Plan the budget']))).toEqual([]);
  });

  it('prefers the task that the phrase describes most specifically, then the nearest', () => {
    const list = tasks([
      'Migrate the billing database',
      'Migrate the database',
      'Backfill after the database migration',
      'Migrate the search database',
    ]);
    expect(edges(list).filter(([, , type]) => type !== 'related')).toEqual([['t1', 't2', 'prerequisite']]);
  });

  it('finds dependency wording in the document prose, both infix and sentence-initial', () => {
    const list = tasks(['Announce the launch', 'Hire two backend engineers', 'Order laptops', 'Book the venue']);
    const documentContext = new Map([
      [
        'd1',
        [
          '# Plan',
          'The launch announcement comes after the backend engineers are hired.',
          'Before the venue is booked, order the laptops!',
          '- [ ] Order laptops after booking the venue',
          '```',
          'Book the venue after the launch announcement.',
          '```',
        ].join('\n'),
      ],
      ['d2', 'Order laptops after the launch is announced.'],
    ]);
    const found = detectDependencies(list, { documentContext });
    expect(found.map((r) => [r.sourceTaskId, r.targetTaskId, r.type])).toEqual([
      ['t1', 't0', 'prerequisite'],
      ['t2', 't3', 'prerequisite'],
    ]);
    expect(found[0]!.rationale).toBe(
      'The document says "The launch announcement comes after the backend engineers are hired.", relating "Announce the launch" and "Hire two backend engineers".',
    );
    for (const r of found) expect(r.confidence).toBeLessThanOrEqual(0.75);
  });

  it('relates same-document tasks sharing most of their words, and similar texts anywhere', () => {
    const list = [
      ...tasks(['Design the login page', 'Implement the login page', 'Renew the SOC 2 audit']),
      ...tasks(['Implement login page tests'], 'd2', 'u'),
    ];
    const found = detectDependencies(list);
    expect(found.map((r) => [r.sourceTaskId, r.targetTaskId, r.type])).toEqual([
      ['t0', 't1', 'related'],
      ['t0', 'u0', 'related'],
      ['t1', 'u0', 'related'],
    ]);
    expect(found[0]!.rationale).toMatch(
      /^"Design the login page" and "Implement the login page": items 1 and 2 of the same document share the words "login", "page"; their texts are similar \(offline hashing embedding, cosine 0\.\d\d\)\.$/,
    );
    expect(found[1]!.rationale).not.toContain('same document');
    for (const r of found) {
      expect(r.confidence).toBeGreaterThanOrEqual(0.3);
      expect(r.confidence).toBeLessThanOrEqual(0.6);
    }
  });

  it('does not add a related relationship next to an ordered one', () => {
    expect(edges(tasks(['Design the login page', 'Implement the login page after the login page design']))).toEqual([
      ['t0', 't1', 'prerequisite'],
    ]);
  });

  it('honours the thresholds', () => {
    const list = tasks(['Design the login page', 'Implement the login page']);
    expect(edges(list, { overlapThreshold: 1, similarityThreshold: 1 })).toEqual([]);
    expect(edges(tasks(['Run a security review', 'Launch after the security audit']), { minimumMatch: 1 })).toEqual([]);
    expect(edges(tasks(['Run a security review', 'Launch after the security audit']), { minimumMatch: 0.5 })).toEqual([
      ['t0', 't1', 'prerequisite'],
    ]);
  });

  it('is deterministic and independent of the input order', () => {
    const list = tasks([
      'Write the database migration',
      'Deploy the API after the database migration',
      'Design the login page',
      'Implement the login page',
      'Set up staging after the load test',
      'Run the load test once staging is ready',
    ]);
    const expected = detectDependencies(list);
    expect(expected.length).toBeGreaterThanOrEqual(4);
    expect(detectDependencies([...list].reverse())).toEqual(expected);
    expect(detectDependencies([list[3]!, list[0]!, list[5]!, list[1]!, list[4]!, list[2]!])).toEqual(expected);
    for (const r of expected) {
      expect(r.sourceTaskId).not.toBe(r.targetTaskId);
      expect(r.confidence).toBeGreaterThan(0);
      expect(r.confidence).toBeLessThanOrEqual(1);
    }
  });

  it('returns nothing for unrelated tasks', () => {
    expect(detectDependencies(tasks(['Hire a senior backend engineer', 'Renew the SOC 2 audit', 'Plan the team offsite']))).toEqual([]);
  });
});
