/**
 * findCycles against an independent judge: @dagrejs/graphlib's own Tarjan (the groups), and a
 * breadth-first search written here for the length of the shortest cycle (the examples).
 */
import { alg, Graph } from '@dagrejs/graphlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findCycles, type Edge } from '../../functions/task-analysis/lib/graph.ts';

const edge = (source: string, target: string): Edge => ({ source_task_id: source, target_task_id: target });

/** graphlib's components that are cycles (two or more nodes, or a node with an edge to itself). */
function judgeGroups(edges: readonly Edge[]): string[][] {
  const graph = new Graph({ directed: true });
  for (const e of edges) graph.setEdge(e.source_task_id, e.target_task_id);
  return alg
    .tarjan(graph)
    .filter((group) => group.length > 1 || graph.hasEdge(group[0]!, group[0]!))
    .map((group) => [...group].sort())
    .sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

/** Length of the shortest cycle through `start` (edges counted), by breadth-first search. */
function shortestCycleLength(start: string, edges: readonly Edge[]): number {
  const distance = new Map([[start, 0]]);
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (const e of edges.filter((candidate) => candidate.source_task_id === node)) {
      if (e.target_task_id === start) return distance.get(node)! + 1;
      if (!distance.has(e.target_task_id)) {
        distance.set(e.target_task_id, distance.get(node)! + 1);
        queue.push(e.target_task_id);
      }
    }
  }
  return Infinity;
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `t${String(i).padStart(2, '0')}`);

describe('findCycles', () => {
  it('finds no cycle in a chain and one group in a loop', () => {
    expect(findCycles([edge('a', 'b'), edge('b', 'c')])).toEqual({ groups: [], examples: [] });
    expect(findCycles([edge('b', 'c'), edge('c', 'a'), edge('a', 'b'), edge('c', 'd')])).toEqual({
      groups: [['a', 'b', 'c']],
      examples: [['a', 'b', 'c']],
    });
  });

  it('reports a task that depends on itself', () => {
    expect(findCycles([edge('a', 'a'), edge('a', 'b')])).toEqual({ groups: [['a']], examples: [['a']] });
  });

  it('gives the shortest example through the smallest id, not any cycle', () => {
    // a -> b -> c -> d -> a, plus a shortcut c -> a.
    const { examples } = findCycles([edge('a', 'b'), edge('b', 'c'), edge('c', 'd'), edge('d', 'a'), edge('c', 'a')]);
    expect(examples).toEqual([['a', 'b', 'c']]);
  });

  it('answers 50 tasks that all block each other with one group and a two-task example', () => {
    const tasks = ids(50);
    const edges = tasks.flatMap((source) => tasks.filter((target) => target !== source).map((target) => edge(source, target)));
    expect(findCycles(edges)).toEqual({ groups: [tasks], examples: [['t00', 't01']] });
  });

  it('agrees with graphlib on random graphs; every example is a real, shortest cycle of its group', () => {
    const graphs = fc
      .integer({ min: 1, max: 30 })
      .chain((n) => fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1)), { maxLength: 4 * n }))
      .map((pairs) => pairs.map(([s, t]) => edge(`t${s}`, `t${t}`)));
    fc.assert(
      fc.property(graphs, (edges) => {
        const { groups, examples } = findCycles(edges);
        expect(groups).toEqual(judgeGroups(edges));
        expect(examples).toHaveLength(groups.length);
        const has = new Set(edges.map((e) => `${e.source_task_id}>${e.target_task_id}`));
        examples.forEach((example, i) => {
          expect(example[0]).toBe(groups[i]![0]);
          expect(new Set(example).size).toBe(example.length);
          for (const [k, node] of example.entries()) {
            expect(groups[i]).toContain(node);
            expect(has.has(`${node}>${example[(k + 1) % example.length]}`)).toBe(true);
          }
          expect(example.length).toBe(shortestCycleLength(example[0]!, edges));
        });
      }),
      { numRuns: 300 },
    );
  });
});
