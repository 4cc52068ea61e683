// The knowledge-transaction core: previews and applies of note writes, deletes, restores and
// batches. REST routes, MCP tools and the Forge executor all call these functions; they differ
// only in the Provenance they pass. Rules that hold for every caller:
// - a preview writes nothing and needs no idempotency key;
// - an apply is one Postgres transaction holding the vault lock, claims its idempotency key in that
//   transaction, writes the notes, records one event per change, and stores the response;
// - replacing or deleting an existing note needs its current revision; a stale one is refused,
//   never silently overwritten.
import { randomUUID } from 'node:crypto';
import type { CommonQueryMethods, DatabasePool, DatabaseTransactionConnection } from 'slonik';
import { AppError } from '../errors.ts';
import type { ErrorPointer } from '../errors.ts';
import { claimIdempotencyKey, storeIdempotentResponse } from '../idempotency.ts';
import type { IdempotencyScope } from '../idempotency.ts';
import { deriveNote, unifiedDiff } from './markdown.ts';
import type { DerivedNote } from './markdown.ts';
import { assertContentSize, contentBytes, noteLimits, pathKey, validateNotePath } from './paths.ts';
import {
  findCaseCollisions,
  findNote,
  findNotes,
  findTrashItem,
  lockVault,
  markTrashRestored,
  moveNoteToTrash,
  recordEvent,
  upsertNote,
} from './store.ts';
import type { NoteRow, Provenance } from './store.ts';

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

type PlannedWrite = {
  path: string;
  content: string;
  derived: DerivedNote;
  current: NoteRow | null;
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
function judgeWrite(
  input: { path: string; content: string } & Preconditions,
  current: NoteRow | null,
  caseCollision: string | undefined,
  options: { requireRevision: boolean; pointer: string },
): PlannedWrite {
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

async function planWrite(db: Db, target: Target, input: { path: string; content: string } & Preconditions, requireRevision: boolean): Promise<PlannedWrite> {
  const current = await findNote(db, target.vaultId, input.path);
  const collision = current ? undefined : (await findCaseCollisions(db, target.vaultId, [input.path])).get(input.path);
  return judgeWrite(input, current, collision, { requireRevision, pointer: '' });
}

function describeWrite(target: Target, plan: PlannedWrite) {
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

async function writePlanned(tx: Db, target: Target, plan: PlannedWrite, provenance: Provenance, transactionId: string | null): Promise<string | null> {
  if (plan.operation === 'noop') return null;
  await upsertNote(tx, target.vaultId, plan.path, plan.content, plan.derived);
  return recordEvent(
    tx,
    {
      vaultId: target.vaultId,
      mappingId: target.mappingId,
      type: plan.operation === 'create' ? 'note.created' : 'note.replaced',
      path: plan.path,
      beforeRevision: plan.current?.revision ?? null,
      afterRevision: plan.derived.revision,
      transactionId,
    },
    provenance,
  );
}

/** Applies one note write. A no-op (identical content) writes nothing and records no event. */
export async function applyWrite(
  db: DatabasePool,
  target: Target,
  rawInput: { path: string; content: string } & Preconditions,
  provenance: Provenance,
  idempotency: IdempotencyScope,
): Promise<ApplyResult<WriteApplied>> {
  const input = validateWriteInput(rawInput);
  return idempotentApply<WriteApplied>(db, idempotency, async (tx) => {
    await lockVault(tx, target.vaultId);
    const plan = await planWrite(tx, target, input, true);
    const eventId = await writePlanned(tx, target, plan, provenance, null);
    return {
      status: plan.operation === 'create' ? 201 : 200,
      body: { applied: true, dryRun: false, ...describeWrite(target, plan), eventId },
      etag: plan.derived.revision,
    };
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
  if (await findNote(db, target.vaultId, item.path)) throw new AppError('note_exists', `A live note exists at ${item.path}; delete or rename it first.`);
  const collision = (await findCaseCollisions(db, target.vaultId, [item.path])).get(item.path);
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
  const paths = actions.map((a) => a.path);
  const current = new Map((await findNotes(db, target.vaultId, paths)).map((n) => [n.path, n]));
  const collisions = await findCaseCollisions(db, target.vaultId, paths.filter((p) => !current.has(p)));
  const plans: PlannedWrite[] = [];
  const failures: AppError[] = [];
  actions.forEach((action, index) => {
    try {
      plans.push(judgeWrite(action, current.get(action.path) ?? null, collisions.get(action.path), { requireRevision, pointer: `/actions/${index}` }));
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
    const results: TransactionApplied['results'] = [];
    for (const [index, plan] of plans.entries()) {
      const eventId = await writePlanned(tx, target, plan, provenance, transactionId);
      results.push({ ...describeAction(target, plan, index), eventId });
    }
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
