// The event log of a generation (issue 48, docs/intelligence.md "Long generations"): the ready,
// delta… and done events of a generate, in Postgres, one row per event, so any number of readers on
// any API read them from an offset while they are written and after.
//
// - One writer per generation (the pump that reads the provider) assigns seq 1, 2, … in memory and
//   appends: while one INSERT is in flight the next events queue and go in one multi-row INSERT
//   (batching by what the database takes, no timer), so an event reaches a reader about one commit
//   and one notification after the provider sent it.
// - Each append announces `<generationId>:<lastSeq>` on the channel `intelligence_generation` in its
//   own statement's transaction (delivered at commit; small: NOTIFY payloads stop at 8000 bytes).
//   Each API process holds one LISTEN connection (db/notification-listener.ts, the pattern of the
//   proposal waits) and wakes the readers of the generation named; a reader also reads once a second,
//   so a notification lost with the connection never stalls it.
// - A cancel is announced on the same channel as `cancel:<generationId>`: the process whose pump
//   reads that generation aborts it.
// - The events expire a retention window after the generation finished; a read of them then is 410
//   generation_expired. The generation's row (status, receipt through its reservation) stays.
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import type { NotificationListener, NotificationSubscriber } from '../../db/notification-listener.ts';
import { isoTimestamp } from '../../db/row-schemas.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { unreachableReason } from '../../db/availability.ts';
import { AppError } from '../errors.ts';

type Db = CommonQueryMethods;

export const GENERATION_CHANNEL = 'intelligence_generation';
/** How long a finished generation's events are kept (INTELLIGENCE_GENERATION_RETENTION_HOURS). */
export const DEFAULT_GENERATION_RETENTION_HOURS = 24;
/** A reader reads this often even when nothing was announced (a notification can be lost with its connection). */
export const GENERATION_POLL_MS = 1_000;
/** Event streams one process serves at once by default (as many as the console's live streams). */
export const DEFAULT_MAX_GENERATION_READERS = 1_000;
/** Events one read answers at most; a reader behind by more reads again at once. */
const READ_LIMIT = 500;

export const generationStatuses = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export type GenerationStatus = (typeof generationStatuses)[number];
export type FinishedStatus = Exclude<GenerationStatus, 'queued' | 'running'>;

export type LogEventType = 'ready' | 'delta' | 'done';
/** An event as the log holds it: its type and the rest of the event as the stream carries it. */
export type LogEvent = { type: LogEventType } & Record<string, unknown>;
/** An event read back, with its place in the log. */
export type LoggedEvent = LogEvent & { seq: number };

export type GenerationOwner = { generationId: string; organizationId: string; installationId: string };

// ---- the writer ------------------------------------------------------------------------------

const appendedSchema = z.object({ lastSeq: z.number() });
/** How long a write of the log is retried while Postgres is unreachable (as a completed result's store is, metering.ts). */
const WRITE_RETRY_MS = 20_000;

/**
 * The one writer of a generation's log. `append` assigns the next seq at once and queues the event;
 * `finish` writes what is queued and closes the log with its status. Writes fail quietly into the
 * process log: a reader of the plain stream is answered by the pump directly, and a log that cannot
 * be written is a log that readers cannot follow (they see its last status), never a wrong charge.
 */
export class GenerationLogWriter {
  readonly generationId: string;
  readonly #db: DatabasePool;
  readonly #log: { warn(details: object, message: string): void };
  readonly #retentionHours: number;
  #seq = 0;
  #queued: LoggedEvent[] = [];
  #status: GenerationStatus | null = null;
  #flushing: Promise<void> | null = null;
  #broken = false;

  private constructor(db: DatabasePool, generationId: string, log: { warn(details: object, message: string): void }, retentionHours: number) {
    this.#db = db;
    this.generationId = generationId;
    this.#log = log;
    this.#retentionHours = retentionHours;
  }

  /**
   * Opens the log of a generation (status queued). A generation id seen before is a released
   * request run again under its key: its log starts over as the next attempt.
   */
  static async open(
    db: DatabasePool,
    owner: GenerationOwner & { background: boolean },
    log: { warn(details: object, message: string): void },
    retentionHours = DEFAULT_GENERATION_RETENTION_HOURS,
  ): Promise<GenerationLogWriter> {
    // One statement (one round trip before the first byte): the earlier attempt's events go, the row starts over.
    await db.query(sql.type(z.object({}))`
      WITH dropped AS (DELETE FROM intelligence_generation_events WHERE generation_id = ${owner.generationId})
      INSERT INTO intelligence_generations AS g (generation_id, organization_id, installation_id, background)
      VALUES (${owner.generationId}, ${owner.organizationId}, ${owner.installationId}, ${owner.background})
      ON CONFLICT (generation_id) DO UPDATE
        SET attempt = g.attempt + 1, status = 'queued', background = EXCLUDED.background, last_seq = 0, cancel_requested_at = NULL,
            created_at = now(), finished_at = NULL, events_expire_at = NULL`);
    return new GenerationLogWriter(db, owner.generationId, log, retentionHours);
  }

  /** The seq of the last event appended (written or queued). */
  get lastSeq(): number {
    return this.#seq;
  }

  /** Queues the event under the next seq and answers it with its seq (what the plain stream sends). */
  append(event: LogEvent): LoggedEvent {
    this.#seq += 1;
    const logged: LoggedEvent = { ...event, seq: this.#seq };
    this.#queued.push(logged);
    this.#kick();
    return logged;
  }

  /** The provider accepted: the generation is running (written with the next events). */
  running(): void {
    this.#status = 'running';
    this.#kick();
  }

  /**
   * Closes the log with `status` and its last event (the done, if there is one), written with it in
   * one statement so no reader sees the one without the other; answers once everything is written
   * (or given up).
   */
  async finish(status: FinishedStatus, last?: LogEvent): Promise<LoggedEvent | null> {
    // The status first: append starts a write at once when none is in flight, and it must carry both.
    this.#status = status;
    const logged = last ? this.append(last) : null;
    this.#kick();
    while (this.#flushing) await this.#flushing;
    return logged;
  }

  /** Waits until everything appended so far is written (or given up). */
  async flushed(): Promise<void> {
    this.#kick();
    while (this.#flushing) await this.#flushing;
  }

  #kick(): void {
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = null;
      if (this.#queued.length > 0 || this.#status !== null) this.#kick();
    });
  }

  async #flush(): Promise<void> {
    const events = this.#queued;
    const status = this.#status;
    this.#queued = [];
    this.#status = null;
    if (events.length === 0 && status === null) return;
    const finished = status !== null && status !== 'running' && status !== 'queued';
    if (this.#broken) {
      // Events after a lost write would leave a gap no reader could see: only the end is recorded, so
      // readers stop at the last written event and the generation reads as it ended.
      if (finished) await this.#write([], status).catch(() => undefined);
      return;
    }
    // Retried through a short outage as the settlement is (its events are what readers resume from).
    const deadline = Date.now() + WRITE_RETRY_MS;
    for (let wait = 200; ; wait = Math.min(wait * 2, 2_000)) {
      try {
        await this.#write(events, status);
        return;
      } catch (error) {
        if (unreachableReason(error) !== null && Date.now() + wait <= deadline) {
          await sleep(wait);
          continue;
        }
        this.#broken = true;
        this.#log.warn({ err: error, generationId: this.generationId }, 'writing the generation log failed; its readers stop at the last written event');
        if (finished) await this.#write([], status).catch(() => undefined);
        return;
      }
    }
  }

  /**
   * One statement, so one round trip and its own transaction: the events, the row's last seq and
   * status, and the announcement, which Postgres delivers when the statement commits.
   */
  async #write(events: LoggedEvent[], status: GenerationStatus | null): Promise<void> {
    const finished = status !== null && status !== 'running' && status !== 'queued';
    const lastSeq = events.at(-1)?.seq ?? null;
    const rows = events.map(({ seq, type, ...payload }) => ({ seq, type, payload: { type, ...payload } }));
    await this.#db.query(sql.type(appendedSchema)`
      WITH inserted AS (
        INSERT INTO intelligence_generation_events (generation_id, seq, type, payload)
        SELECT ${this.generationId}, e.seq, e.type, e.payload FROM jsonb_to_recordset(${sql.jsonb(rows)}) AS e(seq integer, type text, payload jsonb)
        ON CONFLICT (generation_id, seq) DO NOTHING
      ), updated AS (
        UPDATE intelligence_generations g
           SET last_seq = greatest(g.last_seq, coalesce(${lastSeq}::integer, g.last_seq)),
               status = coalesce(${status}::text, g.status),
               finished_at = CASE WHEN ${finished} THEN now() ELSE g.finished_at END,
               events_expire_at = CASE WHEN ${finished} THEN now() + ${this.#retentionHours} * interval '1 hour' ELSE g.events_expire_at END
         WHERE g.generation_id = ${this.generationId}
        RETURNING g.last_seq
      )
      SELECT last_seq AS "lastSeq", pg_notify(${GENERATION_CHANNEL}, ${this.generationId} || ':' || last_seq) IS NULL AS notified FROM updated`);
  }
}

// ---- readers ---------------------------------------------------------------------------------

/**
 * The generation's status: the log's, except when its writer is gone for good: until the pump runs
 * in a worker (issue 48, step 3) an API process that dies mid-generation leaves its log open, and the
 * metering workflow then records the request as completion_lost (or an undispatched one expired).
 * Nothing more will be written; the generation failed.
 */
const statusOf = sql.fragment`CASE WHEN g.status IN ('queued', 'running') AND (r.state = 'expired' OR r.outcome_code = 'completion_lost') THEN 'failed' ELSE g.status END`;

const generationRowSchema = z.object({
  generationId: z.uuid(),
  organizationId: z.uuid(),
  installationId: z.uuid(),
  operation: z.string(),
  status: z.enum(generationStatuses),
  background: z.boolean(),
  lastSeq: z.number(),
  createdAt: isoTimestamp,
  finishedAt: isoTimestamp.nullable(),
  eventsExpireAt: isoTimestamp.nullable(),
  cancelRequestedAt: isoTimestamp.nullable(),
  eventsExpired: z.boolean(),
  /** The ledger's state of the request and why it ended (a release's or failure's code). */
  reservationState: z.string(),
  outcomeCode: z.string().nullable(),
});
export type GenerationRow = z.infer<typeof generationRowSchema>;

const generationColumns = sql.fragment`
  g.generation_id AS "generationId", g.organization_id AS "organizationId", g.installation_id AS "installationId", r.operation,
  ${statusOf} AS status, g.background, r.state AS "reservationState", r.outcome_code AS "outcomeCode", g.last_seq AS "lastSeq",
  g.created_at AS "createdAt", g.finished_at AS "finishedAt", g.events_expire_at AS "eventsExpireAt", g.cancel_requested_at AS "cancelRequestedAt",
  coalesce(g.events_expire_at <= now(), false) AS "eventsExpired"`;

/**
 * The generation `generationId` of the caller's installation, or generation_not_found: another
 * installation's or organization's generation answers exactly like one that does not exist.
 */
export async function generationOf(db: Db, caller: { organizationId: string; installationId: string }, generationId: string): Promise<GenerationRow> {
  if (!z.uuid().safeParse(generationId).success) throw new AppError('generation_not_found');
  const row = await db.maybeOne(sql.type(generationRowSchema)`
    SELECT ${generationColumns}
      FROM intelligence_generations g JOIN intelligence_reservations r ON r.id = g.generation_id
     WHERE g.generation_id = ${generationId} AND g.organization_id = ${caller.organizationId} AND g.installation_id = ${caller.installationId}`);
  if (!row) throw new AppError('generation_not_found');
  return row;
}

/** The logged generation the caller's installation started under this Idempotency-Key (its sha256), if any. */
export async function generationOfKey(db: Db, caller: { organizationId: string; installationId: string }, keyHash: string): Promise<GenerationRow | null> {
  return db.maybeOne(sql.type(generationRowSchema)`
    SELECT ${generationColumns}
      FROM intelligence_reservations r JOIN intelligence_generations g ON g.generation_id = r.id
     WHERE r.installation_id = ${caller.installationId} AND r.idempotency_key_hash = ${keyHash} AND g.organization_id = ${caller.organizationId}`);
}

const eventRowSchema = z.object({ seq: z.number(), payload: z.record(z.string(), z.unknown()) });
const readSchema = z.object({ status: z.enum(generationStatuses), lastSeq: z.number(), expired: z.boolean(), events: z.array(eventRowSchema) });

/**
 * Events after `after` (at most READ_LIMIT, in order) and the log's state, in one statement: one
 * snapshot, so a finished log is read with its last events, never a status ahead of them.
 */
async function readAfter(db: Db, generationId: string, after: number) {
  const read = await db.one(sql.type(readSchema)`
    SELECT ${statusOf} AS status, g.last_seq AS "lastSeq", coalesce(g.events_expire_at <= now(), false) AS expired,
           coalesce((SELECT jsonb_agg(jsonb_build_object('seq', e.seq, 'payload', e.payload) ORDER BY e.seq)
                       FROM (SELECT seq, payload FROM intelligence_generation_events
                              WHERE generation_id = g.generation_id AND seq > ${after} ORDER BY seq LIMIT ${READ_LIMIT}) e), '[]'::jsonb) AS events
      FROM intelligence_generations g JOIN intelligence_reservations r ON r.id = g.generation_id
     WHERE g.generation_id = ${generationId}`);
  const state = { status: read.status, lastSeq: read.lastSeq, expired: read.expired };
  if (read.expired) return { state, events: [] };
  return { state, events: read.events.map(({ seq, payload }) => ({ ...(payload as LogEvent), seq })) };
}

/** Whether the log has nothing more to give after `seq`: it is finished and `seq` is its end. */
const endedAt = (state: { status: GenerationStatus; lastSeq: number }, seq: number) => state.status !== 'queued' && state.status !== 'running' && seq >= state.lastSeq;

/**
 * The events of an authorized generation after `after`, then live until the log ends (its `done`,
 * or its last event when the writer stopped short) or `signal` aborts. Past retention it throws
 * generation_expired before answering anything.
 */
export async function* followGeneration(db: Db, wakes: GenerationWakes, generation: GenerationRow, after: number, signal: AbortSignal): AsyncGenerator<LoggedEvent, void, undefined> {
  if (generation.eventsExpired) throw new AppError('generation_expired');
  let seen = after;
  let first = true;
  while (!signal.aborted) {
    // Armed before reading: an event committed during the read wakes the wait that follows it.
    const wake = wakes.arm(generation.generationId, signal);
    let read: Awaited<ReturnType<typeof readAfter>>;
    try {
      read = await readAfter(db, generation.generationId, seen);
    } catch (error) {
      wake.disarm();
      throw error;
    }
    if (read.state.expired) {
      wake.disarm();
      // Expired while read: before anything was answered it is a 410; mid-stream the stream just ends.
      if (first) throw new AppError('generation_expired');
      return;
    }
    first = false;
    for (const event of read.events) {
      seen = event.seq;
      yield event;
      if (event.type === 'done') {
        wake.disarm();
        return;
      }
    }
    if (endedAt(read.state, seen)) {
      wake.disarm();
      return;
    }
    if (read.events.length === READ_LIMIT) {
      wake.disarm();
      continue;
    }
    await wake.fired;
  }
}

// ---- wakes and cancels ------------------------------------------------------------------------

type Waiter = () => void;
export type Wake = { fired: Promise<void>; disarm(): void };

/**
 * The process's readers of generation logs and pumps of generations, woken through its one LISTEN
 * connection on `intelligence_generation` (null: no connection; readers read once a second, and a
 * cancel reaches only pumps of this process).
 */
export class GenerationWakes {
  readonly #listener: NotificationListener | null;
  readonly #waiters = new Map<string, Set<Waiter>>();
  readonly #pumps = new Map<string, (reason: 'cancelled') => void>();
  readonly #idle: (() => void)[] = [];
  readonly #maxReaders: number;
  #readers = 0;
  #subscribed = false;

  /** `maxReaders`: the most event streams this process serves at once (each reads at least once a second). */
  constructor(listener: NotificationListener | null, maxReaders = DEFAULT_MAX_GENERATION_READERS) {
    this.#listener = listener;
    this.#maxReaders = maxReaders;
  }

  /** Event streams served now. */
  get readers(): number {
    return this.#readers;
  }

  /** A place for one more event stream, released when it ends; generation_readers_exhausted (503) when the process holds its most. */
  admitReader(): () => void {
    if (this.#readers >= this.#maxReaders) throw new AppError('generation_readers_exhausted', undefined, { headers: { 'retry-after': '5' } });
    this.#readers += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#readers -= 1;
    };
  }

  /** Readers waiting now (for a gauge and tests). */
  get waiting(): number {
    let n = 0;
    for (const set of this.#waiters.values()) n += set.size;
    return n;
  }

  #subscribe(): void {
    if (this.#subscribed || !this.#listener) return;
    this.#subscribed = true;
    const subscriber: NotificationSubscriber = {
      notify: (payload) => this.#heard(payload),
      // Listening (again): anything announced meanwhile may be missed, so every reader reads.
      listening: () => {
        for (const set of [...this.#waiters.values()]) for (const waiter of [...set]) waiter();
      },
      lost: () => undefined, // readers poll anyway
    };
    try {
      this.#listener.subscribe(subscriber);
    } catch {
      // A stopped listener (the app is closing): readers poll until they end.
    }
  }

  #heard(payload: string): void {
    if (payload.startsWith('cancel:')) {
      this.#pumps.get(payload.slice('cancel:'.length))?.('cancelled');
      return;
    }
    const id = payload.split(':', 1)[0]!;
    const set = this.#waiters.get(id);
    if (set) for (const waiter of [...set]) waiter();
  }

  /**
   * A wake for the next event of `generationId`: fired by its announcement, by the connection
   * listening again, by the poll interval or by `signal`; armed now, so an announcement that comes
   * before it is awaited still fires it.
   */
  arm(generationId: string, signal: AbortSignal): Wake {
    this.#subscribe();
    let resolve!: () => void;
    const fired = new Promise<void>((r) => (resolve = r));
    let set = this.#waiters.get(generationId);
    if (!set) this.#waiters.set(generationId, (set = new Set()));
    const waiters = set;
    const disarm = () => {
      clearTimeout(poll);
      signal.removeEventListener('abort', fire);
      waiters.delete(fire);
      if (waiters.size === 0 && this.#waiters.get(generationId) === waiters) this.#waiters.delete(generationId);
    };
    const fire = () => {
      disarm();
      resolve();
    };
    const poll = setTimeout(fire, GENERATION_POLL_MS);
    signal.addEventListener('abort', fire, { once: true });
    waiters.add(fire);
    return { fired, disarm };
  }

  /** The pump of `generationId` runs in this process: `abort` is called when a cancel is announced. Answers the unregistration. */
  pump(generationId: string, abort: (reason: 'cancelled') => void): () => void {
    this.#subscribe();
    this.#pumps.set(generationId, abort);
    return () => {
      if (this.#pumps.get(generationId) === abort) this.#pumps.delete(generationId);
      if (this.#pumps.size === 0) for (const idle of this.#idle.splice(0)) idle();
    };
  }

  /** Pumps running in this process (plain streams and background generations). */
  get pumping(): number {
    return this.#pumps.size;
  }

  /**
   * Resolves once no pump runs in this process: the app's close waits for its background
   * generations as it waits for the plain streams in flight, so a graceful stop (a deploy) finishes
   * them rather than leaving them to completion_lost. Bounded by the provider's deadline.
   */
  drained(): Promise<void> {
    if (this.#pumps.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Aborts the pump of `generationId` if it runs in this process (the announcement reaches the others). */
  cancelHere(generationId: string): void {
    this.#pumps.get(generationId)?.('cancelled');
  }
}

// ---- cancel ------------------------------------------------------------------------------------

const cancelSchema = z.object({ status: z.enum(generationStatuses) });

/**
 * Asks for the generation to stop: recorded once (the first request's time stands) and announced to
 * every process, whose pump of it aborts the upstream request. A finished generation is left as it
 * is. Idempotent: answers the status as it stands after the ask.
 */
export async function requestCancel(db: Db, generationId: string): Promise<GenerationStatus> {
  const row = await db.one(sql.type(cancelSchema)`
    WITH asked AS (
      UPDATE intelligence_generations g SET cancel_requested_at = coalesce(g.cancel_requested_at, now())
       -- A cancelled one too: this process's pump may have recorded its end before this ask was.
       WHERE g.generation_id = ${generationId} AND (g.status IN ('queued', 'running') OR (g.status = 'cancelled' AND g.cancel_requested_at IS NULL))
      RETURNING g.status, pg_notify(${GENERATION_CHANNEL}, 'cancel:' || g.generation_id::text) IS NULL AS notified
    )
    SELECT coalesce((SELECT status FROM asked), (SELECT status FROM intelligence_generations WHERE generation_id = ${generationId})) AS status`);
  return row.status;
}

// ---- retention ---------------------------------------------------------------------------------

const sweptSchema = z.object({ deleted: z.number() });

/**
 * Deletes up to `limit` events of generations past their retention (the reads answer 410 from
 * events_expire_at alone; this only gives the space back). Answers how many were deleted.
 */
export async function sweepExpiredEvents(db: Db, limit = 5_000): Promise<number> {
  const row = await db.one(sql.type(sweptSchema)`
    WITH doomed AS (
      SELECT e.generation_id, e.seq FROM intelligence_generations g
        JOIN intelligence_generation_events e ON e.generation_id = g.generation_id
       WHERE g.events_expire_at <= now()
       LIMIT ${limit}
       FOR UPDATE OF e SKIP LOCKED
    ), deleted AS (
      DELETE FROM intelligence_generation_events e USING doomed d WHERE e.generation_id = d.generation_id AND e.seq = d.seq RETURNING 1
    )
    SELECT count(*)::integer AS deleted FROM deleted`);
  return row.deleted;
}
