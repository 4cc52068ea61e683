// The knowledge-transaction core: previews and applies of note writes, deletes, restores and
// batches. REST routes, MCP tools and the Forge executor all call these functions; they differ
// only in the Provenance they pass. Rules that hold for every caller:
// - a preview writes nothing and needs no idempotency key;
// - an apply is one Postgres transaction holding the vault lock, claims its idempotency key in that
//   transaction, writes the notes, records one event per change, and stores the response; single-note
//   writes that arrive together share such a transaction (applyWriteBatch, group-commit.ts), each
//   judged and answered as if it ran alone after the ones before it;
// - replacing or deleting an existing note needs its current revision; a stale one is refused,
//   never silently overwritten.
// System Operations' vault import (applyImportBatch, at the end) writes through the same batched
// writer as API transactions, with its own rule for existing notes (an explicit policy instead of a
// revision per note) and without an idempotency key: identical content is a no-op instead.
import { randomUUID } from 'node:crypto';
import type { CommonQueryMethods, DatabasePool, DatabaseTransactionConnection } from 'slonik';
import { AppError } from '../errors.ts';
import type { ErrorCode, ErrorPointer } from '../errors.ts';
import { claimIdempotencyKey, claimIdempotencyKeys, storeIdempotentResponse, storeIdempotentResponses } from '../idempotency.ts';
import type { IdempotencyScope, StoredResponse } from '../idempotency.ts';
import { deriveNote, unifiedDiff } from './markdown.ts';
import type { DerivedNote } from './markdown.ts';
import { assertContentSize, contentBytes, noteLimits, pathKey, validateNotePath } from './paths.ts';
import {
  deferIndexMerges,
  findNote,
  findPathStates,
  findTrashItem,
  lockVault,
  markTrashRestored,
  mergeDeferredIndexEntries,
  moveNoteToTrash,
  findNotesByKey,
  recordEvent,
  recordEvents,
  recordEventsOf,
  upsertNote,
  upsertNotes,
} from './store.ts';
import type { NoteRow, PathState, Provenance } from './store.ts';

export type Target = { vaultId: string; mappingId: string };

/**
 * Conditions a write may carry. `ifMatch`/`ifMatchAny`/`ifNoneMatchAny` come from HTTP headers;
 * `ifMatchAny` is `If-Match: *` (RFC 9110 §13.1.1): a note must exist, whatever its revision.
 */
export type Preconditions = { expectedHash?: string | undefined; ifMatch?: string | undefined; ifMatchAny?: boolean | undefined; ifNoneMatchAny?: boolean | undefined };

/** Whether the write names the revision it replaces (or, with If-Match: *, any revision). */
const namesRevision = (input: Preconditions) => input.expectedHash !== undefined || input.ifMatch !== undefined || input.ifMatchAny === true;

export type WriteOperation = 'create' | 'replace' | 'noop';

export type ApplyResult<T> = { status: number; body: T; etag: string | null; replayed: boolean };

type PlannedWrite<Current extends { revision: string } = NoteRow> = {
  path: string;
  content: string;
  derived: DerivedNote;
  current: Current | null;
  operation: WriteOperation;
};

type Db = CommonQueryMethods;

const conflict = (pointer: string, currentRevision: string | null, expected: string) =>
  new AppError('revision_conflict', `The note's current revision is ${currentRevision ?? 'none (it does not exist)'}, not ${expected}.`, {
    extensions: { currentRevision, errors: [{ pointer, message: 'stale revision', code: 'revision_conflict' }] },
  });

/**
 * Decides what a write would do and checks its preconditions against the current note.
 * `requireRevision` is true for applies: replacing without a revision is then 428.
 */
function judgeWrite<Current extends { revision: string } = NoteRow>(
  input: { path: string; content: string } & Preconditions,
  current: Current | null,
  caseCollision: string | undefined,
  options: { requireRevision: boolean; pointer: string },
): PlannedWrite<Current> {
  const { pointer } = options;
  if (!current && caseCollision !== undefined) {
    throw new AppError('path_case_conflict', `"${caseCollision}" already exists; paths may not differ only by case.`, {
      extensions: { existingPath: caseCollision, errors: [{ pointer: `${pointer}/path`, message: 'case collision', code: 'path_case_conflict' }] },
    });
  }
  if (input.ifNoneMatchAny && current) {
    throw new AppError('precondition_failed', 'If-None-Match: * — a note already exists at this path.', { extensions: { currentRevision: current.revision } });
  }
  if (input.ifMatchAny && !current) {
    throw new AppError('precondition_failed', 'If-Match: * — no note exists at this path.', { extensions: { currentRevision: null } });
  }
  if (input.ifMatch !== undefined && current?.revision !== input.ifMatch) {
    throw new AppError('precondition_failed', `If-Match ${input.ifMatch} does not match the current revision.`, {
      extensions: { currentRevision: current?.revision ?? null },
    });
  }
  if (input.expectedHash !== undefined && current?.revision !== input.expectedHash) {
    throw conflict(`${pointer}/expectedHash`, current?.revision ?? null, input.expectedHash);
  }
  if (options.requireRevision && current && !namesRevision(input)) {
    throw new AppError('revision_required', undefined, {
      extensions: { currentRevision: current.revision, errors: [{ pointer: `${pointer}/expectedHash`, message: 'required when replacing', code: 'revision_required' }] },
    });
  }
  const derived = deriveNote(input.path, input.content);
  const operation: WriteOperation = !current ? 'create' : current.revision === derived.revision ? 'noop' : 'replace';
  return { path: input.path, content: input.content, derived, current, operation };
}

function validateWriteInput<T extends { path: string; content: string }>(input: T, pointer = ''): T {
  const path = validateNotePath(input.path, `${pointer}/path`);
  assertContentSize(input.content, `${pointer}/content`);
  return { ...input, path };
}

/**
 * What a path's key holds in `live` (notes by path key, findNotesByKey): the note at the path itself,
 * or, when there is none, the live path that differs from it only by case.
 */
function atPath<Row extends { path: string }>(live: ReadonlyMap<string, Row>, path: string): { current: Row | null; collision: string | undefined } {
  const held = live.get(pathKey(path));
  if (!held) return { current: null, collision: undefined };
  return held.path === path ? { current: held, collision: undefined } : { current: null, collision: held.path };
}

async function planWrite(db: Db, target: Target, input: { path: string; content: string } & Preconditions, requireRevision: boolean): Promise<PlannedWrite> {
  const { current, collision } = atPath(await findNotesByKey(db, target.vaultId, [input.path]), input.path);
  return judgeWrite(input, current, collision, { requireRevision, pointer: '' });
}

function describeWrite(target: Target, plan: PlannedWrite<{ revision: string }>) {
  return {
    operation: plan.operation,
    mappingId: target.mappingId,
    path: plan.path,
    title: plan.derived.title,
    beforeRevision: plan.current?.revision ?? null,
    afterRevision: plan.derived.revision,
    size: plan.derived.sizeBytes,
  };
}

export type WritePreview = ReturnType<typeof describeWrite> & { applied: false; dryRun: true; revisionRequired: boolean; diff: string; diffTruncated: boolean };
export type WriteApplied = ReturnType<typeof describeWrite> & { applied: true; dryRun: false; eventId: string | null };

export async function previewWrite(db: Db, target: Target, rawInput: { path: string; content: string } & Preconditions): Promise<WritePreview> {
  const input = validateWriteInput(rawInput);
  const plan = await planWrite(db, target, input, false);
  return {
    applied: false,
    dryRun: true,
    ...describeWrite(target, plan),
    revisionRequired: plan.current !== null && !namesRevision(input),
    ...unifiedDiff(plan.path, plan.current?.content ?? null, plan.content),
  };
}

/** Runs `work` in one transaction that owns the idempotency key, or replays the stored response. */
async function idempotentApply<T>(db: DatabasePool, idempotency: IdempotencyScope, work: (tx: DatabaseTransactionConnection) => Promise<Omit<ApplyResult<T>, 'replayed'>>): Promise<ApplyResult<T>> {
  return db.transaction(async (tx) => {
    const stored = await claimIdempotencyKey(tx, idempotency);
    if (stored) return { status: stored.status, body: stored.body as T, etag: stored.etag, replayed: true };
    const result = await work(tx);
    await storeIdempotentResponse(tx, idempotency, result);
    return { ...result, replayed: false };
  });
}

/** A judged write as the batched writer needs it. */
type NoteWrite = { path: string; content: string; derived: DerivedNote; operation: WriteOperation | 'unchanged'; beforeRevision: string | null };

/**
 * The batched writer: one statement for the notes, one for their events (numbered in
 * the order given, all with `transactionId`). Returns each write's event id, null where nothing
 * changed. The caller holds the vault lock.
 */
async function writeMany(tx: Db, target: Target, writes: readonly NoteWrite[], provenance: Provenance, transactionId: string): Promise<Array<string | null>> {
  const changed = writes.filter((w) => w.operation === 'create' || w.operation === 'replace');
  await upsertNotes(tx, target.vaultId, changed);
  const ids = await recordEvents(
    tx,
    { vaultId: target.vaultId, mappingId: target.mappingId, transactionId },
    changed.map((w) => ({ type: w.operation === 'create' ? 'note.created' : 'note.replaced', path: w.path, beforeRevision: w.beforeRevision, afterRevision: w.derived.revision })),
    provenance,
  );
  const idOf = new Map(changed.map((w, i) => [w, ids[i]!]));
  return writes.map((w) => idOf.get(w) ?? null);
}

/**
 * Applies one note write in a transaction of its own. A no-op (identical content) writes nothing and
 * records no event. The API's interfaces write through a GroupCommit instead (group-commit.ts), which
 * shares a vault's transaction among concurrent writes; applyWriteBatch decides both.
 */
export async function applyWrite(
  db: DatabasePool,
  target: Target,
  rawInput: { path: string; content: string } & Preconditions,
  provenance: Provenance,
  idempotency: IdempotencyScope,
): Promise<ApplyResult<WriteApplied>> {
  const [outcome] = await applyWriteBatch(db, target.vaultId, [writeJob(target, rawInput, provenance, idempotency)]);
  if (!outcome!.ok) throw outcome!.error;
  return outcome!.result;
}

/** A write validated (path, size) before it waits for any transaction. */
export function writeJob(target: Target, rawInput: { path: string; content: string } & Preconditions, provenance: Provenance, idempotency: IdempotencyScope): WriteJob {
  return { target, input: validateWriteInput(rawInput), provenance, idempotency };
}

/** One single-note write of a group commit (group-commit.ts); its input is already validated. */
export type WriteJob = {
  target: Target;
  input: { path: string; content: string } & Preconditions;
  provenance: Provenance;
  idempotency: IdempotencyScope;
};
export type WriteJobOutcome = { ok: true; result: ApplyResult<WriteApplied> } | { ok: false; error: unknown };

/**
 * Applies single-note writes to one vault in one transaction (a group commit), each with the outcome
 * it would have had alone, run after the ones before it in the list: its own idempotency key (a
 * replay, a refusal, or claimed), its own preconditions judged against the vault as the earlier
 * writes left it, its own event (numbered in list order) and stored response. A write refused by its
 * preconditions fails alone, with nothing of it stored, as applyWrite's would. The statements are
 * the same whatever the number of writes: two for the keys, the vault lock, one read of the notes,
 * one upsert, one insert of the events, one of the responses.
 */
export async function applyWriteBatch(db: DatabasePool, vaultId: string, jobs: readonly WriteJob[]): Promise<WriteJobOutcome[]> {
  return db.transaction(async (tx) => {
    const outcomes: WriteJobOutcome[] = [];
    const claims = await claimIdempotencyKeys(tx, jobs.map((j) => j.idempotency));
    await lockVault(tx, vaultId);
    const live = await findNotesByKey(tx, vaultId, jobs.filter((_, i) => claims[i]!.kind === 'claimed').map((j) => j.input.path));
    // What each path key holds as the writes before this one left it.
    const state = new Map<string, { path: string; revision: string }>([...live].map(([key, row]) => [key, { path: row.path, revision: row.revision }]));
    const planned: Array<{ index: number; plan: PlannedWrite<{ revision: string }> }> = [];
    jobs.forEach((job, index) => {
      const claim = claims[index]!;
      if (claim.kind === 'refused') return void (outcomes[index] = { ok: false, error: claim.error });
      if (claim.kind === 'replay') {
        const { status, body, etag } = claim.stored;
        return void (outcomes[index] = { ok: true, result: { status, body: body as WriteApplied, etag, replayed: true } });
      }
      const { current, collision } = atPath(state, job.input.path);
      try {
        const plan = judgeWrite(job.input, current, collision, { requireRevision: true, pointer: '' });
        if (plan.operation !== 'noop') state.set(pathKey(plan.path), { path: plan.path, revision: plan.derived.revision });
        planned.push({ index, plan });
      } catch (error) {
        outcomes[index] = { ok: false, error };
      }
    });
    const changes = planned.filter(({ plan }) => plan.operation !== 'noop');
    // The notes as the last write of each path left them; every write keeps its own event.
    const finalOf = new Map(changes.map(({ plan }) => [plan.path, plan]));
    await upsertNotes(tx, vaultId, [...finalOf.values()]);
    const eventIds = await recordEventsOf(
      tx,
      vaultId,
      changes.map(({ index, plan }) => ({
        mappingId: jobs[index]!.target.mappingId,
        type: plan.operation === 'create' ? ('note.created' as const) : ('note.replaced' as const),
        path: plan.path,
        beforeRevision: plan.current?.revision ?? null,
        afterRevision: plan.derived.revision,
        transactionId: null,
        provenance: jobs[index]!.provenance,
      })),
    );
    const eventOf = new Map(changes.map(({ index }, i) => [index, eventIds[i]!]));
    const stored: Array<{ id: IdempotencyScope; response: StoredResponse }> = [];
    for (const { index, plan } of planned) {
      const result = {
        status: plan.operation === 'create' ? 201 : 200,
        body: { applied: true as const, dryRun: false as const, ...describeWrite(jobs[index]!.target, plan), eventId: eventOf.get(index) ?? null },
        etag: plan.derived.revision,
      };
      stored.push({ id: jobs[index]!.idempotency, response: result });
      outcomes[index] = { ok: true, result: { ...result, replayed: false } };
    }
    await storeIdempotentResponses(tx, stored);
    return outcomes;
  });
}

// ---- delete ----------------------------------------------------------------------------------

/** `ifMatch` is a revision, or `*` for whatever is current. A missing note is 404 either way (RFC 9110 §13.2.1). */
async function planDelete(db: Db, target: Target, path: string, ifMatch: string | undefined, requireRevision: boolean): Promise<NoteRow> {
  const current = await findNote(db, target.vaultId, path);
  if (!current) throw new AppError('note_not_found', `No live note at ${path}.`);
  if (ifMatch !== undefined && ifMatch !== '*' && ifMatch !== current.revision) {
    throw new AppError('precondition_failed', `If-Match ${ifMatch} does not match the current revision.`, { extensions: { currentRevision: current.revision } });
  }
  if (requireRevision && ifMatch === undefined) {
    throw new AppError('revision_required', 'Send If-Match with the current revision to delete.', { extensions: { currentRevision: current.revision } });
  }
  return current;
}

export async function previewDelete(db: Db, target: Target, rawPath: string, ifMatch?: string) {
  const path = validateNotePath(rawPath);
  const current = await planDelete(db, target, path, ifMatch, false);
  return {
    applied: false as const,
    dryRun: true as const,
    operation: 'delete' as const,
    mappingId: target.mappingId,
    path,
    beforeRevision: current.revision,
    afterRevision: null,
    revisionRequired: ifMatch === undefined,
    ...unifiedDiff(path, current.content, null),
  };
}

export type DeleteApplied = {
  applied: true;
  dryRun: false;
  operation: 'delete';
  mappingId: string;
  path: string;
  beforeRevision: string;
  afterRevision: null;
  trashId: string;
  eventId: string;
};

/** Moves the note to the trash, removes it from the live set and records the event, atomically. */
export async function applyDelete(db: DatabasePool, target: Target, rawPath: string, ifMatch: string | undefined, provenance: Provenance, idempotency: IdempotencyScope) {
  const path = validateNotePath(rawPath);
  return idempotentApply<DeleteApplied>(db, idempotency, async (tx) => {
    await lockVault(tx, target.vaultId);
    const current = await planDelete(tx, target, path, ifMatch, true);
    const trashId = await moveNoteToTrash(tx, target.vaultId, path, provenance.actor.type === 'account' ? provenance.actor.id : null);
    const eventId = await recordEvent(
      tx,
      { vaultId: target.vaultId, mappingId: target.mappingId, type: 'note.deleted', path, beforeRevision: current.revision, afterRevision: null, transactionId: null, trashId },
      provenance,
    );
    return {
      status: 200,
      body: { applied: true, dryRun: false, operation: 'delete', mappingId: target.mappingId, path, beforeRevision: current.revision, afterRevision: null, trashId, eventId },
      etag: null,
    };
  });
}

// ---- restore ---------------------------------------------------------------------------------

async function planRestore(db: Db, target: Target, trashId: string) {
  const item = await findTrashItem(db, target.vaultId, trashId);
  if (!item) throw new AppError('trash_item_not_found');
  if (item.restoredAt) throw new AppError('trash_item_restored', `Restored at ${item.restoredAt}.`);
  const { current, collision } = atPath(await findNotesByKey(db, target.vaultId, [item.path]), item.path);
  if (current) throw new AppError('note_exists', `A live note exists at ${item.path}; delete or rename it first.`);
  if (collision !== undefined) throw new AppError('path_case_conflict', `"${collision}" already exists.`, { extensions: { existingPath: collision } });
  return item;
}

export async function previewRestore(db: Db, target: Target, trashId: string) {
  const item = await planRestore(db, target, trashId);
  return {
    applied: false as const,
    dryRun: true as const,
    operation: 'restore' as const,
    mappingId: target.mappingId,
    trashId,
    path: item.path,
    beforeRevision: null,
    afterRevision: item.revision,
  };
}

export type RestoreApplied = {
  applied: true;
  dryRun: false;
  operation: 'restore';
  mappingId: string;
  trashId: string;
  path: string;
  beforeRevision: null;
  afterRevision: string;
  eventId: string;
};

/** Puts a trashed note back with its content, revision and creation time. */
export async function applyRestore(db: DatabasePool, target: Target, trashId: string, provenance: Provenance, idempotency: IdempotencyScope) {
  return idempotentApply<RestoreApplied>(db, idempotency, async (tx) => {
    await lockVault(tx, target.vaultId);
    const item = await planRestore(tx, target, trashId);
    const derived = deriveNote(item.path, item.content);
    await upsertNote(tx, target.vaultId, item.path, item.content, derived, item.noteCreatedAt);
    await markTrashRestored(tx, trashId);
    const eventId = await recordEvent(
      tx,
      { vaultId: target.vaultId, mappingId: target.mappingId, type: 'note.restored', path: item.path, beforeRevision: null, afterRevision: derived.revision, transactionId: null, trashId },
      provenance,
    );
    return {
      status: 200,
      body: { applied: true, dryRun: false, operation: 'restore', mappingId: target.mappingId, trashId, path: item.path, beforeRevision: null, afterRevision: derived.revision, eventId },
      etag: derived.revision,
    };
  });
}

// ---- transactions ----------------------------------------------------------------------------

export type TransactionAction = { type: 'write-note'; path: string; content: string; expectedHash?: string | undefined };

/** Static checks of every action before any database work: count, total size, paths, duplicates. */
function validateActions(actions: readonly TransactionAction[], allowEmpty = false): TransactionAction[] {
  if (actions.length === 0 && !allowEmpty) throw new AppError('invalid_request', 'A transaction needs at least one action.', { extensions: { errors: [{ pointer: '/actions', message: 'empty' }] } });
  if (actions.length > noteLimits.maxTransactionActions) {
    throw new AppError('transaction_too_large', `At most ${noteLimits.maxTransactionActions} actions; got ${actions.length}.`, {
      extensions: { limit: noteLimits.maxTransactionActions, errors: [{ pointer: '/actions', message: 'too many actions' }] },
    });
  }
  const errors: ErrorPointer[] = [];
  const seen = new Map<string, number>();
  let total = 0;
  const validated: TransactionAction[] = [];
  actions.forEach((action, index) => {
    try {
      const valid = validateWriteInput(action, `/actions/${index}`);
      const key = pathKey(valid.path);
      const first = seen.get(key);
      if (first !== undefined) errors.push({ pointer: `/actions/${index}/path`, message: `same note as /actions/${first}`, code: 'duplicate_path' });
      else seen.set(key, index);
      total += contentBytes(valid.content);
      validated.push(valid);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      errors.push(...((error.extensions['errors'] as ErrorPointer[] | undefined) ?? [{ pointer: `/actions/${index}`, message: error.message, code: error.code }]));
    }
  });
  if (errors.length > 0) {
    const first = errors[0]!;
    const code = first.code === 'note_too_large' ? 'note_too_large' : first.code === 'duplicate_path' ? 'duplicate_path' : 'invalid_path';
    throw new AppError(code, `${first.pointer}: ${first.message}`, { extensions: { errors } });
  }
  if (total > noteLimits.maxTransactionContentBytes) {
    throw new AppError('transaction_too_large', `The actions carry ${total} bytes; the limit is ${noteLimits.maxTransactionContentBytes}.`, {
      extensions: { limit: noteLimits.maxTransactionContentBytes, errors: [{ pointer: '/actions', message: 'too much content' }] },
    });
  }
  return validated;
}

/** Judges every action against the current notes; collects every failure before refusing. */
async function planTransaction(db: Db, target: Target, actions: TransactionAction[], requireRevision: boolean): Promise<PlannedWrite[]> {
  const live = await findNotesByKey(db, target.vaultId, actions.map((a) => a.path));
  const plans: PlannedWrite[] = [];
  const failures: AppError[] = [];
  actions.forEach((action, index) => {
    try {
      const { current, collision } = atPath(live, action.path);
      plans.push(judgeWrite(action, current, collision, { requireRevision, pointer: `/actions/${index}` }));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      failures.push(error);
    }
  });
  if (failures.length > 0) {
    const first = failures[0]!;
    const errors = failures.flatMap((f) =>
      ((f.extensions['errors'] as ErrorPointer[] | undefined) ?? []).map((e) => ({ ...e, currentRevision: f.extensions['currentRevision'] ?? null })),
    );
    throw new AppError(first.code, `${failures.length} of ${actions.length} actions cannot apply; nothing was written. First: ${errors[0]?.pointer ?? ''} ${first.message}`, {
      extensions: { errors },
    });
  }
  return plans;
}

const describeAction = (target: Target, plan: PlannedWrite, index: number) => ({ index, ...describeWrite(target, plan) });

export async function previewTransaction(db: Db, target: Target, rawActions: readonly TransactionAction[]) {
  const actions = validateActions(rawActions);
  const plans = await planTransaction(db, target, actions, false);
  return {
    applied: false as const,
    dryRun: true as const,
    mappingId: target.mappingId,
    transactionId: null,
    results: plans.map((plan, index) => ({
      ...describeAction(target, plan, index),
      revisionRequired: plan.current !== null && actions[index]!.expectedHash === undefined,
      ...unifiedDiff(plan.path, plan.current?.content ?? null, plan.content),
    })),
  };
}

export type TransactionApplied = {
  applied: true;
  dryRun: false;
  mappingId: string;
  transactionId: string;
  results: Array<ReturnType<typeof describeAction> & { eventId: string | null }>;
  /** Present only when the caller asked for deletions (Forge undo); the public APIs never do. */
  deletions?: Array<{ path: string; beforeRevision: string; trashId: string; eventId: string }>;
};

/**
 * All or nothing: every action is judged first; any failure writes nothing at all. `deletes`
 * (used by Forge undo, not offered by REST or MCP) move notes to the trash in the same
 * transaction, each only if it still has the expected revision.
 */
export async function applyTransaction(
  db: DatabasePool,
  target: Target,
  rawActions: readonly TransactionAction[],
  provenance: Provenance,
  idempotency: IdempotencyScope,
  deletes: ReadonlyArray<{ path: string; expectedHash: string }> = [],
) {
  const actions = validateActions(rawActions, deletes.length > 0);
  const deletePaths = deletes.map((d, i) => ({ path: validateNotePath(d.path, `/deletes/${i}/path`), expectedHash: d.expectedHash }));
  return idempotentApply<TransactionApplied>(db, idempotency, async (tx) => {
    await lockVault(tx, target.vaultId);
    const plans = actions.length > 0 ? await planTransaction(tx, target, actions, true) : [];
    const deletions: NonNullable<TransactionApplied['deletions']> = [];
    const current: NoteRow[] = [];
    for (const d of deletePaths) current.push(await planDelete(tx, target, d.path, d.expectedHash, true));
    const transactionId = randomUUID();
    const eventIds = await writeMany(tx, target, plans.map((plan) => ({ ...plan, beforeRevision: plan.current?.revision ?? null })), provenance, transactionId);
    const results: TransactionApplied['results'] = plans.map((plan, index) => ({ ...describeAction(target, plan, index), eventId: eventIds[index]! }));
    for (const [i, d] of deletePaths.entries()) {
      const trashId = await moveNoteToTrash(tx, target.vaultId, d.path, provenance.actor.type === 'account' ? provenance.actor.id : null);
      const eventId = await recordEvent(
        tx,
        { vaultId: target.vaultId, mappingId: target.mappingId, type: 'note.deleted', path: d.path, beforeRevision: current[i]!.revision, afterRevision: null, transactionId, trashId },
        provenance,
      );
      deletions.push({ path: d.path, beforeRevision: current[i]!.revision, trashId, eventId });
    }
    const body: TransactionApplied = { applied: true, dryRun: false, mappingId: target.mappingId, transactionId, results, ...(deletions.length ? { deletions } : {}) };
    return { status: 200, body, etag: null };
  });
}

/**
 * What a transaction applied under this key answered, or null when none was (and none is in flight:
 * that is `idempotency_in_flight`). For a caller that can no longer write, its mapping gone, but
 * may have written before: Forge's retried step.
 */
export async function replayTransaction(db: DatabasePool, idempotency: IdempotencyScope): Promise<TransactionApplied | null> {
  return db.transaction(async (tx) => {
    const stored = await claimIdempotencyKey(tx, idempotency);
    return stored ? (stored.body as TransactionApplied) : null;
  });
}

// ---- imports (System Operations: `vault import`) ----------------------------------------------

/** What an import does with a live note of the same path and other content. */
export type ExistingPolicy = 'refuse' | 'skip' | 'replace';

/**
 * `unchanged`: the vault already holds these exact bytes (nothing written, no event), which makes
 * re-running an import a no-op; `kept`: other content is stored and the policy is `skip`.
 */
export type ImportOperation = 'create' | 'replace' | 'unchanged' | 'kept';

export type ImportJudgement = { path: string; operation: ImportOperation; beforeRevision: string | null; afterRevision: string };

/** One note an import refuses: its index in the input, the stable code, and why. */
export type ImportProblem = { index: number; path: string; code: string; message: string };

/** A batch is one database transaction: these bounds keep its statements and its lock short. */
export const importLimits = {
  maxBatchNotes: 1000,
  /** Content bytes of one batch (the bound of an API transaction). */
  maxBatchContentBytes: noteLimits.maxTransactionContentBytes,
} as const;

const problemOf = (index: number, path: string, error: AppError): ImportProblem => ({ index, path, code: error.code, message: error.message });

/**
 * The checks every imported note passes before any database work, the same as an API write's
 * (path rules with NFC, content size) plus U+0000, which the HTTP edge refuses for API writes and
 * Postgres text cannot hold. Returns the normalised path.
 */
export function checkImportNote(path: string, content: string): string {
  const valid = validateWriteInput({ path, content });
  if (content.includes('\u0000')) {
    throw new AppError('invalid_character', 'The content contains U+0000 (NUL), which no note may hold.', {
      extensions: { errors: [{ pointer: '/content', message: 'contains U+0000 (NUL)', code: 'nul_character' }] },
    });
  }
  return valid.path;
}

/** Paths that name the same note (same path key) as an earlier entry: `duplicate_path`. */
export function findDuplicatePaths(paths: readonly string[]): ImportProblem[] {
  const seen = new Map<string, string>();
  const problems: ImportProblem[] = [];
  paths.forEach((path, index) => {
    const first = seen.get(pathKey(path));
    if (first === undefined) seen.set(pathKey(path), path);
    else problems.push({ index, path, code: 'duplicate_path', message: `Same note as "${first}" (paths may not differ only by case or Unicode form).` });
  });
  return problems;
}

/** Judges one imported note against the live note with the same path key, if any. */
function judgeImport(path: string, revision: string, state: PathState | undefined, existing: ExistingPolicy): ImportJudgement {
  if (state && state.path !== path) throw new AppError('path_case_conflict', `"${state.path}" already exists; paths may not differ only by case.`, { extensions: { existingPath: state.path } });
  if (!state) return { path, operation: 'create', beforeRevision: null, afterRevision: revision };
  if (state.revision === revision) return { path, operation: 'unchanged', beforeRevision: state.revision, afterRevision: revision };
  if (existing === 'replace') return { path, operation: 'replace', beforeRevision: state.revision, afterRevision: revision };
  if (existing === 'skip') return { path, operation: 'kept', beforeRevision: state.revision, afterRevision: state.revision };
  throw new AppError('note_exists', `A note with other content (${state.revision}) exists at ${path}; choose to skip or replace existing notes.`, {
    extensions: { currentRevision: state.revision },
  });
}

/**
 * Judges notes (already checked, no duplicates) against the vault without writing: what each would
 * do, and every one that would be refused. Reads in chunks, so it scales with the input.
 */
export async function planImport(
  db: Db,
  target: Target,
  notes: ReadonlyArray<{ path: string; revision: string }>,
  existing: ExistingPolicy,
): Promise<{ judgements: Array<ImportJudgement | null>; problems: ImportProblem[] }> {
  const judgements: Array<ImportJudgement | null> = [];
  const problems: ImportProblem[] = [];
  for (let start = 0; start < notes.length; start += importLimits.maxBatchNotes) {
    const chunk = notes.slice(start, start + importLimits.maxBatchNotes);
    const states = await findPathStates(db, target.vaultId, chunk.map((n) => n.path));
    chunk.forEach((note, offset) => {
      try {
        judgements.push(judgeImport(note.path, note.revision, states.get(pathKey(note.path)), existing));
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        judgements.push(null);
        problems.push(problemOf(start + offset, note.path, error));
      }
    });
  }
  return { judgements, problems };
}

export type ImportBatchApplied = {
  /** Shared by the batch's events, like an API transaction's; null when the batch changed nothing. */
  transactionId: string | null;
  /** The batch's GIN entries are left for the caller to merge (indexMerge 'by-caller', and the role may merge). */
  mergePending: boolean;
  results: Array<ImportJudgement & { eventId: string | null }>;
};

/** A batch of imported notes checked and derived, before any database work (prepareImportBatch). */
export type PreparedImportBatch = { readonly notes: ReadonlyArray<{ path: string; content: string }>; readonly derived: readonly DerivedNote[] };

function refuseBatch(found: ImportProblem[], notes: number): AppError {
  const sorted = [...found].sort((a, b) => a.index - b.index);
  const first = sorted[0]!;
  return new AppError(first.code as ErrorCode, `${sorted.length} of ${notes} notes cannot be imported; nothing in this batch was written. First: ${first.path}: ${first.message}`, {
    extensions: { errors: sorted.map((p) => ({ pointer: `/notes/${p.index}`, path: p.path, message: p.message, code: p.code })) },
  });
}

/**
 * Checks a batch of imported notes (bounds, paths, duplicates) and derives what is stored with each
 * (title, links, revision): Node's share of a batch, with no database work, so a vault import
 * prepares its next batch while Postgres writes the current one. Throws the batch's refusal, naming
 * every refused note.
 */
export function prepareImportBatch(rawNotes: ReadonlyArray<{ path: string; content: string }>): PreparedImportBatch {
  if (rawNotes.length > importLimits.maxBatchNotes) throw new AppError('transaction_too_large', `At most ${importLimits.maxBatchNotes} notes per batch; got ${rawNotes.length}.`);
  const problems: ImportProblem[] = [];
  const notes: Array<{ path: string; content: string }> = [];
  let total = 0;
  rawNotes.forEach((note, index) => {
    try {
      notes.push({ path: checkImportNote(note.path, note.content), content: note.content });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      notes.push(note);
      problems.push(problemOf(index, note.path, error));
    }
    total += contentBytes(note.content);
  });
  problems.push(...findDuplicatePaths(notes.map((n) => n.path)));
  if (problems.length === 0 && total > importLimits.maxBatchContentBytes) {
    throw new AppError('transaction_too_large', `The batch carries ${total} bytes; the limit is ${importLimits.maxBatchContentBytes}.`);
  }
  if (problems.length > 0) throw refuseBatch(problems, notes.length);
  return { notes, derived: notes.map((n) => deriveNote(n.path, n.content)) };
}

/**
 * Writes one batch of imported notes: all or nothing, in one transaction holding the vault lock,
 * with one provenance event per created or replaced note. Every note is checked and judged first
 * (judged under the lock, so a change since planImport is seen); any refusal writes nothing and
 * names every refused note. Identical notes are `unchanged` and record no event. The GIN entries of
 * the batch are merged once, at its end: inside the transaction, or (`by-caller`, `mergePending`)
 * by the caller after the commit, outside the vault lock, while its next batch is written.
 */
export async function applyImportBatch(
  db: DatabasePool,
  target: Target,
  batch: ReadonlyArray<{ path: string; content: string }> | PreparedImportBatch,
  provenance: Provenance,
  existing: ExistingPolicy,
  indexMerge: 'in-transaction' | 'by-caller' = 'in-transaction',
): Promise<ImportBatchApplied> {
  const { notes, derived } = 'derived' in batch ? batch : prepareImportBatch(batch);
  return db.transaction(async (tx) => {
    await lockVault(tx, target.vaultId);
    const plan = await planImport(tx, target, notes.map((n, i) => ({ path: n.path, revision: derived[i]!.revision })), existing);
    if (plan.problems.length > 0) throw refuseBatch(plan.problems, notes.length);
    const judged = plan.judgements as ImportJudgement[];
    const writes: NoteWrite[] = judged.map((j, i) => ({
      path: j.path,
      content: notes[i]!.content,
      derived: derived[i]!,
      operation: j.operation === 'kept' ? 'unchanged' : j.operation,
      beforeRevision: j.beforeRevision,
    }));
    if (writes.every((w) => w.operation === 'unchanged')) return { transactionId: null, mergePending: false, results: judged.map((j) => ({ ...j, eventId: null })) };
    const transactionId = randomUUID();
    const deferred = await deferIndexMerges(tx);
    const eventIds = await writeMany(tx, target, writes, provenance, transactionId);
    if (deferred && indexMerge === 'in-transaction') await mergeDeferredIndexEntries(tx);
    return { transactionId, mergePending: deferred && indexMerge === 'by-caller', results: judged.map((j, i) => ({ ...j, eventId: eventIds[i]! })) };
  });
}
