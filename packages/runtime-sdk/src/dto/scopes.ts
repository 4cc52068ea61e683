// The `data` of the Context Scope operations. A caller names a stable scope id; the server resolves
// everything else (audience, workspace/vault authority, explicit grants, inherited policy), so none
// of it is ever taken from the caller. Shared memory is reviewed memory only: a candidate is a
// proposal until a person other than its proposer approves it and Forge executes it.
import { z } from 'zod';

const timestamp = z.string().describe('ISO-8601, UTC');
const cursorPage = { hasMore: z.boolean(), nextCursor: z.string().nullable() };

export const scopeSummarySchema = z
  .object({
    scopeId: z.string().min(1).max(200).describe('Stable scope id, chosen when the scope was created.'),
    name: z.string(),
    kind: z.string().describe('What the scope stands for (e.g. workspace, course, team).'),
    parentScopeId: z.string().nullable(),
  })
  .meta({ id: 'RuntimeScopeSummary' });
export type ScopeSummaryDto = z.infer<typeof scopeSummarySchema>;

export const scopeListSchema = z.object({ scopes: z.array(scopeSummarySchema), ...cursorPage }).meta({ id: 'RuntimeScopeList' });
export type ScopeListDto = z.infer<typeof scopeListSchema>;

export const scopeContextSchema = z
  .object({
    scope: scopeSummarySchema,
    /** Parents from the root down: where inherited policy comes from. */
    ancestry: z.array(scopeSummarySchema),
    /** The audience the server resolved; a service principal cannot name one. */
    audience: z.object({ kind: z.string(), description: z.string() }),
    workspace: z.object({ id: z.string(), name: z.string() }),
    /** The scope's vault and this installation's grant on it, when the scope has one. */
    vault: z.object({ vaultId: z.string(), access: z.enum(['read', 'write']).nullable() }).nullable(),
  })
  .meta({ id: 'RuntimeScopeContext' });
export type ScopeContextDto = z.infer<typeof scopeContextSchema>;

export const scopePolicySchema = z
  .object({
    scopeId: z.string(),
    /** The effective policy after inheritance: each setting and the scope it comes from. */
    settings: z.array(
      z.object({
        key: z.string(),
        value: z.unknown(),
        /** The scope whose own policy set the value (the scope itself or an ancestor); null: the service default. */
        sourceScopeId: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'RuntimeScopePolicy' });
export type ScopePolicyDto = z.infer<typeof scopePolicySchema>;

export const scopeIntelligenceSchema = z
  .object({
    scopeId: z.string(),
    /** Whether intelligence may run in this scope under its effective policy. */
    allowed: z.boolean(),
    reason: z.string().nullable(),
  })
  .meta({ id: 'RuntimeScopeIntelligence' });
export type ScopeIntelligenceDto = z.infer<typeof scopeIntelligenceSchema>;

export const memoryItemSchema = z
  .object({
    memoryId: z.string(),
    scopeId: z.string(),
    content: z.string(),
    /** The proposal it was reviewed through, and who approved it. */
    proposalId: z.string(),
    reviewedAt: timestamp,
    createdAt: timestamp,
  })
  .meta({ id: 'RuntimeMemoryItem' });

export const scopeMemorySchema = z.object({ scopeId: z.string(), items: z.array(memoryItemSchema), ...cursorPage }).meta({ id: 'RuntimeScopeMemory' });
export type ScopeMemoryDto = z.infer<typeof scopeMemorySchema>;

export const memoryCandidateInputSchema = z
  .strictObject({
    content: z.string().min(1).max(10_000),
    /** Why the product proposes it; shown to the reviewer. */
    rationale: z.string().max(2000).default(''),
  })
  .meta({ id: 'RuntimeMemoryCandidateRequest' });
export type MemoryCandidateInput = z.input<typeof memoryCandidateInputSchema>;

export const memoryCandidateSchema = z
  .object({
    candidateId: z.string(),
    scopeId: z.string(),
    /** The action proposal a person reviews; the memory exists only after it is executed. */
    proposalId: z.string(),
    state: z.string(),
    replayed: z.boolean(),
    createdAt: timestamp,
  })
  .meta({ id: 'RuntimeMemoryCandidate' });
export type MemoryCandidateDto = z.infer<typeof memoryCandidateSchema>;

/** A candidate followed through review: where its proposal is, the decision, and what Forge did. */
export const memoryCandidateStatusSchema = z
  .object({
    candidateId: z.string(),
    scopeId: z.string(),
    proposalId: z.string(),
    /** The proposal's state: proposed, pending_review, approved, rejected, expired, executing, executed, failed, undoing, undone. */
    state: z.string(),
    /** Whether the memory is in getScopeMemory now (executed and not undone). */
    shared: z.boolean(),
    decision: z.object({ decision: z.enum(['approved', 'rejected']), reason: z.string().nullable(), decidedAt: timestamp }).nullable(),
    expiresAt: timestamp,
    /** Forge's receipts, apply first, then an undo's. */
    receipts: z.array(
      z.object({ kind: z.enum(['apply', 'undo']), completedAt: timestamp, changes: z.array(z.object({ path: z.string(), operation: z.string() })) }),
    ),
    createdAt: timestamp,
  })
  .meta({ id: 'RuntimeMemoryCandidateStatus' });
export type MemoryCandidateStatusDto = z.infer<typeof memoryCandidateStatusSchema>;
