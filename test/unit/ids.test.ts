import { describe, expect, it } from 'vitest';
import { nameBasedUuid } from '../../shared/runtime/ids.ts';

describe('nameBasedUuid', () => {
  it('is a version 5 UUID, the same for the same name and different for another', async () => {
    const id = await nameBasedUuid('project:tool:call:document');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await nameBasedUuid('project:tool:call:document')).toBe(id);
    expect(await nameBasedUuid('project:tool:call:row')).not.toBe(id);
  });

  it("gives RFC 9562's published version 5 example (www.example.com in the DNS namespace)", async () => {
    // RFC 9562, Appendix A.4.
    expect(await nameBasedUuid('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });
});
