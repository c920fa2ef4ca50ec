/**
 * The tool ids the listings are judged against, derived from the registry (functions/registry.ts),
 * so that adding a tool changes no test: each id in catalog order, grouped by its toolset. The
 * registry itself is judged against the files of functions/<toolset>/ (test/unit/toolsets.test.ts),
 * and the listings' filtering against these groups (toolsets.test.ts, key-toolsets.test.ts,
 * grow.test.ts).
 */
import { tools } from '../../functions/registry.ts';
import type { AnyTool } from '../../shared/core/tool.ts';
import type { Toolset } from '../../shared/core/toolsets.ts';

/** The ids of `registry`'s tools that belong to one of `toolsets`, in catalog order. */
export function idsOf(toolsets: readonly Toolset[], registry: readonly AnyTool[] = tools): string[] {
  return registry.filter((tool) => toolsets.includes(tool.toolset)).map((tool) => tool.id);
}

export const STUDY = idsOf(['study']);
export const DOCUMENTS = idsOf(['documents']);
export const TASK_ANALYSIS = idsOf(['task-analysis']);
export const TABLE_TOOLS = idsOf(['table-tools']);
/** Every tool's id, in catalog order. */
export const ALL_TOOLS: readonly string[] = tools.map((tool) => tool.id);
