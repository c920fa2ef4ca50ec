/**
 * Builds the {@link Links} of one call from the deployment's configuration and the URL the request
 * came to. By default links point at this API's own read routes (`GET /documents/:id`,
 * `GET /tasks/:id`), made absolute with the request's origin; a deployment can point them at its
 * own UI instead with URL templates in which `{id}` stands for the record's id.
 */
import { fail, type Failure } from '../core/contract.ts';
import { linkLabel, RECORD_KINDS, type Links } from '../core/links.ts';

/** The variables links read (all optional). */
export interface LinksEnv {
  /** Where a document is shown, e.g. `https://app.example.com/docs/{id}`. Default: `<origin>/documents/{id}`. */
  DOCUMENT_URL_TEMPLATE?: string;
  /** Where a task is shown, e.g. `https://app.example.com/tasks/{id}`. Default: `<origin>/tasks/{id}`. */
  TASK_URL_TEMPLATE?: string;
  /**
   * Where the rows of a table tool's table are shown, as a JSON object from table name to template,
   * e.g. `{"mood_entries": "https://app.example.com/moods/{id}"}`. Tables not named get no links.
   */
  TABLE_URL_TEMPLATES?: string | Record<string, string>;
  /**
   * Where the study planner's records are shown, as a JSON object from kind (plan, plan_item,
   * topic, flashcard, quiz_attempt, message) to template, e.g. `{"plan": "https://app.example.com/plans/{id}"}`.
   * Kinds not named get no links.
   */
  RECORD_URL_TEMPLATES?: string | Record<string, string>;
}

const PLACEHOLDER = '{id}';
/** Also in any template: the caller's project, for a UI whose record ids are numbered per project (the study planner's are). */
const PROJECT_PLACEHOLDER = '{project_id}';

type Templates = { ok: true; document?: string; task?: string; tables: Record<string, string>; records: Record<string, string> };
type Checked<T> = { ok: true; value: T } | Failure;

// Parsed templates by their configuration text: plain data, no I/O, safe to keep per isolate.
let cached: { key: string; templates: Templates | Failure } | undefined;

/**
 * The links of a call of project `projectId` that came to `origin` (e.g. `http://127.0.0.1:8787`),
 * or CONFIG_ERROR naming a template that is not an absolute http(s) URL with `{id}` in it.
 */
export function linksFromEnv(env: LinksEnv, origin: string, projectId = ''): { ok: true; links: Links } | Failure {
  const key = JSON.stringify([env.DOCUMENT_URL_TEMPLATE, env.TASK_URL_TEMPLATE, env.TABLE_URL_TEMPLATES, env.RECORD_URL_TEMPLATES]);
  if (cached?.key !== key) cached = { key, templates: readTemplates(env) };
  const { templates } = cached;
  if (!templates.ok) return templates;
  const expand = (template: string, id: string) =>
    template.replaceAll(PLACEHOLDER, encodeURIComponent(id)).replaceAll(PROJECT_PLACEHOLDER, encodeURIComponent(projectId));
  return {
    ok: true,
    links: {
      document: (id, title) => ({
        label: linkLabel('Document', id, title),
        url: expand(templates.document ?? `${origin}/documents/${PLACEHOLDER}`, id),
      }),
      task: (id, text) => ({ label: linkLabel('Task', id, text), url: expand(templates.task ?? `${origin}/tasks/${PLACEHOLDER}`, id) }),
      row: (table, id, label) => {
        const template = Object.hasOwn(templates.tables, table) ? templates.tables[table] : undefined;
        return template === undefined ? undefined : { label, url: expand(template, id) };
      },
      record: (kind, id, text) => {
        const template = Object.hasOwn(templates.records, kind) ? templates.records[kind] : undefined;
        return template === undefined
          ? undefined
          : { label: linkLabel(RECORD_KINDS[kind], String(id), text), url: expand(template, String(id)) };
      },
    },
  };
}

function readTemplates(env: LinksEnv): Templates | Failure {
  const document = checkTemplate('DOCUMENT_URL_TEMPLATE', env.DOCUMENT_URL_TEMPLATE);
  if (!document.ok) return document;
  const task = checkTemplate('TASK_URL_TEMPLATE', env.TASK_URL_TEMPLATE);
  if (!task.ok) return task;
  const tables = readTemplateMap('TABLE_URL_TEMPLATES', env.TABLE_URL_TEMPLATES, 'mood_entries');
  if (!tables.ok) return tables;
  const records = readTemplateMap('RECORD_URL_TEMPLATES', env.RECORD_URL_TEMPLATES, 'plan', Object.keys(RECORD_KINDS));
  if (!records.ok) return records;
  return { ok: true, document: document.value, task: task.value, tables: tables.value, records: records.value };
}

/** A JSON object from name to template; with `names`, a name outside them is CONFIG_ERROR. */
function readTemplateMap(
  variable: string,
  raw: string | Record<string, string> | undefined,
  sample: string,
  names?: readonly string[],
): Checked<Record<string, string>> {
  if (raw === undefined || raw === '') return { ok: true, value: {} };
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      value = undefined;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalid(
      variable,
      `must be a JSON object from name to URL template, e.g. {"${sample}": "https://app.example.com/${sample}/{id}"}`,
    );
  }
  const templates: Record<string, string> = {};
  for (const [name, template] of Object.entries(value)) {
    if (names && !names.includes(name)) return invalid(variable, `names '${name.slice(0, 60)}', which is none of ${names.join(', ')}`);
    const checked = checkTemplate(`${variable}.${name}`, typeof template === 'string' ? template : String(template));
    if (!checked.ok) return checked;
    if (checked.value !== undefined) templates[name] = checked.value;
  }
  return { ok: true, value: templates };
}

/** The template, undefined when unset, or CONFIG_ERROR when it is not an absolute http(s) URL with `{id}`. */
function checkTemplate(name: string, template: string | undefined): Checked<string | undefined> {
  if (template === undefined || template === '') return { ok: true, value: undefined };
  const sample = template
    .replaceAll(PLACEHOLDER, '00000000-0000-0000-0000-000000000000')
    .replaceAll(PROJECT_PLACEHOLDER, '00000000-0000-0000-0000-000000000000');
  const url = URL.canParse(sample) ? new URL(sample) : undefined;
  if (!template.includes(PLACEHOLDER) || (url?.protocol !== 'https:' && url?.protocol !== 'http:')) {
    return invalid(
      name,
      `must be an absolute http(s) URL containing {id}, e.g. https://app.example.com/items/{id}, but it is '${template.slice(0, 200)}'`,
    );
  }
  return { ok: true, value: template };
}

function invalid(name: string, problem: string): Failure {
  return fail('CONFIG_ERROR', `The deployment variable ${name} ${problem}. Links cannot be built, so the call did not run.`, {
    hint: `Fix ${name} in wrangler.toml or the dashboard, or remove it to link to this API's own routes. Retrying will not help.`,
    details: { reason: 'invalid_variable', variable: name.split('.')[0] },
  });
}
