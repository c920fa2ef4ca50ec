/**
 * tools/call over /mcp with the official clients of both SDK generations (mcp-fixture.ts): a valid
 * call through the pipeline (structuredContent the envelope, content the short text, the trace
 * written), invalid and missing arguments answered with isError and field errors, null for an
 * optional field, forbidden keys, and an unknown tool.
 */
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { toolExecutions } from '../../drizzle/schema.ts';
import { tools } from '../../functions/registry.ts';
import logMood from '../../functions/table-tools/log-mood.ts';
import { createGateway } from '../../shared/http/app.ts';
import { db, tenantA, uniqueTimestamp } from './helpers.ts';
import { closeClients, connectWith, envelopeOf, SDKS, textOf, type ConnectOptions } from './mcp-fixture.ts';

afterEach(closeClients);

describe.each(SDKS)('$name', ({ sdk }) => {
  const connect = (options?: ConnectOptions) => connectWith(sdk, options);

  describe('MCP: tools/call', () => {
    it('runs a valid call through the pipeline; structuredContent is the envelope, content the short text', async () => {
      const gateway = createGateway(tools); // through send(), so the trace is written before we look
      const client = await connect({ worker: gateway });
      // Its own user id: other files' uniqueTimestamp() runs over the same instants.
      const input = { ...logMood.example, user_id: 'mcp-test', timestamp: uniqueTimestamp() };
      const result = await client.callTool({ name: 'log-mood', arguments: input });
      expect(result.isError).toBe(false);
      const envelope = envelopeOf(result);
      expect(envelope).toMatchObject({ success: true, data: { row_count: 1 }, meta: { tool: 'log-mood', attempts: 1 } });
      expect(textOf(result)).toContain(`Logged mood entry for mcp-test at ${input.timestamp}`);
      expect(textOf(result)).toContain('"row_count":1');
      const [trace] = await db.select().from(toolExecutions).where(eq(toolExecutions.id, envelope.meta.trace_id));
      expect(trace).toMatchObject({ tool: 'log-mood', status: 'success', projectId: tenantA.projectId });
    });

    it('answers invalid input with isError and one field error per problem, never a JSON-RPC error', async () => {
      const result = await (
        await connect()
      ).callTool({ name: 'log-mood', arguments: { ...logMood.example, energy_level: 15, mood: 'excited' } });
      expect(result.isError).toBe(true);
      expect(envelopeOf(result)).toMatchObject({
        success: false,
        error: {
          code: 'VALIDATION_ERROR',
          retryable: false,
          details: {
            fields: [
              { field: 'mood', code: 'invalid_value' },
              { field: 'energy_level', code: 'too_big' },
            ],
          },
        },
        meta: { tool: 'log-mood', attempts: 0 },
      });
      const text = textOf(result);
      expect(text).toContain("VALIDATION_ERROR: The input has 2 problems: Field 'mood' must be one of: happy, sad, neutral, anxious");
      expect(text).toContain('Hint: Example of a valid call: {');
      expect(text).toContain('Retryable: no.');
    });

    it('answers missing arguments with the missing fields', async () => {
      const result = await (await connect()).callTool({ name: 'log-mood' });
      expect(result.isError).toBe(true);
      expect(envelopeOf(result)).toMatchObject({
        error: {
          code: 'VALIDATION_ERROR',
          details: {
            fields: expect.arrayContaining([{ field: 'user_id', code: 'required', expected: 'a string', message: expect.any(String) }]),
          },
        },
      });
    });

    it('reads null for an optional field as absent: its default applies', async () => {
      // depth, limit, direction have defaults and are not nullable: null passes validation, and the
      // call reaches the database (which has no such task).
      const result = await (
        await connect()
      ).callTool({
        name: 'query-task-graph',
        arguments: { task_id: crypto.randomUUID(), depth: null, limit: null, direction: null, relationship_type: null },
      });
      expect(envelopeOf(result)).toMatchObject({ success: false, error: { code: 'NOT_FOUND' }, meta: { attempts: 1 } });
    });

    it('refuses forbidden keys in the arguments as sent, as HTTP does', async () => {
      const result = await (
        await connect()
      ).callTool({ name: 'log-mood', arguments: JSON.parse('{"__proto__": {"user_id": "x"}}') as Record<string, unknown> });
      expect(result.isError).toBe(true);
      expect(envelopeOf(result)).toMatchObject({
        error: { code: 'VALIDATION_ERROR', details: { fields: [{ code: 'forbidden_key', field: '__proto__' }] } },
      });
    });

    it('answers an unknown tool with isError and the list of tools', async () => {
      const result = await (await connect()).callTool({ name: 'no-such-tool', arguments: {} });
      expect(result.isError).toBe(true);
      expect(envelopeOf(result)).toMatchObject({
        success: false,
        error: { code: 'UNKNOWN_TOOL', details: { available_tools: tools.map((tool) => tool.id) } },
      });
      for (const tool of tools) expect(textOf(result)).toContain(tool.id);
    });
  });
});
