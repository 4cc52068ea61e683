// zod schemas of the Developer REST API: request validation and the OpenAPI document come from
// these same objects.
import { z } from 'zod';
import { transactionAppliedSchema, transactionPreviewSchema, writeAppliedSchema, writePreviewSchema } from '../../../domain/notes/result-schemas.ts';
import { noteLinkSchema, noteEventSchema, noteSummarySchema, trashItemSchema } from '../../../domain/notes/store.ts';
import { noteLimits } from '../../../domain/notes/paths.ts';
import { permissionSchema, workspaceSchema } from '../../../domain/identity/workspaces.ts';

// Error responses are not declared here: each route lists its problem codes (`schema.problems`)
// and api/openapi.ts turns them into application/problem+json responses.

export const mappingIdSchema = z.uuid().describe('The explicit hosted mapping of a vault (UUID).');

const revision = z.string().describe('Revision: "sha256:<64 hex>" of the exact UTF-8 bytes; the same token as the ETag (quotes optional).');

export const dryRunQuery = z
  .enum(['true', 'false'])
  .default('true')
  .transform((v) => v === 'true')
  .describe('true (default) previews; false applies.');

export const inventoryQuery = z.strictObject({
  mappingId: mappingIdSchema,
  limit: z.coerce.number().int().min(1).max(noteLimits.maxInventoryPage).default(noteLimits.maxInventoryPage).describe(`Notes per page, at most ${noteLimits.maxInventoryPage}.`),
  cursor: z.string().max(2048).optional().describe('nextCursor of the previous page.'),
});

export const inventoryResponse = z
  .object({ mappingId: z.uuid(), notes: z.array(noteSummarySchema), nextCursor: z.string().nullable(), hasMore: z.boolean() })
  .meta({ id: 'NoteInventoryPage' });

export const noteParams = z.object({
  category: z.string().min(1).describe('The first path segment (a folder), percent-encoded.'),
  filename: z.string().min(1).describe('The second path segment, ending in .md, percent-encoded.'),
});
export const mappingQuery = z.strictObject({ mappingId: mappingIdSchema.optional() });

export const noteResponse = z
  .object({
    mappingId: z.uuid(),
    path: z.string(),
    title: z.string(),
    revision: z.string(),
    size: z.number().int().nonnegative().describe('UTF-8 bytes of the content.'),
    createdAt: z.string(),
    updatedAt: z.string(),
    frontmatter: z.record(z.string(), z.unknown()).nullable(),
    links: z.array(noteLinkSchema),
    content: z.string(),
  })
  .meta({ id: 'Note' });

export const writeBody = z
  .strictObject({
    mappingId: mappingIdSchema.optional().describe('Required here or in the X-Service-Mapping header.'),
    path: z.string().max(8192).describe(`Vault-relative path ending in .md (segments ≤ ${noteLimits.maxSegmentBytes} bytes, path ≤ ${noteLimits.maxPathBytes} bytes).`),
    content: z.string().describe(`Markdown, at most ${noteLimits.maxContentBytes} UTF-8 bytes.`),
    dryRun: z.boolean().default(true).describe('true (default) previews; false applies and needs Idempotency-Key.'),
    expectedHash: revision.optional().describe('Current revision; required when replacing (or send If-Match).'),
  })
  .meta({ id: 'WriteRequest' });

export const writeResponse = z.union([writePreviewSchema, writeAppliedSchema]).meta({ id: 'WriteResult' });

export const deleteQuery = z.strictObject({ mappingId: mappingIdSchema.optional(), dryRun: dryRunQuery });

export const deleteResponse = z
  .union([
    z.object({
      applied: z.literal(false),
      dryRun: z.literal(true),
      operation: z.literal('delete'),
      mappingId: z.uuid(),
      path: z.string(),
      beforeRevision: z.string(),
      afterRevision: z.null(),
      revisionRequired: z.boolean(),
      diff: z.string(),
      diffTruncated: z.boolean(),
    }),
    z.object({
      applied: z.literal(true),
      dryRun: z.literal(false),
      operation: z.literal('delete'),
      mappingId: z.uuid(),
      path: z.string(),
      beforeRevision: z.string(),
      afterRevision: z.null(),
      trashId: z.uuid(),
      eventId: z.string(),
    }),
  ])
  .meta({ id: 'DeleteResult' });

export const transactionBody = z
  .strictObject({
    mappingId: mappingIdSchema.optional().describe('Required here or in the X-Service-Mapping header.'),
    dryRun: z.boolean().default(true),
    actions: z
      .array(
        z.strictObject({
          type: z.literal('write-note'),
          path: z.string().max(8192),
          content: z.string(),
          expectedHash: revision.optional(),
        }),
      )
      .describe(`1 to ${noteLimits.maxTransactionActions} actions; all apply or none.`),
  })
  .meta({ id: 'TransactionRequest' });

export const transactionResponse = z
  .union([transactionPreviewSchema, transactionAppliedSchema])
  .meta({ id: 'TransactionResult' });

export const eventsQuery = z.strictObject({
  mappingId: mappingIdSchema,
  since: z.string().min(1).max(256).optional().describe('Opaque cursor from a previous page (nextCursor); omit to start at the first event.'),
  limit: z.coerce.number().int().min(1).max(noteLimits.maxEventsPage).default(100).describe(`At most ${noteLimits.maxEventsPage}.`),
});

export const eventsResponse = z
  .object({ mappingId: z.uuid(), events: z.array(noteEventSchema), nextCursor: z.string(), hasMore: z.boolean() })
  .meta({ id: 'EventsPage' });

export const trashQuery = z.strictObject({
  mappingId: mappingIdSchema,
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('Items per page, at most 1000.'),
  cursor: z.string().max(2048).optional().describe('nextCursor of the previous page.'),
});

export const trashResponse = z
  .object({ mappingId: z.uuid(), items: z.array(trashItemSchema), nextCursor: z.string().nullable(), hasMore: z.boolean() })
  .meta({ id: 'TrashPage' });

export const restoreParams = z.object({ trashId: z.uuid().describe('The trash item (trashId of the delete or of GET /api/dev/trash).') });
export const restoreBody = z.strictObject({ mappingId: mappingIdSchema.optional(), dryRun: z.boolean().default(true) });

export const restoreResponse = z
  .union([
    z.object({
      applied: z.literal(false),
      dryRun: z.literal(true),
      operation: z.literal('restore'),
      mappingId: z.uuid(),
      trashId: z.uuid(),
      path: z.string(),
      beforeRevision: z.null(),
      afterRevision: z.string(),
    }),
    z.object({
      applied: z.literal(true),
      dryRun: z.literal(false),
      operation: z.literal('restore'),
      mappingId: z.uuid(),
      trashId: z.uuid(),
      path: z.string(),
      beforeRevision: z.null(),
      afterRevision: z.string(),
      eventId: z.string(),
    }),
  ])
  .meta({ id: 'RestoreResult' });

export const workspacesQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50).describe('Workspaces per page, at most 100.'),
  cursor: z.string().max(512).optional().describe('nextCursor of the previous page.'),
});

export const workspaceMembershipSchema = workspaceSchema
  .extend({
    role: z.string().describe("The caller's role in the workspace (built-in: owner, admin, editor, reviewer, viewer; or a custom role)."),
    permissions: z.array(permissionSchema).describe("What the caller's role may do there (docs/identity.md)."),
  })
  .meta({ id: 'WorkspaceMembership' });

export const workspacesResponse = z
  .object({ workspaces: z.array(workspaceMembershipSchema), nextCursor: z.string().nullable(), hasMore: z.boolean() })
  .meta({ id: 'WorkspacesPage' });
