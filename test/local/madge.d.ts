/** madge ships no types: the part of its API the import-cycle test uses. */
declare module 'madge' {
  interface MadgeConfig {
    baseDir?: string;
    fileExtensions?: string[];
    tsConfig?: string;
    detectiveOptions?: Record<string, Record<string, unknown>>;
  }
  interface MadgeResult {
    /** Each file and the files it imports, relative to `baseDir`. */
    obj(): Record<string, string[]>;
    /** Each import circle, as the files along it. */
    circular(): string[][];
    /** Imports madge could not resolve to a file. */
    warnings(): { skipped: string[] };
  }
  export default function madge(paths: string | string[], config?: MadgeConfig): Promise<MadgeResult>;
}
