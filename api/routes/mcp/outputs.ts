// The results of the eight tools as zod schemas: tools/list publishes each as the tool's
// outputSchema (JSON Schema), and test/mcp-spec-shapes.test.ts checks every real result against
// them. Where the domain already parses a shape with zod (notes, links, events), that schema is used.
import { z } from 'zod';
import { searchLimits } from '../../../domain/notes/discovery.ts';
import { noteEventSchema, noteLinkSchema, noteRowSchema } from '../../../domain/notes/store.ts';
import { transactionAppliedSchema, transactionPreviewSchema, writeAppliedSchema, writePreviewSchema } from '../../../domain/notes/result-schemas.ts';

const mappingId = z.string().describe('The hosted mapping the tool acted on.');
const revision = z.string().describe('sha256:<64 hex>');

export const searchNotesOutput = z.object({
  mappingId,
  query: z.string(),
  results: z.array(
    z.object({
      path: z.string(),
      title: z.string(),
      revision,
      score: z.number(),
      matchedBy: z.array(z.enum(['words', 'path', 'substring'])),
      snippet: z.string(),
    }),
  ),
  truncated: z.boolean().describe('More notes matched than were returned.'),
  limit: z.number().int(),
  ranking: z
    .enum(['complete', 'bounded'])
    .describe(
      `complete: every note the words matched was ranked. bounded: they matched more than ${searchLimits.rankAllUpTo} notes, and the ranking covered ` +
        `up to ${searchLimits.boundedCandidates} each of the title matches and the longest notes (those most likely to rank highest; a short note dense ` +
        'with the word can be missed); narrow the query or pathPrefix for a complete ranking.',
    ),
});

export const noteContentOutput = noteRowSchema.extend({ mappingId });

const mode = z.enum(['create', 'append', 'replace']);
const replayed = z.boolean().describe('true when this is the stored result of an earlier call with the same idempotencyKey.');

export const noteWriteOutput = z.union([
  writePreviewSchema.extend({ mode }).describe('A preview (dryRun true): nothing was written.'),
  writeAppliedSchema.extend({ mode, replayed }).describe('An applied write.'),
]);

const outgoingLink = z.union([
  noteLinkSchema.extend({ status: z.literal('resolved'), path: z.string() }),
  noteLinkSchema.extend({ status: z.literal('ambiguous'), path: z.string(), candidates: z.array(z.string()) }),
  noteLinkSchema.extend({ status: z.literal('unresolved'), path: z.null() }),
]);

export const graphRelationsOutput = z.object({
  mappingId,
  path: z.string(),
  outgoing: z.array(outgoingLink),
  incoming: z.array(noteLinkSchema.extend({ sourcePath: z.string(), ambiguous: z.boolean() })),
  counts: z.object({ outgoing: z.number().int(), incoming: z.number().int(), unresolved: z.number().int(), ambiguous: z.number().int() }),
  truncated: z.boolean(),
  limit: z.number().int(),
});

export const canvasOutlineOutput = z.object({
  markdown: z.string(),
  nodeCount: z.number().int(),
  edgeCount: z.number().int(),
  groupCount: z.number().int(),
});

export const vaultSchemaOutput = z.object({
  mappingId,
  scannedNotes: z.number().int(),
  notesWithFrontmatter: z.number().int(),
  keys: z.array(z.object({ key: z.string(), notes: z.number().int(), types: z.array(z.string()), examples: z.array(z.unknown()) })),
  truncated: z.boolean().describe('The vault has more notes or keys than were scanned.'),
  limits: z.object({ notes: z.number().int(), keys: z.number().int(), frontmatterBytes: z.number().int() }),
});

export const noteTransactionOutput = z.union([
  transactionPreviewSchema.describe('A preview (dryRun true): nothing was written.'),
  transactionAppliedSchema.extend({ replayed }).describe('An applied transaction.'),
]);

export const knowledgeEventsOutput = z.object({
  mappingId,
  events: z.array(noteEventSchema),
  nextCursor: z.string().describe('Pass back as since for the next page or newer events.'),
  hasMore: z.boolean(),
});

/**
 * The structuredContent of an isError result: the REST problem fields. Open, because each code adds
 * its own fields (currentRevision, limit, …).
 */
export const toolProblemOutput = z
  .looseObject({
    code: z.string(),
    status: z.number().int(),
    title: z.string(),
    detail: z.string().optional(),
    requestId: z.string(),
    errors: z.array(z.looseObject({ pointer: z.string(), message: z.string(), code: z.string().optional() })).optional(),
  })
  .describe('A failed call (isError true): the problem, with the same code as REST.');

/**
 * A tool's published outputSchema: its result (the schema MCP's outputSchema describes) or, for an
 * isError result, the problem. The problem alternative is there because clients such as the
 * TypeScript SDK v1 validate structuredContent against outputSchema even when isError is true.
 * Objects are open (no additionalProperties: false), so adding a field later breaks no client.
 */
export function outputJsonSchema(output: z.ZodType): Record<string, unknown> {
  const results = output instanceof z.ZodUnion ? [...(output.options as z.ZodType[])] : [output];
  const { $schema: _ignored, ...schema } = z.toJSONSchema(z.union([...results, toolProblemOutput]), { io: 'input' }) as Record<string, unknown>;
  return { type: 'object', ...schema };
}
