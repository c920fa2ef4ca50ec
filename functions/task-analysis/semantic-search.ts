import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { vectorLiteral } from '../documents/lib/ingest.ts';
import { responseFormat } from './lib/tasks.ts';
import { uuidArray } from '../../shared/runtime/db.ts';

const result = z.object({
  task_id: z.string(),
  text: z.string(),
  document_id: z.string(),
  document_title: z.string(),
  similarity: z.number(),
  position: z.int().optional(),
});

/**
 * Finds the tasks most similar in meaning to a query. Exact: cosine similarity against every
 * embedded task of the project (vectors of the configured provider only).
 */
export default defineTool({
  id: 'semantic-search',
  title: 'Semantic search',
  annotations: READ_ONLY,
  description:
    'Find tasks by meaning across all documents: returns the most similar tasks to a natural-language query, with their documents and a similarity from 0 to 1. Use it first to get task ids for the other task-analysis tools.',
  input: z.strictObject({
    query: z.string().trim().min(1).max(2_000).describe('What to look for, in natural language, e.g. "hire backend engineers".'),
    limit: z.int().min(1).max(50).default(20).describe('Most results to return (default 20, at most 50).'),
    threshold: z.number().min(0).max(1).default(0.7).describe('Least similarity a result must have, 0 to 1 (default 0.7).'),
    document_ids: z.array(z.uuid()).min(1).max(100).nullish().describe('Search only these documents. Optional; null means all.'),
    response_format: responseFormat,
  }),
  output: z.object({
    results: z.array(result),
    embedding_model: z.string(),
    unembedded_task_count: z.int().describe('Tasks not searchable yet (embedding pending or failed).'),
    suggestion: z.string().optional(),
  }),
  example: { query: 'hire backend engineers', limit: 10 },
  async execute({ query, limit, threshold, document_ids, response_format }, { db, project, providers, signal }) {
    const { embeddings } = providers;
    const [vector] = await embeddings.embed([query], signal);
    const target = sql`${vectorLiteral(vector!)}::vector`;
    const inDocuments = document_ids ? sql`and t.document_id = any(${uuidArray(document_ids)})` : sql``;
    const [matches, pending] = await db.batch([
      db.execute(sql`
        select t.id as task_id, t.text, t.document_id, d.title as document_title, t.position,
               1 - (t.embedding <=> ${target}) as similarity
        from tasks t join documents d on d.id = t.document_id
        where t.project_id = ${project.id} and t.embedding_status = 'completed' and t.embedding_model = ${embeddings.id}
          and 1 - (t.embedding <=> ${target}) >= ${threshold} ${inDocuments}
        order by t.embedding <=> ${target}, t.id
        limit ${limit}`),
      db.execute(sql`
        select count(*)::int as count from tasks t
        where t.project_id = ${project.id} and (t.embedding_status <> 'completed' or t.embedding_model is distinct from ${embeddings.id}) ${inDocuments}`),
    ]);
    const results = (matches.rows as { task_id: string; text: string; document_id: string; document_title: string; position: number; similarity: number }[]).map(
      (row) => ({
        task_id: row.task_id,
        text: row.text,
        document_id: row.document_id,
        document_title: row.document_title,
        similarity: Math.round(Number(row.similarity) * 10_000) / 10_000,
        ...(response_format === 'detailed' ? { position: row.position } : {}),
      }),
    );
    const unembedded = (pending.rows[0] as { count: number }).count;
    const data = { results, embedding_model: embeddings.id, unembedded_task_count: unembedded };
    if (results.length > 0) {
      return ok(data, `Found ${results.length} task${results.length === 1 ? '' : 's'} with similarity >= ${threshold} for "${query}".`);
    }
    const suggestion = `Lower the threshold (e.g. to ${Math.max(0, Math.round((threshold - 0.2) * 100) / 100)}), or rephrase the query with words the tasks would use.`;
    return ok(
      { ...data, suggestion },
      `No task is similar enough to "${query}" (threshold ${threshold})${unembedded ? `; ${unembedded} tasks are not embedded yet` : ''}. ${suggestion}`,
    );
  },
});
