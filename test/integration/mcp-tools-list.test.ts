/**
 * Connecting to /mcp and listing its tools, with the official clients of both SDK generations
 * (mcp-fixture.ts): the stateless session and the protocol version each settles on, and tools/list
 * with every tool's description, title, annotations and input schema (judged by a standard JSON
 * Schema validator and against what the definitions say in words).
 */
import { Validator, type Schema } from '@cfworker/json-schema';
import { afterEach, describe, expect, it } from 'vitest';
import { tools } from '../../functions/registry.ts';
import { unadmittedFields } from '../support/envelope.ts';
import { send, tenantA } from './helpers.ts';
import { closeClients, connectWith, negotiated, SDKS, type ConnectOptions } from './mcp-fixture.ts';

afterEach(closeClients);

describe.each(SDKS)('$name', ({ sdk, protocolVersion }) => {
  const connect = (options?: ConnectOptions) => connectWith(sdk, options);

  describe('MCP: session', () => {
    it('connects, statelessly, and names the server, its tools capability and the protocol version', async () => {
      const client = await connect();
      expect(negotiated.get(client)).toBe(protocolVersion);
      expect(client.getServerVersion()).toMatchObject({ name: 'edge-tools' });
      expect(client.getServerCapabilities()).toMatchObject({ tools: {} });
      expect(client.getInstructions()).toContain('structuredContent');
    });

    it('answers GET /mcp with 405: there is no server-to-client stream', async () => {
      const response = await send(
        new Request('http://edge-tools.test/mcp', { headers: { accept: 'text/event-stream', authorization: `Bearer ${tenantA.apiKey}` } }),
      );
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    });
  });

  describe('MCP: tools/list', () => {
    it('advertises every tool with its description and the schemas the validator enforces', async () => {
      const { tools: listed } = await (await connect()).listTools();
      expect(listed.map((entry) => entry.name)).toEqual(tools.map((tool) => tool.id));
      // Judged by a standard JSON Schema validator (draft 2020-12), not by the code that generates the schemas.
      const judge = (schema: unknown, value: unknown) => new Validator(schema as Schema, '2020-12', false).validate(value).valid;
      for (const entry of listed) {
        const tool = tools.find((candidate) => candidate.id === entry.name)!;
        // The idempotency note is said once, in the server's instructions, not in every description.
        expect(entry.description).toBe(tool.purpose);
        expect(
          unadmittedFields(entry.inputSchema, Object.fromEntries(Object.keys(tool.input.shape).map((field) => [field, null]))),
          entry.name,
        ).toEqual([]);
        expect(judge(entry.inputSchema, tool.example), entry.name).toBe(true);
        expect(judge(entry.inputSchema, { ...tool.example, not_a_field: 1 }), entry.name).toBe(false);
        // No outputSchema: structuredContent is the envelope the server's instructions describe once.
        expect(entry.outputSchema, entry.name).toBeUndefined();
      }
      // One tool's schema against what its definition says in words, written out by hand.
      const mood = listed.find((entry) => entry.name === 'log-mood')!.inputSchema as Record<string, any>;
      expect(mood).toMatchObject({ type: 'object', additionalProperties: false });
      expect([...mood.required].sort()).toEqual(['energy_level', 'mood', 'timestamp', 'user_id']);
      expect(mood.properties.mood.enum).toEqual(['happy', 'sad', 'neutral', 'anxious']);
      expect(mood.properties.energy_level).toMatchObject({ type: 'integer', minimum: 1, maximum: 10 });
    });

    it('gives every tool a human title and truthful annotations', async () => {
      const { tools: listed } = await (await connect()).listTools();
      const byName = new Map(listed.map((entry) => [entry.name, entry]));
      for (const tool of tools) {
        const entry = byName.get(tool.id)!;
        expect(entry.title).toBe(tool.title);
        // Every hint is stated, none left to the specification's defaults: some clients do not apply
        // them before deciding whether to ask the person.
        expect(Object.keys(entry.annotations ?? {}).sort()).toEqual(['destructiveHint', 'idempotentHint', 'openWorldHint', 'readOnlyHint']);
        if (tool.annotations.readOnlyHint)
          expect(entry.annotations).toEqual({
            readOnlyHint: true,
            destructiveHint: false,
            idempotentHint: true,
            openWorldHint: tool.annotations.openWorldHint,
          });
        else expect(entry.annotations).toEqual(tool.annotations);
      }
      // Spot checks of the facts themselves, not of the code that copies them.
      const of = (name: string) => byName.get(name)!.annotations;
      expect(of('semantic-search')).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(of('delete-document')).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
      expect(of('add-document')).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
      expect(of('log-mood')).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    });

    it('carries enums, bounds, required fields and descriptions', async () => {
      const { tools: listed } = await (await connect()).listTools();
      const schema = listed.find((entry) => entry.name === 'log-mood')!.inputSchema;
      expect(schema).toMatchObject({
        required: ['user_id', 'mood', 'energy_level', 'timestamp'],
        additionalProperties: false,
        properties: {
          mood: { enum: ['happy', 'sad', 'neutral', 'anxious'] },
          energy_level: { type: 'integer', minimum: 1, maximum: 10, description: expect.stringContaining('full of energy') },
          user_id: { maxLength: 100 },
          // A ceiling of 500 characters and more is stated too: learnt from the list, not from a refusal.
          notes: { anyOf: [{ type: 'string', maxLength: 500 }, { type: 'null' }] },
        },
      });
      // No reference, no definitions, no empty entry left in a list (allOf: [{}]), in any tool's schema.
      for (const entry of listed) expect(JSON.stringify(entry.inputSchema), entry.name).not.toMatch(/"\$(ref|defs)"|\[\{\}|,\{\}[,\]]/);
    });
  });
});
