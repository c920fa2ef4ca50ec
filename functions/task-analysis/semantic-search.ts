import * as z from 'zod';
import { ANSWER_BUDGETS, fitToBudget, responseFormatField } from '../../shared/core/budget.ts';
import { fail, notFound, ok, type Failure, type Success } from '../../shared/core/contract.ts';
import { text, uuid } from '../../shared/core/fields.ts';
import { quote } from '../../shared/core/text.ts';
import { linkList } from '../../shared/core/links.ts';
import { plural } from '../../shared/core/plural.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { providersFromEnv } from '../../shared/providers/index.ts';
import { searchTerms } from '../../shared/providers/text.ts';
import { findNearestTasks, type NearestTask } from './lib/nearest-tasks.ts';
import { shownSimilarity } from './lib/similarity.ts';

const result = z.object({
  task_id: z.string(),
  text: z.string(),
  document_id: z.string(),
  document_title: z.string(),
  similarity: z.number(),
  position: z.int().optional(),
});

const output = z.object({
  results: z.array(result),
  embedding_model: z.string(),
  threshold: z.number().describe("The threshold applied: the one asked for, or the embedding model's default."),
  best_similarity: z.number().optional().describe('When no task reaches the threshold: the highest similarity of any task.'),
  unembedded_task_count: z
    .int()
    .describe(
      'Tasks not searchable yet: their embedding is pending or failed, or was made by another embedding model. embed-tasks embeds them.',
    ),
  suggestion: z.string().optional(),
});

type Output = z.output<typeof output>;

const EXAMPLE = { query: 'hire backend engineers', limit: 10 };

/**
 * Finds the tasks most similar in meaning to a query: by cosine similarity to the tasks of the
 * project embedded by the configured provider, the best `limit` whose shown similarity (4 decimals,
 * rounded down) reaches the threshold. Exact (every task scored) below a size, through the HNSW
 * index above it (see lib/nearest-tasks.ts).
 */
export default defineTool({
  id: 'semantic-search',
  toolset: 'task-analysis',
  title: 'Semantic search',
  annotations: READ_ONLY,
  description:
    "Find tasks by meaning across all documents. Use it first, for task ids; a task's document is get-document-context, its dependencies query-task-graph.",
  get input() {
    return z.strictObject({
      query: text({ max: 2_000, blank: false }).describe('In natural language, e.g. hire backend engineers.'),
      limit: z.int().min(1).max(50).default(20),
      threshold: z.number().min(0).max(1).optional().describe("Least similarity. Default: the embedding model's own."),
      document_ids: z.array(uuid()).min(1).max(100).nullish().describe('Only these documents; null for all.'),
      response_format: responseFormatField,
    });
  },
  get output() {
    return output;
  },
  example: EXAMPLE,
  providers: providersFromEnv,
  async execute({ query, limit, threshold, document_ids, response_format }, { db, project, providers, signal, links }) {
    if (searchTerms(query).length === 0) return nothingToSearch(query);
    const { embeddings } = providers;
    const applied = threshold ?? embeddings.defaultThreshold;
    // UUIDs are case-insensitive; Postgres answers them in lower case.
    const documents = document_ids ? [...new Set(document_ids.map((id) => id.toLowerCase()))] : [];
    const [vector] = await embeddings.embed([query], signal);
    // The best `limit` tasks whatever the threshold: those that reach it are a prefix, and the first
    // is the best similarity when none does.
    const nearest = await findNearestTasks(db, {
      projectId: project.id,
      model: embeddings.id,
      vector: vector!,
      limit,
      ...(document_ids ? { documentIds: documents } : {}),
    });

    const found = new Set(nearest.knownDocumentIds);
    const missing = (document_ids ?? []).filter((id) => !found.has(id.toLowerCase()));
    if (missing.length > 0) return documentsNotFound(missing);

    const ranked = nearest.tasks
      .map((row) => ({ ...row, similarity: shownSimilarity(row.similarity) }))
      .filter((row) => Number.isFinite(row.similarity));
    const matched = ranked
      .filter((row) => row.similarity >= applied)
      .map((row) => ({
        task_id: row.task_id,
        text: row.text,
        document_id: row.document_id,
        document_title: row.document_title,
        similarity: row.similarity,
        ...(response_format === 'detailed' ? { position: row.position } : {}),
      }));
    // The most similar first, as many as the answer budget holds.
    const results = fitToBudget(matched, ANSWER_BUDGETS[response_format].list, { atLeast: 0 });
    const { total, searchable } = nearest;
    const outcome = answer({
      query,
      data: { results, embedding_model: embeddings.id, threshold: applied, unembedded_task_count: total - searchable },
      thresholdGiven: threshold !== undefined,
      defaultThreshold: embeddings.defaultThreshold,
      ranked,
      total,
      searchable,
      documentCount: document_ids ? documents.length : undefined,
    });
    const cut = results.length < matched.length;
    return {
      ...outcome,
      message:
        outcome.message +
        (cut
          ? ` The answer budget holds the ${results.length} most similar of ${matched.length}: ask for response_format detailed (larger answers) or a lower limit.`
          : ''),
      truncated: cut,
      links: linkList(
        results.flatMap((result) => [links.task(result.task_id, result.text), links.document(result.document_id, result.document_title)]),
      ),
    };
  },
});

interface Answer {
  query: string;
  data: Output;
  thresholdGiven: boolean;
  /** The embedding model's default threshold: below it, a similarity says little. */
  defaultThreshold: number;
  /** The best tasks with a similarity, best first, whatever the threshold. */
  ranked: NearestTask[];
  /** Tasks in scope, and those of them embedded by the configured model. */
  total: number;
  searchable: number;
  /** How many documents the search was limited to, if it was. */
  documentCount?: number;
}

/** The answer's message (and suggestion, when nothing is found), for each situation. */
function answer({ query, data, thresholdGiven, defaultThreshold, ranked, total, searchable, documentCount }: Answer): Success<Output> {
  const where = documentCount === undefined ? 'in this project' : `in the ${plural(documentCount, 'document')} asked for`;
  const applied = `${data.threshold} (${thresholdGiven ? 'as asked' : `the default for ${data.embedding_model}`})`;
  const waiting = data.unembedded_task_count;
  const waitingNote = waiting
    ? ` ${plural(waiting, 'task')} ${waiting === 1 ? 'is' : 'are'} not searchable yet (embedding pending, failed, or made by another model): embed-tasks embeds them.`
    : '';

  if (data.results.length > 0) {
    return ok(
      data,
      `Found ${plural(data.results.length, 'task')} ${where} with similarity >= ${applied} for ${quote(query)}.${waitingNote}`,
    );
  }
  if (total === 0) {
    const suggestion =
      'Add a document whose checkbox items are tasks ("- [ ] Hire two backend engineers") with add-document, then search again.';
    return ok({ ...data, suggestion }, `There are no tasks ${where} to search yet. ${suggestion}`);
  }
  if (searchable === 0) {
    const suggestion = 'Call embed-tasks (again while its remaining_count > 0), then search again.';
    return ok(
      { ...data, suggestion },
      `None of the ${plural(total, 'task')} ${where} is searchable yet: their embeddings are pending, failed, or were made by another model than ${data.embedding_model}. ${suggestion}`,
    );
  }
  const rephrase = 'rephrase the query with words the tasks would use';
  const best = ranked[0];
  if (!best || best.similarity < 0.01) {
    const suggestion = `Nothing in the tasks resembles the query: ${rephrase}.`;
    return ok(
      { ...data, ...(best ? { best_similarity: best.similarity } : {}), suggestion },
      `No task ${where} is similar to ${quote(query)}${best ? ` (best similarity ${best.similarity})` : ''}. ${suggestion}${waitingNote}`,
    );
  }
  // Two decimals, rounded down: the best task reaches it.
  const lower = Math.floor(best.similarity * 100) / 100;
  const reached = ranked.filter((row) => row.similarity >= lower).length;
  const more = reached === ranked.length && ranked.length < searchable ? 'at least ' : '';
  const weak =
    best.similarity < defaultThreshold
      ? ` That is below the default threshold of ${data.embedding_model} (${defaultThreshold}), so little in common: rephrasing the query with words the tasks use may serve better.`
      : '';
  const suggestion = `Retry with threshold ${lower} to get ${more}${plural(reached, 'task')}, or ${rephrase}.`;
  return ok(
    { ...data, best_similarity: best.similarity, suggestion },
    `No task ${where} reaches the threshold ${applied} for ${quote(query)}: the closest, ${quote(best.text)}, scores ${best.similarity}, ` +
      `so threshold ${lower} would return it.${weak}${waitingNote}`,
  );
}

/** A query with no word to search by: the embedding would say nothing about it. */
function nothingToSearch(query: string): Failure {
  const received = quote(query);
  const message =
    `Field 'query' has no words to search by: ${received} holds only stop words (words too common to tell tasks apart, such as "the" or "tasks"), ` +
    'punctuation, symbols or emoji. Use words the tasks would contain.';
  return fail('VALIDATION_ERROR', message, {
    hint: `Example of a valid call: ${JSON.stringify(EXAMPLE)}`,
    details: {
      fields: [{ field: 'query', code: 'no_search_terms', message, expected: 'at least one word that is not a stop word', received }],
    },
  });
}

function documentsNotFound(missing: string[]): Failure {
  return notFound(
    'document',
    { document_ids: missing },
    'Leave document_ids out to search every document; document ids come from add-document or from earlier search results.',
  );
}
