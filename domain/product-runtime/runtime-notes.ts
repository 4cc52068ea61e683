// listNotes, readNote and publishNote for an admitted installation: the same knowledge core, bounds
// and revisions as the Developer REST API, through the installation's logical-vault grant (the
// chain has checked it). What differs is only who acts: provenance names the service principal
// (source `runtime`) and the grant the change came through (in the event's mapping column), and
// applied publications are idempotent per installation.
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { AppError } from '../errors.ts';
import { fingerprintOf, requireIdempotencyKey } from '../idempotency.ts';
import { applyWrite, previewWrite } from '../notes/knowledge.ts';
import type { Target, WritePreview } from '../notes/knowledge.ts';
import { noteLimits } from '../notes/paths.ts';
import { listNoteSummaries, noteAsJson, noteRowSchema } from '../notes/store.ts';
import type { NoteRow, Provenance } from '../notes/store.ts';
import { chainFusionSchemas } from './chain.ts';
import type { ChainFusion, RuntimeContext } from './chain.ts';

export type RuntimeRequestContext = RuntimeContext & { requestId: string };

/** The vault the chain admitted the request to; the event's mapping column records the grant. */
function targetOf(caller: RuntimeContext): Target {
  if (!caller.vault) throw new AppError('vault_not_granted');
  return { vaultId: caller.vault.vaultId, mappingId: caller.vault.grantId };
}

export async function listRuntimeNotes(db: CommonQueryMethods, caller: RuntimeContext, page: { limit: number; cursor?: string | undefined }) {
  const target = targetOf(caller);
  const limit = Math.min(page.limit, noteLimits.maxInventoryPage);
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, z.object({ after: z.string() })).after;
  const rows = await listNoteSummaries(db, target.vaultId, { limit: limit + 1, ...(after !== undefined ? { after } : {}) });
  const notes = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { vaultId: target.vaultId, notes, hasMore, nextCursor: hasMore ? encodeCursor({ after: notes[notes.length - 1]!.path }) : null };
}

// readNote's hot path: the note rides in the chain's statement (one round trip, as the REST read's
// fused admission), read only when every link held, as one JSON column; or, for a chain the process
// keeps (decision 112), beside the kept statement's epoch, from the vault the request names.
const noteSchemas = chainFusionSchemas({ note: noteRowSchema.nullable() });

/** The fusion that reads `path` (already validated) of the vault the chain admitted the request to (through its grant). */
export function noteReadFusion(path: string): ChainFusion<{ note: NoteRow | null }> {
  return {
    name: 'runtime_read_note',
    schemas: noteSchemas,
    ctes: sql.fragment`fused_note AS (
      SELECT ${noteAsJson} AS note
        FROM judged j
        JOIN logical_vault_grants g ON g.id = j."grantId"
        JOIN notes n ON n.vault_id = g.vault_id AND n.path = ${path}
       WHERE j.admitted)`,
    columns: sql.fragment`(SELECT note FROM fused_note) AS note`,
    keptColumns: (vaultId) => sql.fragment`(SELECT ${noteAsJson} FROM notes n WHERE n.vault_id = ${vaultId}::uuid AND n.path = ${path}) AS note`,
  };
}

/** The note the fused statement read, or note_not_found. */
export function fusedNote(caller: RuntimeContext, path: string, note: NoteRow | null) {
  const target = targetOf(caller);
  if (!note) throw new AppError('note_not_found', `No live note at ${path}.`);
  return { vaultId: target.vaultId, ...note };
}

/** What the knowledge core judged, the same for a preview and an apply. */
const judged = (target: Target, write: Pick<WritePreview, 'path' | 'title' | 'operation' | 'beforeRevision' | 'afterRevision' | 'size'>) => ({
  vaultId: target.vaultId,
  path: write.path,
  title: write.title,
  operation: write.operation,
  beforeRevision: write.beforeRevision,
  afterRevision: write.afterRevision,
  size: write.size,
});

/**
 * The knowledge core words its 428 for the REST API (expectedHash in the body, If-Match on delete);
 * the runtime takes neither, only `expectedRevision`, so its refusal names that field. The spec's
 * forms are not accepted as well: one way to send a revision keeps replays and fingerprints simple.
 */
function runtimeWording(error: unknown): unknown {
  if (!(error instanceof AppError) || error.code !== 'revision_required') return error;
  return new AppError('revision_required', 'Replacing an existing note needs its current revision: send expectedRevision (the revision readNote answered) in the body.', {
    extensions: {
      ...error.extensions,
      errors: [{ pointer: '/body/expectedRevision', message: 'required when replacing', code: 'revision_required' }],
    },
  });
}

export type PublishInput = { path: string; content: string; expectedRevision?: string | undefined; mode: 'preview' | 'apply' };

/**
 * Preview (the default) writes nothing and needs no key; apply needs an Idempotency-Key (the same
 * key and body replay the first answer; another body is 422), and the current revision to replace.
 */
export async function publishRuntimeNote(db: DatabasePool, caller: RuntimeRequestContext, input: PublishInput, rawKey: string | undefined) {
  const target = targetOf(caller);
  const write = { path: input.path, content: input.content, expectedHash: input.expectedRevision };
  if (input.mode === 'preview') {
    const preview = await previewWrite(db, target, write);
    return {
      status: 200,
      data: {
        mode: 'preview' as const,
        applied: false,
        ...judged(target, preview),
        revisionRequired: preview.revisionRequired,
        diff: preview.diff,
        diffTruncated: preview.diffTruncated,
        eventId: null,
        replayed: false,
      },
    };
  }
  const key = requireIdempotencyKey(rawKey);
  // Idempotency records are per installation (the account column holds the acting owner's id) and vault.
  const idempotency = { accountId: caller.installationId, route: 'runtime:publishNote', scope: target.vaultId, key, fingerprint: fingerprintOf(write) };
  const provenance: Provenance = { actor: { type: 'service_principal', id: caller.servicePrincipalId }, source: 'runtime', requestId: caller.requestId, idempotencyKey: key };
  const result = await applyWrite(db, target, write, provenance, idempotency).catch((error: unknown) => {
    throw runtimeWording(error);
  });
  const applied = result.body;
  return {
    status: result.status,
    data: {
      mode: 'apply' as const,
      applied: true,
      ...judged(target, applied),
      revisionRequired: null,
      diff: null,
      diffTruncated: null,
      eventId: applied.eventId,
      replayed: result.replayed,
    },
  };
}
