// /api/dev/notes, /api/dev/transactions, /api/dev/trash and /api/dev/events: thin adapters over
// the knowledge-transaction core (domain/notes/knowledge.ts).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import type { GroupCommit } from '../../../domain/notes/group-commit.ts';
import { z } from 'zod';
import { AppError } from '../../../domain/errors.ts';
import { uriTooLong } from '../../edge.ts';
import {
  applyDelete,
  applyRestore,
  applyTransaction,
  previewDelete,
  previewRestore,
  previewTransaction,
  previewWrite,
} from '../../../domain/notes/knowledge.ts';
import { etagOf } from '../../../domain/notes/markdown.ts';
import { noteLimits, validateNotePath } from '../../../domain/notes/paths.ts';
import { admitInventory, inventoryPage, InventoryPages } from '../../../domain/notes/inventory.ts';
import { readNoteAsCaller } from '../../../domain/notes/read-as-caller.ts';
import type { AdmissionCache, TokenAdmission } from '../../../domain/principals/admission-cache.ts';
import { listTrash } from '../../../domain/notes/store.ts';
import { sendJsonText } from '../shared/json-text.ts';
import type { AllowanceLeases } from '../../../domain/allowance-lease.ts';
import { acceptCharged, presentedToken, withChallenge } from '../../auth.ts';
import { decodeCursor, encodeCursor } from '../../../domain/cursor.ts';
import { idempotencyKeyHeader } from '../shared/headers.ts';
import { applyContext, eventsPage, parseActionRevisions, resolveTarget, restCaller } from '../shared/vault-calls.ts';
import { mergeRevisionInputs, notModified, noteUrl, preconditionHeaders, prefersMarkdown, requestedMappingId, sendApplied } from './http.ts';
import {
  deleteQuery,
  deleteResponse,
  eventsQuery,
  eventsResponse,
  inventoryQuery,
  inventoryResponse,
  mappingQuery,
  noteParams,
  noteResponse,
  restoreBody,
  restoreParams,
  restoreResponse,
  transactionBody,
  transactionResponse,
  trashQuery,
  trashResponse,
  writeBody,
  writeResponse,
} from './schemas.ts';

/** category/filename from the two route segments; an encoded "/" inside one is refused. */
function pathFromSegments(params: { category: string; filename: string }): string {
  if (params.category.includes('/') || params.filename.includes('/')) {
    throw new AppError('path_not_addressable', 'A path segment contains an encoded "/"; this route takes exactly category/filename.', {
      extensions: { how: 'List the vault with GET /api/dev/notes and read deeper notes with the MCP tool get_note_content.' },
    });
  }
  return validateNotePath(`${params.category}/${params.filename}`);
}

const tags = ['notes'];
const security = [{ bearerAuth: [] }];

export const notesRoutes: FastifyPluginAsyncZod<{ db: DatabasePool; leases: AllowanceLeases; admissions: AdmissionCache<TokenAdmission>; notes: GroupCommit }> = async (app, { db, leases, admissions, notes }) => {
  // The inventory pages this app built, by vault sequence (a cache: a miss reads the page).
  const inventoryPages = new InventoryPages();
  app.get(
    '/notes',
    {
      schema: {
        tags,
        security,
        operationId: 'listNotes',
        summary: 'Inventory of a hosted vault',
        description: `At most ${noteLimits.maxInventoryPage} notes per page, ordered by path (bytewise); follow nextCursor until hasMore is false. Needs vault.read on the mapping's vault.`,
        querystring: inventoryQuery,
        response: { 200: inventoryResponse },
        problems: ['mapping_not_found', 'permission_denied'],
      },
      // Authentication, allowance, mapping access and the vault's sequence are one statement; the page
      // is a second only when this process does not hold it (domain/notes/inventory.ts).
      config: { admitsInHandler: true },
    },
    async (request, reply) => {
      const { mappingId, limit, cursor } = request.query;
      const { usage, mapping, vaultSeq, ...principal } = await withChallenge(() => admitInventory(db, { rawToken: presentedToken(request), leases, admissions, mappingId }));
      acceptCharged(request, reply, principal, usage);
      const after = cursor === undefined ? '' : decodeCursor(cursor, z.object({ after: z.string() })).after;
      const page = await inventoryPage(db, inventoryPages, { vaultId: mapping.vaultId, vaultSeq }, after, limit);
      const nextCursor = page.hasMore && page.lastPath !== null ? encodeCursor({ after: page.lastPath }) : null;
      // The page's notes are JSON text already (domain/notes/inventory.ts); the envelope is this request's.
      return sendJsonText(reply, `{"mappingId":${JSON.stringify(mapping.mappingId)},"notes":[${page.notes}],"nextCursor":${JSON.stringify(nextCursor)},"hasMore":${page.hasMore}}`);
    },
  );

  app.get(
    '/notes/:category/:filename',
    {
      schema: {
        tags,
        security,
        operationId: 'readNote',
        summary: 'Read one note (category/filename)',
        description:
          'Exactly two path segments. Send `Accept: text/markdown` for the raw Markdown. The ETag is the revision; If-None-Match answers 304. ' +
          'Notes at other depths are listed by the inventory and read with the MCP tool get_note_content.',
        params: noteParams,
        querystring: mappingQuery,
        response: { 200: noteResponse, 304: z.null().describe('Not modified: no body.') },
        problems: ['path_not_addressable', 'invalid_path', 'mapping_mismatch', 'mapping_not_found', 'permission_denied', 'note_not_found'],
      },
      // Authentication, allowance, mapping access and the read are one query here (the hot path).
      config: { admitsInHandler: true },
    },
    async (request, reply) => {
      const path = pathFromSegments(request.params);
      const mappingId = requestedMappingId(request, request.query.mappingId);
      const rawToken = presentedToken(request);
      const { usage, mapping: target, note, ...principal } = await withChallenge(() => readNoteAsCaller(db, { rawToken, iface: 'rest', leases, admissions, mappingId, path }));
      acceptCharged(request, reply, principal, usage);
      if (!note) throw new AppError('note_not_found', `No live note at ${path}.`);
      reply.header('etag', etagOf(note.revision));
      reply.header('vary', 'Accept');
      if (notModified(request, note.revision)) return reply.code(304).send(null as never);
      if (prefersMarkdown(request)) {
        return reply.type('text/markdown; charset=utf-8').serializer((body: unknown) => body as string).send(note.content as never);
      }
      return { mappingId: target.mappingId, ...note };
    },
  );

  // Other depths under /notes/ on the single-note methods: explain instead of 404. Two segments land
  // here only when one is longer than the router's parameter limit.
  app.route({
    method: ['GET', 'DELETE'],
    url: '/notes/*',
    schema: { hide: true },
    handler: async (request) => {
      const tail = (request.params as { '*': string })['*'].replace(/\/$/, '');
      if (tail.split('/').length === 2) throw uriTooLong();
      throw new AppError('path_not_addressable', 'Single-note routes take exactly two segments: /api/dev/notes/:category/:filename.', {
        extensions: { how: 'List the vault with GET /api/dev/notes and read other depths with the MCP tool get_note_content; write them with POST /api/dev/notes.' },
      });
    },
  });

  app.post(
    '/notes',
    {
      bodyLimit: 4 * 1_048_576,
      schema: {
        tags,
        security,
        operationId: 'writeNote',
        summary: 'Preview or apply one note write',
        description:
          'dryRun true (default) previews: operation, revisions and a unified diff; nothing is written. dryRun false applies and needs Idempotency-Key; ' +
          'replacing needs expectedHash or If-Match (428 without, 409 when stale, 412 when If-Match fails); If-Match: * requires that a note exists (412 otherwise); ' +
          'If-None-Match: * makes it create-only. An applied create answers 201 with Location (for a category/filename path). Any path depth is accepted here.',
        body: writeBody,
        response: { 200: writeResponse, 201: writeResponse },
        problems: [
          'invalid_path',
          'invalid_revision',
          'mapping_mismatch',
          'mapping_not_found',
          'permission_denied',
          'idempotency_key_required',
          'invalid_idempotency_key',
          'idempotency_key_reused',
          'idempotency_in_flight',
          'revision_required',
          'revision_conflict',
          'path_case_conflict',
          'precondition_failed',
          'note_too_large',
        ],
      },
    },
    async (request, reply) => {
      const body = request.body;
      const mappingId = requestedMappingId(request, body.mappingId);
      const headers = preconditionHeaders(request);
      const expectedHash = mergeRevisionInputs(body.expectedHash, headers.ifMatch);
      // A preview answers exactly as the apply would, so it needs the same access.
      const target = await resolveTarget(db, restCaller(request), mappingId, 'write');
      const input = { path: body.path, content: body.content, ...headers, expectedHash };
      if (body.dryRun) return previewWrite(db, target, input);
      const { idempotency, provenance } = applyContext(restCaller(request), 'POST /api/dev/notes', target, idempotencyKeyHeader(request), input);
      const result = await notes.applyWrite(target, input, provenance, idempotency);
      return sendApplied(reply, result, (applied) => noteUrl(app.prefix, applied.mappingId, applied.path));
    },
  );

  app.delete(
    '/notes/:category/:filename',
    {
      schema: {
        tags,
        security,
        operationId: 'deleteNote',
        summary: 'Preview or apply a delete through the recoverable trash',
        description:
          'dryRun true (default) previews. dryRun=false needs If-Match (the current revision, or * for whatever is current) and Idempotency-Key; in one transaction the note goes to the trash, ' +
          'leaves the live set, and an event is recorded. Restore with POST /api/dev/trash/{trashId}/restore.',
        params: noteParams,
        querystring: deleteQuery,
        response: { 200: deleteResponse },
        problems: [
          'path_not_addressable',
          'invalid_path',
          'invalid_revision',
          'mapping_mismatch',
          'mapping_not_found',
          'permission_denied',
          'note_not_found',
          'idempotency_key_required',
          'invalid_idempotency_key',
          'idempotency_key_reused',
          'idempotency_in_flight',
          'revision_required',
          'precondition_failed',
        ],
      },
    },
    async (request, reply) => {
      const path = pathFromSegments(request.params);
      const mappingId = requestedMappingId(request, request.query.mappingId);
      const headers = preconditionHeaders(request);
      const target = await resolveTarget(db, restCaller(request), mappingId, 'write');
      // If-Match: * on a path with no note stays 404 note_not_found, as without it (RFC 9110 §13.2.1).
      const ifMatch = headers.ifMatchAny ? '*' : headers.ifMatch;
      if (request.query.dryRun) return previewDelete(db, target, path, ifMatch);
      const { idempotency, provenance } = applyContext(restCaller(request), 'DELETE /api/dev/notes', target, idempotencyKeyHeader(request), { path, ifMatch });
      return sendApplied(reply, await applyDelete(db, target, path, ifMatch, provenance, idempotency));
    },
  );

  app.post(
    '/transactions',
    {
      bodyLimit: 24 * 1_048_576,
      schema: {
        tags,
        security,
        operationId: 'applyTransaction',
        summary: 'Preview or apply a batch of note writes, all or nothing',
        description:
          `Up to ${noteLimits.maxTransactionActions} write-note actions (${noteLimits.maxTransactionContentBytes} content bytes in all). Every action is validated and judged ` +
          'before any is applied; failures point at the action (e.g. /actions/57/expectedHash) and nothing is written. Applied changes share one transactionId.',
        body: transactionBody,
        response: { 200: transactionResponse },
        problems: [
          'invalid_path',
          'invalid_revision',
          'duplicate_path',
          'mapping_mismatch',
          'mapping_not_found',
          'permission_denied',
          'idempotency_key_required',
          'invalid_idempotency_key',
          'idempotency_key_reused',
          'idempotency_in_flight',
          'revision_required',
          'revision_conflict',
          'path_case_conflict',
          'note_too_large',
          'transaction_too_large',
        ],
      },
    },
    async (request, reply) => {
      const body = request.body;
      const mappingId = requestedMappingId(request, body.mappingId);
      const actions = parseActionRevisions(body.actions);
      const target = await resolveTarget(db, restCaller(request), mappingId, 'write');
      if (body.dryRun) return previewTransaction(db, target, actions);
      const { idempotency, provenance } = applyContext(restCaller(request), 'POST /api/dev/transactions', target, idempotencyKeyHeader(request), actions);
      return sendApplied(reply, await applyTransaction(db, target, actions, provenance, idempotency));
    },
  );

  app.get(
    '/trash',
    {
      schema: {
        tags,
        security,
        operationId: 'listTrash',
        summary: 'Deleted notes that can be restored, newest first',
        description: 'Restorable and restored trash items of the vault the mapping names, newest first; follow nextCursor until hasMore is false. Needs vault.read.',
        querystring: trashQuery,
        response: { 200: trashResponse },
        problems: ['mapping_not_found', 'permission_denied'],
      },
    },
    async (request) => {
      const { mappingId, limit, cursor } = request.query;
      const target = await resolveTarget(db, restCaller(request), mappingId, 'read');
      const before = cursor === undefined ? undefined : decodeCursor(cursor, z.object({ deletedAt: z.string(), id: z.uuid() }));
      const rows = await listTrash(db, target.vaultId, { limit: limit + 1, ...(before ? { before } : {}) });
      const items = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      const last = items[items.length - 1];
      return { mappingId: target.mappingId, items, hasMore, nextCursor: hasMore && last ? encodeCursor({ deletedAt: last.deletedAt, id: last.trashId }) : null };
    },
  );

  app.post(
    '/trash/:trashId/restore',
    {
      schema: {
        tags,
        security,
        operationId: 'restoreNote',
        summary: 'Preview or apply the restore of a deleted note',
        description: 'Puts the note back at its path with the same content and revision. dryRun false needs Idempotency-Key; 409 note_exists if the path is taken.',
        params: restoreParams,
        body: restoreBody,
        response: { 200: restoreResponse },
        problems: [
          'mapping_mismatch',
          'mapping_not_found',
          'permission_denied',
          'trash_item_not_found',
          'trash_item_restored',
          'note_exists',
          'path_case_conflict',
          'idempotency_key_required',
          'invalid_idempotency_key',
          'idempotency_key_reused',
          'idempotency_in_flight',
        ],
      },
    },
    async (request, reply) => {
      const mappingId = requestedMappingId(request, request.body.mappingId);
      const { trashId } = request.params;
      const target = await resolveTarget(db, restCaller(request), mappingId, 'write');
      if (request.body.dryRun) return previewRestore(db, target, trashId);
      const { idempotency, provenance } = applyContext(restCaller(request), 'POST /api/dev/trash/restore', target, idempotencyKeyHeader(request), { trashId });
      return sendApplied(reply, await applyRestore(db, target, trashId, provenance, idempotency));
    },
  );

  app.get(
    '/events',
    {
      schema: {
        tags: ['events'],
        security,
        operationId: 'listEvents',
        summary: 'Provenance events of one mapped vault',
        description:
          'Every change to the vault the mapping names, oldest first. Omit `since` to start at the first event; pass nextCursor back ' +
          'as `since` for the next page or, later, for newer events. Cursors are opaque. Event ids count up per vault in commit order, ' +
          'so a cursor never skips an event.',
        querystring: eventsQuery,
        response: { 200: eventsResponse },
        problems: ['mapping_not_found', 'permission_denied'],
      },
    },
    async (request) => {
      const { mappingId, since, limit } = request.query;
      return eventsPage(db, restCaller(request), mappingId, { since, limit, sincePointer: '/querystring/since' });
    },
  );
};

