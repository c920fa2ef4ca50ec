import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { cursorField, nextCursorField } from '../../shared/core/cursor.ts';
import { INT4 } from '../../shared/core/fields.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { limitField } from './lib/fields.ts';
import { moreNote, pageOfRows, readCursor } from './lib/page.ts';
import { PASS_MARK } from './lib/quiz.ts';
import { plural } from '../../shared/core/plural.ts';
import { linkList } from '../../shared/core/links.ts';

const position = z.strictObject({ weak_offset: z.int().min(1).max(INT4.max) });

const topic = z.object({
  topic_id: z.int(),
  topic_name: z.string(),
  attempt_count: z.int().describe('Attempts in the topic, graded or not.'),
  graded_count: z.int().describe('Attempts with a score.'),
  wrong_count: z.int().describe(`Attempts scoring below ${PASS_MARK}.`),
  mean_score: z.number().describe('Mean score of the graded attempts, 0 to 1.'),
});

/** Topics ranked weakest first by mean score. */
export default defineTool({
  id: 'get-weak-topics',
  toolset: 'study',
  title: 'Get weak quiz topics',
  annotations: READ_ONLY,
  description: `Rank the quiz topics weakest first (lowest mean score, then most answers below ${PASS_MARK}), to choose what to practise next.`,
  get input() {
    return z.strictObject({
      limit: limitField(5, 50),
      cursor: cursorField.optional(),
    });
  },
  get output() {
    return z.object({ weak_topics: z.array(topic), pass_mark: z.number(), next_cursor: nextCursorField });
  },
  example: { limit: 5 },
  async execute({ limit, cursor }, { db, project, links }) {
    const from = readCursor(position, cursor, { limit });
    if (!from.ok) return from;
    const offset = from.value?.weak_offset ?? 0;
    const { rows } = await db.execute(sql`
      select t.id as topic_id, t.name as topic_name, count(*)::int as attempt_count, count(a.score)::int as graded_count,
             count(*) filter (where a.score < ${PASS_MARK})::int as wrong_count, round(avg(a.score)::numeric, 4)::float8 as mean_score
      from study_topics t join quiz_attempts a on a.project_id = t.project_id and a.topic_id = t.id
      where t.project_id = ${project.id}
      group by t.project_id, t.id
      having count(a.score) > 0
      order by avg(a.score), count(*) filter (where a.score < ${PASS_MARK}) desc, t.id
      limit ${limit + 1} offset ${offset}`);
    const page = pageOfRows(rows as unknown as z.output<typeof topic>[], limit, { limit }, () => ({ weak_offset: offset + limit }));
    const message =
      page.rows.length === 0
        ? offset === 0
          ? 'No topic has graded quiz attempts yet, so none can be ranked. Save attempts with a score (save-quiz-attempt or quiz-post-save) first.'
          : 'No more ranked topics.'
        : `${plural(page.rows.length, 'topic')}, weakest first: ${page.rows.map((t) => `"${t.topic_name}" (mean ${t.mean_score}, ${t.wrong_count} wrong)`).join(', ')}.${moreNote(page, 'topics')}`;
    return ok({ weak_topics: page.rows, pass_mark: PASS_MARK, next_cursor: page.next_cursor }, message, {
      truncated: page.truncated,
      links: linkList(page.rows.map((topic) => links.record('topic', topic.topic_id, topic.topic_name))),
    });
  },
});
