/**
 * The seed story as a code-mode agent writes it (bench/code-mode.ts runs it; the unit tests compile
 * it against what `describe` shows): search, then the found tasks' documents, dependencies and
 * clusters, returning a summary a model would give (each task once, by its number in the search,
 * under its document's title; the section of its document each of the first three tasks is in;
 * the dependencies and the groups of similar tasks by those numbers). It uses only names that
 * `tools/list` and `describe` show.
 */

/** What the story searches for. */
export const QUERY = 'set up authentication and user login';

/** The story's code, the body of one `execute`. */
export const STORY = `async () => {
  const found = await tools.semanticSearch({ query: ${JSON.stringify(QUERY)}, limit: 20 });
  if (!found.success) return found.error;
  const results = found.data.results;
  const ids = results.map((r) => r.task_id);
  const [context, dependencies, clusters] = await Promise.all([
    tools.getDocumentContext({ task_ids: ids.slice(0, 3) }),
    tools.detectDependencies({ task_ids: ids }),
    tools.clusterBySimilarity({ task_ids: ids }),
  ]);
  const at = new Map(ids.map((id, i) => [id, i]));
  const short = (text) => (text.length > 40 ? text.slice(0, 39) + "…" : text);
  // The tasks found, by their number in the search, under their document's title.
  const titles = [...new Set(results.map((r) => r.document_title))];
  const tasks = Object.fromEntries(
    titles.map((title) => [title, results.flatMap((r, i) => (r.document_title === title ? [i + " " + short(r.text)] : []))]),
  );
  // The first tasks' context: the section of its document each one is in.
  const sections = context.success
    ? ids.slice(0, 3).map((id) => {
        const document = context.data.documents.find((d) => d.tasks.some((t) => t.task_id === id));
        const task = document && document.tasks.find((t) => t.task_id === id);
        const before = document && task ? document.content.slice(0, document.content.indexOf(task.text)) : "";
        const headings = before.match(/^#+ .*$/gm);
        return at.get(id) + ": " + (headings ? headings[headings.length - 1].replace(/^#+ /, "") : "?");
      })
    : context.error.code;
  return {
    tasks,
    context: sections,
    dependencies: dependencies.success
      ? dependencies.data.relationships.map((r) => at.get(r.source_task_id) + " " + r.type + " " + at.get(r.target_task_id))
      : dependencies.error.code,
    clusters: clusters.success
      ? {
          groups: clusters.data.clusters.filter((c) => c.size > 1).map((c) => c.representative_tasks.map((t) => at.get(t.task_id))),
          alone: clusters.data.summary.singleton_count,
        }
      : clusters.error.code,
  };
}`;
