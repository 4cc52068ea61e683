// The bounded Drive and Classroom round trips of a delegated connection, as the runtime offers
// them: each runs with the connection's access token (refreshed inside withAccessToken), checks the
// connection was granted the service, and turns every provider failure into a stable code (a call
// Google did not answer within GOOGLE_TIMEOUT_MS is 504 connection_provider_timeout, however the
// client library said so: google-oauth.ts inspectFailure). Writes at Google are made retry-safe by
// an intent recorded under the caller's Idempotency-Key first (migration 0016): Drive creates under
// a file id reserved once; a Classroom assignment carries a marker a retry reconciles by. Only
// provider object lineage (ids, versions, titles) is kept.
//
// Who says "created": of all the requests with one key, only the one whose UPDATE moves the intent
// from pending to done answers `201, replayed: false`; every other answer with the key replays that
// record (200, `replayed: true`, Idempotent-Replayed). Concurrent Drive creates with one key all
// reach Drive with the same reserved id (one makes the file, the others meet it as a 409 and read
// it), so "my call to Google succeeded" cannot decide it: several requests get the file's lineage,
// and each used to answer 201 replayed:false. The intent's single transition does decide it.
import { createHash } from 'node:crypto';
import { sql, StatementTimeoutError } from 'slonik';
import type { CommonQueryMethods, DatabasePool, DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { emptyRow } from '../../db/row-schemas.ts';
import { AppError } from '../errors.ts';
import { publishRuntimeNote } from '../product-runtime/runtime-notes.ts';
import type { RuntimeRequestContext } from '../product-runtime/runtime-notes.ts';
import { withAccessToken } from './connections.ts';
import type { ConnectionCaller, ConnectionDeps } from './connections.ts';
import { createCourseWork, findCourseWorkByMarker, listActiveCourses, listRoster, listSubmissionAttachments, newCourseWorkMarker } from './google-classroom.ts';
import type { CourseWorkSummary, Page } from './google-classroom.ts';
import { createDocument, DriveContentTooLargeError, DriveUnsupportedFileError, DriveVersionConflictError, getLineage, readDocumentText, reserveFileId, updateDocument } from './google-drive.ts';
import type { DriveLineage } from './google-drive.ts';
import { GoogleApiError, GoogleInputError } from './google-oauth.ts';
import type { GoogleAccess } from './google-oauth.ts';
import { OAuthProviderError } from './provider.ts';
import type { GoogleClientSettings, GoogleService } from './provider.ts';

export type RoundTripDeps = ConnectionDeps & { settings: GoogleClientSettings };

/** An import reads at most this much of a Drive document (the note size limit's order). */
export const IMPORT_MAX_BYTES = 1_048_576;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A provider failure as the product sees it: a stable code, never Google's text or a token. */
function providerFailure(error: unknown, connectionId: string): unknown {
  if (error instanceof AppError) return error;
  if (error instanceof DriveVersionConflictError) {
    return new AppError('drive_version_conflict', `The file is at version ${error.current.version}; read it again before writing.`, {
      extensions: { current: { connectionId, ...error.current, replayed: false } },
    });
  }
  if (error instanceof DriveContentTooLargeError) return new AppError('drive_content_too_large', undefined, { extensions: { limitBytes: error.limitBytes } });
  if (error instanceof DriveUnsupportedFileError) return new AppError('drive_unsupported_file');
  if (error instanceof GoogleInputError) return new AppError('invalid_request', error.message, { extensions: { errors: [{ pointer: `/${error.field}`, message: error.message }] } });
  if (error instanceof GoogleApiError) {
    switch (error.code) {
      case 'provider_unauthorized':
        return new AppError('connection_reauthorization_required', 'Google no longer accepts this connection; the person must connect again.');
      case 'provider_forbidden':
        return new AppError('connection_provider_forbidden');
      case 'provider_not_found':
        return new AppError('connection_provider_not_found');
      case 'provider_rate_limited':
        return new AppError('connection_provider_rate_limited', undefined, { headers: { 'retry-after': '30' } });
      case 'provider_timeout':
        return new AppError('connection_provider_timeout');
      default:
        return new AppError('connection_provider_error');
    }
  }
  if (error instanceof OAuthProviderError) return new AppError(error.code === 'provider_timeout' ? 'connection_provider_timeout' : 'connection_provider_error');
  return error;
}

/** Runs `fn` at Google for a connection that holds `service`, with its failures mapped. */
async function atGoogle<T>(deps: RoundTripDeps, caller: ConnectionCaller, connectionId: string, service: GoogleService, fn: (access: GoogleAccess) => Promise<T>): Promise<T> {
  const run = (refresh: boolean) =>
    withAccessToken(
      deps,
      connectionId,
      caller,
      async ({ accessToken, connection }) => {
        if (!connection.services.includes(service)) {
          throw new AppError('connection_provider_forbidden', `This connection was not granted ${service}; start a connection that asks for it.`);
        }
        return fn({ settings: deps.settings, accessToken });
      },
      { refresh },
    );
  try {
    try {
      return await run(false);
    } catch (error) {
      // Google refused the token before its stated expiry (revoked access token, clock skew): a 401
      // means nothing was done, so refresh once and try again; a second 401 is a lost grant.
      if (error instanceof GoogleApiError && error.code === 'provider_unauthorized') return await run(true);
      throw error;
    }
  } catch (error) {
    throw providerFailure(error, connectionId);
  }
}

const document = (connectionId: string, lineage: DriveLineage, replayed: boolean) => ({ connectionId, ...lineage, replayed });

// ---- intents -------------------------------------------------------------------------------------

type Operation = 'drive.create' | 'classroom.assignment.create';
const intentRow = z.object({ id: z.uuid(), connectionId: z.uuid(), fingerprint: z.string(), handle: z.string(), state: z.enum(['pending', 'done']), result: z.unknown() });
const intentColumns = sql.fragment`id, connection_id AS "connectionId", request_fingerprint AS fingerprint, provider_handle AS handle, state, result`;

/** The intent of this key, created with `handle` if there is none; another request's intent is refused. */
async function claimIntent(db: DatabasePool, caller: ConnectionCaller, input: { operation: Operation; key: string; connectionId: string; fingerprint: string; handle: () => Promise<string> }) {
  const keyHash = sha256(input.key);
  const find = () => db.maybeOne(sql.type(intentRow)`
    SELECT ${intentColumns} FROM connection_write_intents
     WHERE installation_id = ${caller.installationId} AND operation = ${input.operation} AND idempotency_key_hash = ${keyHash}`);
  let intent = await find();
  let fresh = false;
  if (!intent) {
    const handle = await input.handle();
    intent = await db.maybeOne(sql.type(intentRow)`
      INSERT INTO connection_write_intents (installation_id, connection_id, operation, idempotency_key_hash, request_fingerprint, provider_handle, created_request_id)
      VALUES (${caller.installationId}, ${input.connectionId}, ${input.operation}, ${keyHash}, ${input.fingerprint}, ${handle}, ${caller.requestId})
      ON CONFLICT (installation_id, operation, idempotency_key_hash) DO NOTHING
      RETURNING ${intentColumns}`);
    fresh = intent !== null;
    // A concurrent request with the key won: go on with its intent (its handle, its marker).
    intent ??= await find();
  }
  if (!intent) throw new AppError('internal_error');
  if (intent.fingerprint !== input.fingerprint || intent.connectionId !== input.connectionId) {
    throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used for another write (another connection, target or body).');
  }
  return { intent, fresh, keyHash };
}

const resultRow = z.object({ result: z.unknown() });

/**
 * Records the outcome of a pending intent, once. Concurrent calls for one intent serialize on its row
 * (the UPDATE's lock, then `state = 'pending'` re-checked on the committed row): exactly one moves it
 * to done and gets `first: true` — that request alone answers "created". Every other gets the
 * outcome already recorded (the same object, whatever it saw at Google) and answers it as a replay.
 */
async function completeIntent(db: CommonQueryMethods, intentId: string, result: unknown): Promise<{ first: boolean; result: unknown }> {
  const completed = await db.maybeOne(sql.type(resultRow)`
    UPDATE connection_write_intents SET state = 'done', result = ${sql.jsonb(result as never)}, done_at = now()
     WHERE id = ${intentId} AND state = 'pending'
    RETURNING result`);
  if (completed) return { first: true, result: completed.result };
  const recorded = await db.one(sql.type(resultRow)`SELECT result FROM connection_write_intents WHERE id = ${intentId} AND state = 'done'`);
  return { first: false, result: recorded.result };
}

/**
 * Locks an intent's row for the Classroom create, waiting for a concurrent request that holds it at
 * most `waitMs` (one Google call's timeout). A longer wait (the holder is slow at Google, or the
 * pool's statement timeout comes first) answers 409 idempotency_in_flight with Retry-After: 1 rather
 * than a database error: the first request is still running, and a retry with the key replays it.
 */
async function lockIntent(tx: DatabaseTransactionConnection, intentId: string, waitMs: number) {
  await tx.query(sql.type(emptyRow)`SELECT set_config('lock_timeout', ${`${Math.max(1, Math.round(waitMs))}ms`}, true)`);
  try {
    return await tx.one(sql.type(intentRow)`SELECT ${intentColumns} FROM connection_write_intents WHERE id = ${intentId} FOR UPDATE`);
  } catch (error) {
    // 55P03 lock_not_available: lock_timeout passed; a statement timeout can only be the same wait.
    if (error instanceof StatementTimeoutError || (error as { code?: unknown } | null)?.code === '55P03') {
      throw new AppError('idempotency_in_flight', 'A request with this Idempotency-Key is still creating the assignment at Google; retry with the same key.', {
        headers: { 'retry-after': '1' },
      });
    }
    throw error;
  }
}

// ---- Drive ---------------------------------------------------------------------------------------

/**
 * Creates a Google Doc from Markdown, retry-safe: the file id is reserved once under the key, so a
 * retry (after any failure, or concurrent with the first) can only meet its own file. Concurrent
 * requests with the key each call Drive with that id (no lock is held across Google calls); the one
 * that records the outcome answers created, the others replay it (completeIntent).
 */
export async function createDriveDocument(deps: RoundTripDeps, caller: ConnectionCaller, connectionId: string, key: string, input: { name: string; markdown: string }) {
  return atGoogle(deps, caller, connectionId, 'drive', async (access) => {
    const { intent } = await claimIntent(deps.db, caller, {
      operation: 'drive.create',
      key,
      connectionId,
      fingerprint: sha256(JSON.stringify([connectionId, input.name, input.markdown])),
      handle: () => reserveFileId(access),
    });
    if (intent.state === 'done') return { document: document(connectionId, intent.result as DriveLineage, true), replayed: true };
    const lineage = await createDocument(access, { fileId: intent.handle, name: input.name, markdown: input.markdown });
    const outcome = await completeIntent(deps.db, intent.id, lineage);
    return { document: document(connectionId, outcome.result as DriveLineage, !outcome.first), replayed: !outcome.first };
  });
}

export async function getDriveDocument(deps: RoundTripDeps, caller: ConnectionCaller, connectionId: string, fileId: string) {
  return atGoogle(deps, caller, connectionId, 'drive', async (access) => document(connectionId, await getLineage(access, fileId), false));
}

/** Writes only over the version the caller saw; a changed file is a conflict carrying its current lineage. */
export async function updateDriveDocument(deps: RoundTripDeps, caller: ConnectionCaller, connectionId: string, fileId: string, input: { expectedVersion: string; markdown: string }) {
  return atGoogle(deps, caller, connectionId, 'drive', async (access) =>
    document(connectionId, await updateDocument(access, { fileId, expectedVersion: input.expectedVersion, markdown: input.markdown }), false),
  );
}

/**
 * Reads a Drive document (bounded) and previews or applies it as one hosted note through the
 * knowledge core, exactly as publishNote does (same rules, same provenance, same idempotency).
 */
export async function importDriveDocument(
  deps: RoundTripDeps,
  caller: ConnectionCaller & RuntimeRequestContext,
  input: { connectionId: string; fileId: string; path: string; expectedRevision?: string | undefined; mode: 'preview' | 'apply' },
  rawKey: string | undefined,
) {
  const read = await atGoogle(deps, caller, input.connectionId, 'drive', (access) => readDocumentText(access, { fileId: input.fileId, maxBytes: IMPORT_MAX_BYTES, format: 'markdown' }));
  const published = await publishRuntimeNote(deps.db, caller, { path: input.path, content: read.text, expectedRevision: input.expectedRevision, mode: input.mode }, rawKey);
  return { status: published.status, data: { document: document(input.connectionId, read.lineage, false), publication: published.data } };
}

// ---- Classroom -----------------------------------------------------------------------------------

export async function listClassroomCourses(deps: RoundTripDeps, caller: ConnectionCaller, connectionId: string, page: Page) {
  return atGoogle(deps, caller, connectionId, 'classroom', (access) => listActiveCourses(access, page));
}

export async function listClassroomRoster(deps: RoundTripDeps, caller: ConnectionCaller, connectionId: string, courseId: string, page: Page) {
  return atGoogle(deps, caller, connectionId, 'classroom', (access) => listRoster(access, courseId, page));
}

export async function listAssignmentAttachments(deps: RoundTripDeps, caller: ConnectionCaller, connectionId: string, courseId: string, courseWorkId: string, page: Page) {
  return atGoogle(deps, caller, connectionId, 'classroom', (access) => listSubmissionAttachments(access, courseId, courseWorkId, page));
}

export type AssignmentInput = { title: string; description?: string | undefined; materials?: { url: string }[] | undefined; dueDate?: string | undefined; dueTime?: string | undefined };

/**
 * Creates an assignment, retry-safe: the intent and its marker are recorded under the key first;
 * the intent row stays locked while Google is called, so concurrent requests with the key take
 * turns, and every request but the first looks for the marker before creating (an earlier attempt
 * may have created it and lost the answer). A retried create never makes a second assignment.
 * Only the request that created it and recorded the outcome answers created; one that found it by
 * its marker, or found the outcome recorded, answers a replay. A request that waits for the lock
 * longer than one Google call answers 409 idempotency_in_flight (lockIntent).
 */
export async function createClassroomAssignment(deps: RoundTripDeps, caller: ConnectionCaller, connectionId: string, courseId: string, key: string, input: AssignmentInput) {
  return atGoogle(deps, caller, connectionId, 'classroom', async (access) => {
    const { intent: claimed, fresh } = await claimIntent(deps.db, caller, {
      operation: 'classroom.assignment.create',
      key,
      connectionId,
      fingerprint: sha256(JSON.stringify([connectionId, courseId, input])),
      handle: async () => newCourseWorkMarker(),
    });
    const answer = (summary: CourseWorkSummary, replayed: boolean) => ({ assignment: { connectionId, courseId, ...summary, replayed }, replayed });
    if (claimed.state === 'done') return answer(claimed.result as CourseWorkSummary, true);
    return deps.db.transaction(async (tx) => {
      const intent = await lockIntent(tx, claimed.id, deps.settings.timeoutMs);
      if (intent.state === 'done') return answer(intent.result as CourseWorkSummary, true);
      // Not this request's own new intent (a retry, or one that waited for a concurrent request): an
      // earlier attempt may have created the assignment and lost the answer, so look for its marker.
      const found = fresh ? null : await findCourseWorkByMarker(access, courseId, intent.handle);
      const summary = found ?? (await createCourseWork(access, { courseId, ...input, workType: 'ASSIGNMENT', marker: intent.handle }));
      const outcome = await completeIntent(tx, intent.id, summary);
      return answer(outcome.result as CourseWorkSummary, found !== null || !outcome.first);
    });
  });
}
