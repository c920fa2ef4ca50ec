/** Links: made from configuration, absolute, never invented. */
import { describe, expect, it } from 'vitest';
import { linkLabel, linkList, MAX_LINKS } from '../../shared/core/links.ts';
import { linksFromEnv, type LinksEnv } from '../../shared/runtime/link-templates.ts';

const ID = '3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f';

function made(env: LinksEnv, origin = 'https://tools.example.com') {
  const result = linksFromEnv(env, origin);
  if (!result.ok) throw new Error(result.error.message);
  return result.links;
}

describe('linksFromEnv', () => {
  it("points at this API's own read routes by default, absolute with the request's origin", () => {
    const links = made({});
    expect(links.document(ID, 'Q3 hiring plan')).toEqual({
      label: 'Document: Q3 hiring plan',
      url: `https://tools.example.com/documents/${ID}`,
    });
    expect(links.task(ID)).toEqual({ label: `Task ${ID}`, url: `https://tools.example.com/tasks/${ID}` });
    expect(made({}, 'http://127.0.0.1:8787').task(ID).url).toBe(`http://127.0.0.1:8787/tasks/${ID}`);
  });

  it('follows the URL templates of the configuration', () => {
    const links = made({
      DOCUMENT_URL_TEMPLATE: 'https://app.example.com/docs/{id}',
      TASK_URL_TEMPLATE: 'https://app.example.com/docs/tasks/{id}?view=full',
      TABLE_URL_TEMPLATES: '{"mood_entries": "https://app.example.com/moods/{id}"}',
    });
    expect(links.document(ID).url).toBe(`https://app.example.com/docs/${ID}`);
    expect(links.task(ID).url).toBe(`https://app.example.com/docs/tasks/${ID}?view=full`);
    expect(links.row('mood_entries', ID, 'Mood entry')).toEqual({ label: 'Mood entry', url: `https://app.example.com/moods/${ID}` });
  });

  it('links no row of a table without a template: no fake URLs', () => {
    expect(made({}).row('mood_entries', ID, 'Mood entry')).toBeUndefined();
    expect(
      made({ TABLE_URL_TEMPLATES: { health_forms: 'https://app.example.com/forms/{id}' } }).row('mood_entries', ID, 'x'),
    ).toBeUndefined();
    expect(made({ TABLE_URL_TEMPLATES: '{"toString": "https://app.example.com/{id}"}' }).row('constructor', ID, 'x')).toBeUndefined();
  });

  it('links study records only of the kinds the deployment configured, with the project in the URL when asked', () => {
    const links = linksFromEnv(
      {
        RECORD_URL_TEMPLATES:
          '{"plan": "https://app.example.com/p/{project_id}/plans/{id}", "flashcard": "https://app.example.com/cards/{id}"}',
      },
      'https://tools.example.com',
      ID,
    );
    if (!links.ok) throw new Error(links.error.message);
    expect(links.links.record('plan', 7, 'Spanish B1')).toEqual({
      label: 'Plan: Spanish B1',
      url: `https://app.example.com/p/${ID}/plans/7`,
    });
    expect(links.links.record('flashcard', 3)).toEqual({ label: 'Flashcard 3', url: 'https://app.example.com/cards/3' });
    expect(links.links.record('topic', 1, 'Grammar')).toBeUndefined();
    expect(made({}).record('plan', 1)).toBeUndefined();
  });

  it.each<[string, LinksEnv, string]>([
    [
      'a record kind that does not exist',
      { RECORD_URL_TEMPLATES: '{"plans": "https://app.example.com/plans/{id}"}' },
      'RECORD_URL_TEMPLATES',
    ],
    ['a record template without {id}', { RECORD_URL_TEMPLATES: { topic: 'https://app.example.com/topics' } }, 'RECORD_URL_TEMPLATES'],
    ['a template without {id}', { DOCUMENT_URL_TEMPLATE: 'https://app.example.com/docs' }, 'DOCUMENT_URL_TEMPLATE'],
    ['a relative template', { TASK_URL_TEMPLATE: '/tasks/{id}' }, 'TASK_URL_TEMPLATE'],
    ['a javascript: template', { TASK_URL_TEMPLATE: 'javascript:alert({id})' }, 'TASK_URL_TEMPLATE'],
    ['table templates that are not JSON', { TABLE_URL_TEMPLATES: 'mood_entries=https://x/{id}' }, 'TABLE_URL_TEMPLATES'],
    ['a table template without {id}', { TABLE_URL_TEMPLATES: '{"mood_entries": "https://app.example.com/moods"}' }, 'TABLE_URL_TEMPLATES'],
  ])('answers CONFIG_ERROR naming the variable for %s', (_case, env, variable) => {
    const result = linksFromEnv(env, 'https://tools.example.com');
    expect(result).toMatchObject({ ok: false, error: { code: 'CONFIG_ERROR', retryable: false, details: { variable } } });
    if (!result.ok) expect(result.error.message).toContain(variable);
  });
});

describe('linkList and linkLabel', () => {
  it('drops repeated URLs and keeps at most MAX_LINKS links', () => {
    const links = made({});
    const list = linkList([
      links.document(ID),
      links.document(ID),
      undefined,
      ...Array.from({ length: 30 }, (_, i) => links.task(`t${i}`)),
    ]);
    expect(list).toHaveLength(MAX_LINKS);
    expect(new Set(list.map((link) => link.url)).size).toBe(MAX_LINKS);
  });

  it('cuts long texts and flattens whitespace in labels', () => {
    const label = linkLabel('Task', ID, `Open the\nrole ${'x'.repeat(200)}`);
    expect(label.length).toBeLessThanOrEqual(86);
    expect(label).toMatch(/^Task: Open the role x+…$/);
  });
});
