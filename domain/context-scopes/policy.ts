// The policy check a memory candidate passes before anyone reviews it (automation/policy.ts calls
// it when a review opens): the scope still exists in the proposal's workspace, its effective policy
// still accepts candidates, and its reviewed memory has room under memory.maxEntries.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { effectivePolicy, policyValue, scopeChainById } from './scopes.ts';

export async function memoryPromotionVerdict(db: CommonQueryMethods, input: { workspaceId: string; scopeId: string }): Promise<{ ok: true } | { ok: false; reason: string }> {
  const chain = await scopeChainById(db, input);
  if (!chain) return { ok: false, reason: 'The scope no longer exists in this workspace.' };
  const settings = effectivePolicy(chain.scope, chain.ancestry);
  if (policyValue(settings, 'memory.candidates') !== 'allowed') return { ok: false, reason: "The scope's policy no longer accepts shared memory candidates." };
  const max = Number(policyValue(settings, 'memory.maxEntries'));
  const held = await db.oneFirst(sql.type(z.object({ count: z.number() }))`
    SELECT count(*)::int AS count FROM scope_memories m WHERE m.scope_id = ${input.scopeId} AND m.removed_at IS NULL`);
  if (held >= max) return { ok: false, reason: `The scope already holds its ${max} reviewed memories (memory.maxEntries).` };
  return { ok: true };
}
