/**
 * The repository stands on its own: no file points a reader at documents a fresh clone does not
 * have. What a contributor needs is in README.md, ARCHITECTURE.md and docs/.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Phrases that name documents outside the repository. Written split so that this file does not
 * match itself.
 */
const OUTSIDE_REFERENCES = [
  ['shared', '/notes'],
  ['DESIGN', '.md'],
  ['seed', ' 00'],
].map((parts) => parts.join(''));

/** Files committed or about to be (untracked but not ignored), apart from the lock file. */
function repositoryFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  return listed.split('\0').filter((path) => path !== '' && path !== 'package-lock.json' && !path.startsWith('node_modules/'));
}

function readIfPresent(path: string): string {
  try {
    return readFileSync(ROOT + path, 'utf8');
  } catch {
    return ''; // deleted in the work tree but not yet in the index
  }
}

describe('the repository refers to nothing outside it', () => {
  it('lists the files it checks', () => {
    const files = repositoryFiles();
    expect(files).toContain('README.md');
    expect(files).toContain('ARCHITECTURE.md');
    expect(files.filter((path) => path.startsWith('shared/')).length).toBeGreaterThan(10);
  });

  it('names no outside document in any file', () => {
    const found: string[] = [];
    for (const path of repositoryFiles()) {
      readIfPresent(path)
        .split('\n')
        .forEach((line, index) => {
          for (const phrase of OUTSIDE_REFERENCES) {
            if (line.toLowerCase().includes(phrase.toLowerCase())) found.push(`${path}:${index + 1}: ${phrase}`);
          }
        });
    }
    expect(found).toEqual([]);
  });
});
