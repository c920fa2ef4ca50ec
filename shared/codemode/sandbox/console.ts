/**
 * The `console` the agent's code is handed: its lines are kept within the bounds of lines and
 * characters, the rest counted. The gateway counts them again (../answer.ts): this keeps the
 * sandbox's memory bounded, it is not what the answer trusts.
 */
import { append, freeze, sliceString, stringify, StringConstructor } from './builtins.ts';

/** The console methods the code may call. */
export type SandboxConsole = Readonly<Record<'log' | 'info' | 'debug' | 'warn' | 'error', (...args: unknown[]) => void>>;

/** A console and what it kept. */
export interface BoundedConsole {
  console: SandboxConsole;
  /** The lines kept, in order. */
  logs: string[];
  /** Lines left out past the bounds. */
  dropped(): number;
}

/** A console keeping at most `logLines` lines and `logChars` characters in all. */
export function createConsole({ logLines, logChars }: { logLines: number; logChars: number }): BoundedConsole {
  const logs: string[] = [];
  let chars = 0;
  let dropped = 0;
  const writer =
    (prefix: string) =>
    (...args: unknown[]): void => {
      if (logs.length >= logLines || chars >= logChars) {
        dropped++;
        return;
      }
      let line = prefix;
      for (let i = 0; i < args.length; i++) line += (i === 0 ? '' : ' ') + format(args[i]);
      line = sliceString(line, 0, logChars - chars);
      chars += line.length;
      append(logs, line);
    };
  const console = freeze({ log: writer(''), info: writer(''), debug: writer(''), warn: writer('[warn] '), error: writer('[error] ') });
  return { console, logs, dropped: () => dropped };
}

/** One argument as a log line shows it: a string as it is, anything else as JSON when it can be. */
function format(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return stringify(value) ?? StringConstructor(value);
  } catch {
    try {
      return StringConstructor(value);
    } catch {
      return '[unprintable]';
    }
  }
}
