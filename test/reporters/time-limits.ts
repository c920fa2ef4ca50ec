/**
 * A reporter that says when a failure was a time limit: vitest's timeout errors ("Test timed out in
 * 30000ms") get a line saying so, with the machine's load average when it failed, so that a run on
 * a busy machine is not read as a wrong result. It prints nothing of its own; the default reporter
 * shows the amended errors with the others.
 */
import { availableParallelism, loadavg } from 'node:os';
import type { Reporter, TestCase, TestModule } from 'vitest/node';

/** The names vitest gives the errors of a test or hook that ran past its timeout. */
const TIMEOUT_ERRORS = new Set(['TestTimeoutError', 'HookTimeoutError']);

/** What is added to a timeout's message; marks it as amended too. */
const NOTE = '(a time limit, not a wrong result)';

/** An error as a reporter sees it: serialized from the test's process. */
interface ReportedError {
  name?: string;
  message?: string;
}

/** The note for a timeout of `ms` milliseconds, with the load average now. */
export function timeLimitNote(ms: string, load: readonly number[] = loadavg()): string {
  return `timed out after ${ms} ms ${NOTE}; load average: ${load.map((value) => value.toFixed(2)).join(', ')} (1, 5, 15 min) on ${availableParallelism()} cores`;
}

/** Adds the note to each timeout error of `errors` that does not have it yet. */
export function amendTimeouts(errors: readonly ReportedError[] | undefined): void {
  for (const error of errors ?? []) {
    if (!error.name || !TIMEOUT_ERRORS.has(error.name) || !error.message || error.message.includes(NOTE)) continue;
    const ms = /timed out in (\d+)ms/.exec(error.message)?.[1] ?? '?';
    error.message = `${timeLimitNote(ms)}\n${error.message}`;
  }
}

/** The reporter: tests as they end (the load average of that moment), then hooks' errors when their file ends. */
export default class TimeLimitReporter implements Reporter {
  onTestCaseResult(testCase: TestCase): void {
    amendTimeouts(testCase.result().errors);
  }

  onTestModuleEnd(testModule: TestModule): void {
    amendTimeouts(testModule.errors());
    for (const suite of testModule.children.allSuites()) amendTimeouts(suite.errors());
    for (const test of testModule.children.allTests()) amendTimeouts(test.result().errors);
  }
}
