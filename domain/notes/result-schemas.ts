// The shapes of what the knowledge core's writes and transactions return (knowledge.ts), once:
// the REST routes publish them as response schemas and the MCP tools as their outputSchema, each
// adding only what its adapter adds (MCP: the write mode and whether a result was replayed).
import { z } from 'zod';

/** What one write would do or did. */
export const writeOutcome = {
  mappingId: z.uuid(),
  path: z.string(),
  title: z.string(),
  operation: z.enum(['create', 'replace', 'noop']),
  beforeRevision: z.string().nullable().describe('sha256:<64 hex>, or null when the note did not exist.'),
  afterRevision: z.string().describe('sha256:<64 hex>'),
  size: z.number().int().nonnegative().describe('Bytes of the content after the write.'),
};

const previewFields = { revisionRequired: z.boolean(), diff: z.string().describe('Unified diff of the change.'), diffTruncated: z.boolean() };
const eventId = z.string().nullable().describe('The provenance event; null for a no-op.');

export const writePreviewSchema = z.object({ applied: z.literal(false), dryRun: z.literal(true), ...writeOutcome, ...previewFields });
export const writeAppliedSchema = z.object({ applied: z.literal(true), dryRun: z.literal(false), ...writeOutcome, eventId });

const transactionAction = z.object({ index: z.number().int().nonnegative(), ...writeOutcome });

export const transactionPreviewSchema = z.object({
  applied: z.literal(false),
  dryRun: z.literal(true),
  mappingId: z.uuid(),
  transactionId: z.null(),
  results: z.array(transactionAction.extend(previewFields)),
});
export const transactionAppliedSchema = z.object({
  applied: z.literal(true),
  dryRun: z.literal(false),
  mappingId: z.uuid(),
  transactionId: z.uuid(),
  results: z.array(transactionAction.extend({ eventId })),
});
