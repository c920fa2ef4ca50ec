/** Graph helpers of the task-analysis tools. */

/** A directed edge: the source comes before the target. */
export interface Edge {
  source_task_id: string;
  target_task_id: string;
}

/** The circular dependencies of a graph: see {@link findCycles}. */
export interface Cycles {
  /**
   * Groups of tasks caught in circular dependencies: the strongly connected components of two or
   * more tasks (or one task depending on itself). Within a group every task is, directly or through
   * others, both before and after every other task. Ids sorted; groups ordered by their first id.
   */
  groups: string[][];
  /**
   * One example per group: a shortest circular chain through the group's smallest id, in edge
   * order (each task comes before the next, the last before the first). Never more than one per group.
   */
  examples: string[][];
}

/**
 * Finds the circular dependencies among `edges` in O(V + E): Tarjan's strongly connected
 * components, then a breadth-first search per component for its example. The number of elementary
 * cycles can grow exponentially with the graph (50 tasks that all block each other have more than
 * 10^62); groups and one shortest example each stay linear.
 */
export function findCycles(edges: readonly Edge[]): Cycles {
  const next = new Map<string, string[]>();
  for (const { source_task_id: source, target_task_id: target } of edges) {
    if (!next.has(target)) next.set(target, []);
    const out = next.get(source);
    if (out) out.push(target);
    else next.set(source, [target]);
  }
  const groups = stronglyConnectedComponents(next)
    .filter((group) => group.length > 1 || next.get(group[0]!)!.includes(group[0]!))
    .map((group) => group.sort())
    .sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
  return { groups, examples: groups.map((group) => shortestCycleThrough(group[0]!, new Set(group), next)) };
}

/** Tarjan's algorithm, iterative (no recursion depth to worry about): the components of `next`. */
function stronglyConnectedComponents(next: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  // The depth-first path: each node with how many of its successors were visited.
  const frames: [string, number][] = [];
  const visit = (node: string) => {
    lowLink.set(node, index.size);
    index.set(node, index.size);
    stack.push(node);
    onStack.add(node);
    frames.push([node, 0]);
  };
  for (const root of next.keys()) {
    if (index.has(root)) continue;
    visit(root);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const [node, visited] = frame;
      const successors = next.get(node)!;
      if (visited < successors.length) {
        frame[1]++;
        const successor = successors[visited]!;
        if (!index.has(successor)) visit(successor);
        else if (onStack.has(successor)) lowLink.set(node, Math.min(lowLink.get(node)!, index.get(successor)!));
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) lowLink.set(parent[0], Math.min(lowLink.get(parent[0])!, lowLink.get(node)!));
      if (lowLink.get(node) === index.get(node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== node);
        components.push(component);
      }
    }
  }
  return components;
}

/** A shortest cycle from `start` back to it, within `group` (breadth-first: the first edge back wins). */
function shortestCycleThrough(start: string, group: ReadonlySet<string>, next: ReadonlyMap<string, readonly string[]>): string[] {
  const parent = new Map<string, string | null>([[start, null]]);
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (const successor of next.get(node)!) {
      if (successor === start) {
        const path: string[] = [];
        for (let at: string | null = node; at !== null; at = parent.get(at)!) path.push(at);
        return path.reverse();
      }
      if (group.has(successor) && !parent.has(successor)) {
        parent.set(successor, node);
        queue.push(successor);
      }
    }
  }
  throw new Error(`no cycle through ${start}: not a strongly connected group`);
}
