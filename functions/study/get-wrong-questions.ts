import * as z from 'zod';
import { ok } from '../../shared/core/contract.ts';
import { cursorField, nextCursorField } from '../../shared/core/cursor.ts';
import { defineTool, READ_ONLY } from '../../shared/core/tool.ts';
import { idOrName, limitField, topicNameField } from './lib/fields.ts';
import { findTopic } from './lib/lookup.ts';
import { moreNote } from './lib/page.ts';
import { attempt, PASS_MARK, wrongAnswers } from './lib/quiz.ts';
import { plural } from '../../shared/core/plural.ts';
import { linkList } from '../../shared/core/links.ts';

/** The wrong answers of one topic, newest first. */
export default defineTool({
  id: 'get-wrong-questions',
  toolset: 'study',
  title: 'Get wrong quiz questions',
  annotations: READ_ONLY,
  description: `List a topic's wrongly answered questions (score below ${PASS_MARK}), newest first, to practise them again.`,
  get input() {
    return z.strictObject({
      topic_id: idOrName('topic', topicNameField, 'name'),
      limit: limitField(20, 100),
      cursor: cursorField.optional(),
    });
  },
  get output() {
    return z.object({
      topic_id: z.int(),
      topic_name: z.string(),
      pass_mark: z.number(),
      wrong_questions: z.array(attempt),
      next_cursor: nextCursorField,
    });
  },
  example: { topic_id: 'Spanish grammar', limit: 10 },
  async execute({ topic_id, limit, cursor }, { db, project, links }) {
    const topic = await findTopic(db, project.id, typeof topic_id === 'number' ? { topic_id } : { topic_name: topic_id });
    if ('ok' in topic) return topic;
    const page = await wrongAnswers(db, project.id, topic.topic_id, limit, cursor);
    if ('ok' in page) return page;
    const message =
      page.rows.length === 0
        ? `No ${cursor === undefined ? '' : 'more '}wrong answers in topic ${topic.topic_id} "${topic.topic_name}".`
        : `${plural(page.rows.length, 'wrong answer')} in topic ${topic.topic_id} "${topic.topic_name}", newest first.${moreNote(page, 'wrong answers')}`;
    return ok({ ...topic, pass_mark: PASS_MARK, wrong_questions: page.rows, next_cursor: page.next_cursor }, message, {
      truncated: page.truncated,
      links: linkList([
        links.record('topic', topic.topic_id, topic.topic_name),
        ...page.rows.map((a) => links.record('quiz_attempt', a.attempt_id, a.question)),
      ]),
    });
  },
});
