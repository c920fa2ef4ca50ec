/**
 * What an agent reads of the Idempotency-Key before calling: the catalog's field and each write
 * tool's description, and the header and 422 in the OpenAPI document.
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { IDEMPOTENCY_NOTE } from '../../shared/core/tool.ts';
import { getJson } from './helpers.ts';
import { registryGateway, type Data } from './idempotency-fixture.ts';

describe('Idempotency-Key in the catalog and the OpenAPI document', () => {
  it('says which tools accept a key, in the catalog field and in their description', async () => {
    const { body } = await getJson<{ tools: Data[] }>('/tools');
    if (!body.success) throw new Error(body.message);
    for (const entry of body.data.tools) {
      expect(entry.accepts_idempotency_key).toBe(!entry.annotations.readOnlyHint);
      expect(entry.description.includes(IDEMPOTENCY_NOTE)).toBe(entry.accepts_idempotency_key);
    }
    const writers = body.data.tools.filter((entry) => entry.accepts_idempotency_key).map((entry) => entry.id);
    expect(writers).toEqual(
      expect.arrayContaining(['add-document', 'replace-document', 'delete-document', 'embed-tasks', 'detect-dependencies', 'log-mood']),
    );
    // Idempotent only with a key: the MCP hint of the tools that write new rows stays false.
    expect(body.data.tools.find((entry) => entry.id === 'add-document')!.annotations.idempotentHint).toBe(false);
  });

  it('documents the header on write tools and 422 among the failures', async () => {
    const response = await registryGateway.fetch(new Request('http://edge-tools.test/openapi.json'), env, createExecutionContext());
    const document = (await response.json()) as Data;
    const addDocument = document.paths['/tools/add-document'].post;
    expect(addDocument.parameters).toEqual([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false })]);
    expect(addDocument.responses['422'].description).toContain('IDEMPOTENCY_MISMATCH');
    expect(document.paths['/tools/semantic-search'].post.parameters).toBeUndefined();
  });
});
