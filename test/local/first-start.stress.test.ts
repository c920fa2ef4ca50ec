/**
 * The first start of `npm run dev` is all or nothing: interrupted (SIGINT, as Ctrl-C sends it) while
 * the database opens, while the sample plans are being seeded and while the study data is being
 * written, the next start still builds the whole demo project, exactly once; a later start reuses
 * it. Counted in the database. The process is a real one (test/support/first-start.ts), stopped by
 * its pid when its own output says it reached each point.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { openLocalDatabase } from '../../local/seed.ts';
import { createDb } from '../../shared/runtime/db.ts';

const FIXTURE = new URL('../support/first-start.ts', import.meta.url).pathname;
const DOCUMENTS = 6;
const TASKS = 240;
const root = mkdtempSync(join(tmpdir(), 'edge-tools-first-start-'));

afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Runs the first start; sends SIGINT to it once its output (stdout and stderr) satisfies `stopWhen`. */
function start(stopWhen?: (output: string) => boolean): Promise<Run> {
  const child = spawn(process.execPath, [FIXTURE, root, String(DOCUMENTS), String(TASKS)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let stopped = false;
  const read = (chunk: Buffer) => {
    output += chunk.toString();
    if (stopWhen && !stopped && stopWhen(output)) {
      stopped = true;
      process.kill(child.pid!, 'SIGINT');
    }
  };
  child.stdout.on('data', read);
  child.stderr.on('data', read);
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, output })));
}

/** Whether the bar shows some tasks seeded, but not all. */
function midway(output: string): boolean {
  return [...output.matchAll(/(\d+)\/240 tasks/g)].some((match) => Number(match[1]) > 0 && Number(match[1]) < TASKS);
}

describe('the first start of npm run dev', () => {
  it('interrupted at several points, then started again, holds the whole demo project once', { timeout: 1_800_000 }, async () => {
    const stops: [string, (output: string) => boolean][] = [
      ['while the database opens', (output) => output.includes('First start')],
      ['while the sample plans are seeded', midway],
      ['while the study data is written', (output) => output.includes('Seeding the study planner')],
    ];
    for (const [point, stopWhen] of stops) {
      const run = await start(stopWhen);
      expect(run.signal, `stopped ${point}:\n${run.output}`).toBe('SIGINT');
      // Nothing was moved into place: the next start begins again.
      expect(existsSync(join(root, 'postgres'))).toBe(false);
      expect(existsSync(join(root, 'demo-project.json'))).toBe(false);
    }

    const completed = await start();
    expect(completed.code, completed.output).toBe(0);
    expect(completed.output).toContain(`${TASKS}/${TASKS} tasks, ${DOCUMENTS}/${DOCUMENTS} documents`);
    const demo = JSON.parse(/READY (.*)/.exec(completed.output)![1]!) as { projectId: string; apiKey: string };

    // A later start reuses it: no seeding, the same project and key.
    const again = await start();
    expect(again.code, again.output).toBe(0);
    expect(again.output).not.toContain('Seeding');
    expect(JSON.parse(/READY (.*)/.exec(again.output)![1]!)).toEqual(demo);

    const neon = await openLocalDatabase(join(root, 'postgres'));
    try {
      const { rows } = await createDb(neon.connectionString).execute(sql`select
        (select count(*)::int from projects) as projects,
        (select count(*)::int from documents where project_id = ${demo.projectId}) as documents,
        (select count(*)::int from tasks where project_id = ${demo.projectId}) as tasks,
        (select count(*)::int from tasks where project_id = ${demo.projectId} and embedding is not null and embedding_status = 'completed') as embedded,
        (select count(*)::int from study_plans where project_id = ${demo.projectId}) as plans,
        (select count(*)::int from study_plan_items where project_id = ${demo.projectId}) as plan_items,
        (select count(*)::int from quiz_attempts where project_id = ${demo.projectId}) as attempts,
        (select count(*)::int from flashcards where project_id = ${demo.projectId}) as flashcards,
        (select count(*)::int from chat_messages where project_id = ${demo.projectId}) as messages`);
      // The study demo (local/study-seed.ts): plans 1-2 with items 1-7, attempts 1-7, cards 1-5, 4 messages.
      expect(rows).toEqual([
        {
          projects: 1,
          documents: DOCUMENTS,
          tasks: TASKS,
          embedded: TASKS,
          plans: 2,
          plan_items: 7,
          attempts: 7,
          flashcards: 5,
          messages: 4,
        },
      ]);
    } finally {
      await neon.close();
    }
  });
});
