// Whether Postgres can be reached, as one pool sees it. The pool (db/pool.ts) passes every failure
// of its methods through `DatabaseAvailability.failed`: an error that means "the database cannot be
// reached" (recognized by class, SQLSTATE or socket code, see `unreachableReason`) becomes a
// `DatabaseUnavailableError`, which every interface answers 503 `database_unavailable` with
// Retry-After (api/problems.ts); any other failure stays what it is (a bug is still a 500).
//
// The failures of one outage share one `DatabaseOutage`, from the first failure to the next query
// that succeeds. It is logged once: a warn line ("database unreachable", the error's class and code,
// never a query or its values) through the logger of the first interface that answers a request
// with it, and an info line ("database reachable again", with the outage's duration) through the
// same logger when a query succeeds again. The state lives in the pool's own instance (one per
// `createDatabasePool`), never in this module, so apps built side by side in tests share nothing.
import { BackendTerminatedError, BackendTerminatedUnexpectedlyError, ConnectionError, SlonikError } from 'slonik';

/** What was recognized: the class of the error the pool raised and the first code found on it or its causes. */
export type OutageReason = { errorClass: string; code: string | null };

/**
 * How far the failed step got, which decides what a caller can be told about a write:
 * - `connect`: no connection could be opened; the step sent Postgres nothing.
 * - `rolled_back`: the connection was lost while a transaction's work ran, before its COMMIT was
 *   sent; Postgres rolls back a transaction whose session ends, so that transaction changed nothing.
 * - `unknown`: the connection was lost while a single statement (autocommit) or a COMMIT was in
 *   flight; Postgres may have committed it before the connection went, and nobody here can know.
 */
export type FailedStep = 'connect' | 'rolled_back' | 'unknown';

/** The two lines an outage writes; a pino logger (Fastify's `log`) is one. */
export type OutageLogger = {
  warn: (fields: Record<string, unknown>, message: string) => void;
  info: (fields: Record<string, unknown>, message: string) => void;
};

// Socket errors of the connection to Postgres: refused, reset, timed out, the peer gone, no route,
// the host's name not resolvable (node:net's `code`).
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs Postgres sends when it cannot serve a session (Appendix A of its manual): class 08
 * connection_exception; 57P01 admin_shutdown (a fast or smart shutdown, or pg_terminate_backend),
 * 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up, shutting down, in recovery), 57P04
 * database_dropped, 57P05 idle_session_timeout; 53300 too_many_connections. Not 57014 (a statement
 * timeout or cancel: the database answered) and not 25P03 (our own idle-in-transaction timeout).
 */
const isUnreachableSqlState = (code: string) => /^08[0-9A-Z]{3}$/.test(code) || /^57P[0-9A-Z]{2}$/.test(code) || code === '53300';

// node-postgres raises these as plain Errors with no code or class to tell them by; they are matched
// exactly, and only on an Error that carries no code.
const PG_CONNECTION_MESSAGES = new Set(['Connection terminated unexpectedly', 'Client has encountered a connection error and is not queryable']);

const codeOf = (error: object): string | null => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code !== '' ? code : null;
};

/** node-postgres' own error for a lost session, or Postgres refusing to serve one. */
function isConnectionFailure(error: object): boolean {
  const code = codeOf(error);
  // A socket error is node's system error (it has `syscall`), not an error that merely reuses the code.
  if (code !== null) return isUnreachableSqlState(code) || (SOCKET_CODES.has(code) && typeof (error as { syscall?: unknown }).syscall === 'string');
  return error instanceof Error && error.constructor === Error && PG_CONNECTION_MESSAGES.has(error.message);
}

/** The first code on the error or its causes (node:net's AggregateError included), breadth-first and bounded. */
function firstCode(error: Error): string | null {
  const queue: unknown[] = [error];
  for (let seen = 0; queue.length > 0 && seen < 16; seen++) {
    const current = queue.shift();
    if (current === null || typeof current !== 'object') continue;
    const code = codeOf(current);
    if (code !== null) return code;
    const cause = (current as { cause?: unknown }).cause;
    if (cause !== undefined) queue.push(cause);
    if (current instanceof AggregateError) queue.push(...(current.errors as unknown[]));
  }
  return null;
}

/**
 * Whether `error`, as a pool method raised it, means Postgres cannot be reached, and why: the
 * reason, or null for any other failure. Recognized by slonik's classes (ConnectionError: no
 * connection could be acquired, whatever the cause, a connect timeout included; BackendTerminated*:
 * the session ended under a statement), then by the SQLSTATE or socket code node-postgres left on
 * the error (raw, or as the cause of a slonik error), then by two node-postgres messages that carry
 * nothing else. Causes are not searched further: an error of other I/O that merely has a refused
 * socket somewhere in its chain (a fetch inside a transaction) is not the database's.
 */
export function unreachableReason(error: unknown): OutageReason | null {
  if (error instanceof DatabaseUnavailableError) return error.reason;
  if (!(error instanceof Error)) return null;
  const cause = (error as { cause?: unknown }).cause;
  const recognized =
    error instanceof ConnectionError ||
    error instanceof BackendTerminatedError ||
    error instanceof BackendTerminatedUnexpectedlyError ||
    isConnectionFailure(error) ||
    (error instanceof SlonikError && typeof cause === 'object' && cause !== null && isConnectionFailure(cause));
  return recognized ? { errorClass: error.constructor.name, code: firstCode(error) } : null;
}

/** One outage: from the first failure a pool recognized to the next query that succeeded. */
export class DatabaseOutage {
  readonly reason: OutageReason;
  readonly since: Date;
  readonly #startedAt = performance.now();
  #endedAt: number | null = null;
  #logger: OutageLogger | null = null;
  #refused = 0;

  constructor(reason: OutageReason) {
    this.reason = reason;
    this.since = new Date();
  }

  get ended(): boolean {
    return this.#endedAt !== null;
  }

  /**
   * An interface answered a request with this outage. The first report writes the outage's warn
   * line through `logger`, which also writes its recovery line; later reports only count.
   */
  report(logger: OutageLogger, requestId?: string): void {
    this.#refused++;
    if (this.#logger) return;
    this.#logger = logger;
    logger.warn({ errorClass: this.reason.errorClass, code: this.reason.code, since: this.since.toISOString(), ...(requestId ? { requestId } : {}) }, 'database unreachable');
    // Reported only after a query had already succeeded again (a race of a few milliseconds): the
    // outage is over, so its recovery line follows at once.
    if (this.#endedAt !== null) this.#logRecovery();
  }

  /** A query succeeded: the outage is over. */
  end(): void {
    if (this.#endedAt !== null) return;
    this.#endedAt = performance.now();
    if (this.#logger) this.#logRecovery();
  }

  #logRecovery(): void {
    const outageMs = Math.round((this.#endedAt ?? performance.now()) - this.#startedAt);
    this.#logger?.info({ outageMs, since: this.since.toISOString(), refusedRequests: this.#refused }, 'database reachable again');
  }
}

/** Thrown by the pool in place of an error that means Postgres cannot be reached; `cause` is that error. */
export class DatabaseUnavailableError extends Error {
  readonly reason: OutageReason;
  readonly step: FailedStep;
  readonly outage: DatabaseOutage;

  constructor(cause: Error, reason: OutageReason, step: FailedStep, outage: DatabaseOutage) {
    // The cause's own message stays on `cause`: this one is safe to show (no host, no query).
    super(`database unreachable (${reason.errorClass}${reason.code ? `, ${reason.code}` : ''})`, { cause });
    this.name = 'DatabaseUnavailableError';
    this.reason = reason;
    this.step = step;
    this.outage = outage;
  }
}

/** The availability of one pool: the outage under way, if any. */
export class DatabaseAvailability {
  #current: DatabaseOutage | null = null;

  /** The outage under way, or null while queries succeed. */
  get outage(): DatabaseOutage | null {
    return this.#current;
  }

  /**
   * A method of the pool failed with `error`; returns what it throws instead: a
   * DatabaseUnavailableError when Postgres cannot be reached (opening the outage on the first),
   * else `error` unchanged. `lostStep` is what a lost connection means for the method that failed
   * (a transaction whose work had not finished: rolled back; anything else: unknown).
   */
  failed(error: unknown, lostStep: Exclude<FailedStep, 'connect'>): unknown {
    if (error instanceof DatabaseUnavailableError) return error; // a nested call of the same pool already judged it
    const reason = unreachableReason(error);
    if (!reason) return error;
    this.#current ??= new DatabaseOutage(reason);
    // ConnectionError: acquiring a connection failed, so this step never reached Postgres.
    const step: FailedStep = error instanceof ConnectionError ? 'connect' : lostStep;
    return new DatabaseUnavailableError(error as Error, reason, step, this.#current);
  }

  /** A method of the pool succeeded: Postgres answers, and any outage is over. */
  succeeded(): void {
    const outage = this.#current;
    if (!outage) return;
    this.#current = null;
    outage.end();
  }
}
