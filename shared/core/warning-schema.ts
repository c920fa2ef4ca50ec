/**
 * A {@link Warning} as a zod schema: how the answers' `meta.warnings` and the stored executions
 * (`GET /executions/:trace_id`) describe it, to the OpenAPI document and MCP's output schemas.
 */
import * as z from 'zod';
import type { Warning } from './contract.ts';

/** One warning of a call that did its work (see {@link Warning}). */
export const warningSchema = z.object({
  code: z.enum(['lease_lost', 'rounded']),
  message: z.string(),
  field: z.string().optional(),
  received: z.number().optional(),
  stored: z.number().optional(),
});

// The schema describes exactly the contract's type: a change to one without the other fails to compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
true satisfies Same<z.output<typeof warningSchema>, Warning>;
