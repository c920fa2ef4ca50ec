/** Graph helpers of the task-analysis tools. */

/** Elementary cycles of a small directed graph (<= 50 nodes), each reported once from its smallest id. */
export function findCycles(edges: { source_task_id: string; target_task_id: string }[]): string[][] {
  const next = Map.groupBy(edges, (e) => e.source_task_id);
  const cycles: string[][] = [];
  const seen = new Set<string>();
  const walk = (start: string, node: string, path: string[]) => {
    for (const edge of next.get(node) ?? []) {
      const target = edge.target_task_id;
      if (target === start) {
        const key = path.join('>');
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push([...path]);
        }
      } else if (target > start && !path.includes(target)) {
        walk(start, target, [...path, target]);
      }
    }
  };
  for (const start of [...next.keys()].sort()) walk(start, start, [start]);
  return cycles;
}
