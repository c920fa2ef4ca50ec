import { describe, expect, it } from 'vitest';
import { extractTasks } from '../../functions/documents/lib/task-extraction.ts';

describe('extractTasks', () => {
  it('extracts every checkbox list marker, checked or not, with position, line and section', () => {
    const markdown = [
      '# Hiring plan', //                                   1
      '',
      '- [ ] Hire a senior backend engineer', //            3
      '* [x] Write the job description',
      '+ [X] Post it on **LinkedIn**',
      '1. [ ] Screen candidates',
      '2) [x] Book [interview rooms](https://example.com)',
      '',
      '## Security', //                                     9
      '- [ ]  Renew the SOC 2 audit  ',
    ].join('\n');
    expect(extractTasks(markdown)).toEqual([
      { text: 'Hire a senior backend engineer', position: 0, line: 3, offset: 15, checked: false, section: 'Hiring plan' },
      { text: 'Write the job description', position: 1, line: 4, offset: 52, checked: true, section: 'Hiring plan' },
      { text: 'Post it on **LinkedIn**', position: 2, line: 5, offset: 84, checked: true, section: 'Hiring plan' },
      { text: 'Screen candidates', position: 3, line: 6, offset: 114, checked: false, section: 'Hiring plan' },
      { text: 'Book [interview rooms](https://example.com)', position: 4, line: 7, offset: 139, checked: true, section: 'Hiring plan' },
      { text: 'Renew the SOC 2 audit', position: 5, line: 10, offset: 203, checked: false, section: 'Security' },
    ]);
  });

  it("gives each task's line start in characters (code points), whatever the line breaks", () => {
    const markdown = '😀 intro\r\n- [ ] First\r- [ ] Sëcond 🙂\n\n  - [ ] Third';
    const points = [...markdown];
    for (const task of extractTasks(markdown)) {
      // Judged by code-point slicing, as Postgres' substr counts: the line at the offset is the item.
      expect(points.slice(task.offset).join('')).toMatch(new RegExp(`^\\s*- \\[ \\] ${task.text}`));
    }
    expect(extractTasks(markdown).map((t) => t.offset)).toEqual([9, 21, 37]);
  });

  it('finds items at any indentation, nested or indented with tabs', () => {
    const markdown = '- [ ] Parent\n  - [ ] Child\n      - [x] Grandchild\n\t- [ ] Tabbed\n        1. [ ] Deep numbered';
    expect(extractTasks(markdown).map((t) => [t.text, t.line])).toEqual([
      ['Parent', 1],
      ['Child', 2],
      ['Grandchild', 3],
      ['Tabbed', 4],
      ['Deep numbered', 5],
    ]);
  });

  it('omits section before the first heading', () => {
    expect(extractTasks('- [ ] Orphan')).toEqual([{ text: 'Orphan', position: 0, line: 1, offset: 0, checked: false }]);
  });

  it('skips empty checkbox items and anything that is not a task checkbox', () => {
    const markdown = [
      '- [ ]',
      '- [x]   ',
      '- [-] Cancelled',
      '- [] No space',
      '- [ ]No space after the box',
      '-[ ] No space after the marker',
      '[ ] Not a list item',
      '- Plain item',
      'Text with - [ ] inside',
      '- [ ] Real one',
    ].join('\n');
    expect(extractTasks(markdown).map((t) => t.text)).toEqual(['Real one']);
    expect(extractTasks('')).toEqual([]);
  });

  it('ignores fenced code blocks of backticks and tildes, including unclosed ones', () => {
    const markdown = [
      '- [ ] Before', //                  1
      '```markdown',
      '- [ ] Inside backticks',
      '# Not a heading',
      '```',
      '~~~~',
      '- [ ] Inside tildes',
      '~~~', //                          too short to close the ~~~~ fence
      '- [ ] Still inside',
      '~~~~',
      '- [ ] After', //                   11
      '  ```',
      '  - [ ] Inside an indented fence',
      '  ```',
      '- [ ] Last', //                    15
      '```',
      '- [ ] In an unclosed fence',
    ].join('\n');
    expect(extractTasks(markdown).map((t) => [t.text, t.line, t.position])).toEqual([
      ['Before', 1, 0],
      ['After', 11, 1],
      ['Last', 15, 2],
    ]);
    expect(extractTasks(markdown)[1]!.section).toBeUndefined();
  });

  it('does not open a fence for inline code with backticks in the info string', () => {
    expect(extractTasks('```inline``` text\n- [ ] Task').map((t) => t.text)).toEqual(['Task']);
  });

  it('uses the nearest ATX or setext heading as the section', () => {
    const markdown = [
      '## Launch ##',
      '- [ ] One',
      '',
      'Operations',
      '==========',
      '- [ ] Two',
      'Follow-ups',
      '---',
      '- [ ] Three',
      '- [ ] A list item',
      '---',
      '- [ ] Four',
      '###### C#',
      '- [ ] Five',
    ].join('\n');
    expect(extractTasks(markdown).map((t) => [t.text, t.section])).toEqual([
      ['One', 'Launch'],
      ['Two', 'Operations'],
      ['Three', 'Follow-ups'],
      ['A list item', 'Follow-ups'],
      ['Four', 'Follow-ups'],
      ['Five', 'C#'],
    ]);
  });

  it('accepts \\r\\n and \\r line endings', () => {
    expect(extractTasks('# A\r\n- [ ] One\r- [x] Two\r\n').map((t) => [t.text, t.line, t.section])).toEqual([
      ['One', 2, 'A'],
      ['Two', 3, 'A'],
    ]);
  });
});
