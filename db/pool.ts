// The slonik pool every module shares. Type parsers are chosen so rows map onto plain JSON:
// timestamps become ISO-8601 strings and int8 becomes a JS number (our counters stay far below 2^53).
// Every method of the pool reports to the pool's own availability (db/availability.ts): a failure
// that means Postgres cannot be reached is thrown as a DatabaseUnavailableError, and a success ends
// the outage.
import { createPool, createTypeParserPreset, sql } from 'slonik';
import type { DatabasePool, DriverTypeParser, Interceptor } from 'slonik';
import { z } from 'zod';
import { DatabaseAvailability } from './availability.ts';
import type { FailedStep } from './availability.ts';

const typeParsers: DriverTypeParser[] = [
  ...createTypeParserPreset().filter((p) => !['int8', 'timestamptz', 'timestamp'].includes(p.name)),
  { name: 'int8', parse: (value: string) => Number(value) },
  { name: 'timestamptz', parse: timestampToIso },
];

/**
 * Postgres's text form of a timestamptz as ISO 8601 in UTC with milliseconds. A UTC session (the
 * usual case) sends `2026-11-25 01:42:18.123456+00`, rewritten as text (milliseconds truncated, as
 * Date.parse does); anything else goes through Date. The Date round trip was 16 % of an inventory
 * page's CPU (1,000 rows).
 */
const UTC_TIMESTAMP = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/;
export function timestampToIso(value: string): string {
  const match = UTC_TIMESTAMP.exec(value);
  if (!match) return new Date(Date.parse(value)).toISOString();
  return `${match[1]}T${match[2]}.${(match[3] ?? '').padEnd(3, '0').slice(0, 3)}Z`;
}

// Every query is `sql.type(schema)`; without this interceptor the schema is a compile-time cast
// only (slonik README, "Result parser interceptor"). With it each row is parsed: a column that does
// not match fails loudly, and transforms (such as `isoTimestamp`) run. Zod parses synchronously, so
// the synchronous hook is enough and keeps the hot path free of an extra await per row.
/** A row did not match its query's schema. Carries the SQL and issue paths, never row values (notes, secrets). */
type ShapeIssue = { message: string; path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> | undefined };
export class ResultShapeError extends Error {
  readonly sql: string;
  readonly issues: readonly ShapeIssue[];
  constructor(sql: string, issues: readonly ShapeIssue[]) {
    const where = issues.map((i) => `${(i.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.') || '(row)'}: ${i.message}`);
    super(`query result does not match its schema: ${where.join('; ')}`);
    this.name = 'ResultShapeError';
    this.sql = sql;
    this.issues = issues;
  }
}

/** Schemas made by `rowsAsDeclared`: their rows are taken as they arrive. */
const declaredSchemas = new WeakSet<object>();

/**
 * A row schema for `sql.type(…)` / `sql.prepared(…)` whose rows the pool does not parse: a type-only
 * cast, for the hottest statements whose every column the database already constrains (a column's
 * type and NOT NULL, JSON built in SQL from such columns, timestamps already in `isoTimestamp`'s
 * form), so a parse could never fail nor change a value. The statement stays a typed `sql.type`
 * template; the schema still types the row and documents it. Use it only where the answer is
 * checked once more downstream or where the benchmark shows the parse matters (bench/README.md),
 * and say so beside the statement. A copy is marked, never `schema` itself, which other statements
 * may share and must still parse.
 */
export function rowsAsDeclared<S extends z.ZodType>(schema: S): S {
  const copy = schema.clone();
  declaredSchemas.add(copy);
  return copy;
}

const resultParserInterceptor: Interceptor = {
  name: 'result-parser',
  transformRow: (context, query, row) => {
    const parser = context.resultParser;
    if (!parser || declaredSchemas.has(parser)) return row;
    const result = parser['~standard'].validate(row);
    if (result instanceof Promise) throw new TypeError('result parsers must be synchronous');
    if (result.issues) throw new ResultShapeError(query.sql, result.issues);
    return result.value as typeof row;
  },
};

export type PoolOptions = {
  maxPoolSize?: number;
  statementTimeoutMs?: number;
  connectionTimeoutMs?: number;
  /** false only for the benchmark that measures what row parsing costs; production always parses. */
  parseResults?: boolean;
  /** More interceptors after the result parser (db/observability.ts: spans and query durations). */
  interceptors?: Interceptor[];
  /**
   * The URL reaches Postgres through a transaction pooler (pgbouncer `pool_mode = transaction`,
   * DATABASE_POOLER=transaction): consecutive transactions may run on different server connections.
   * Then no named prepared statement is made (one prepared on one server connection is missing, or
   * already there, on the next: "prepared statement … already exists"), and no session setting is
   * sent at connect (a pooler refuses unknown startup parameters): the statement and idle-in-transaction
   * timeouts are the server's, set on the pooler (`connect_query`) or the role (`ALTER ROLE … SET`).
   */
  transactionPooler?: boolean;
};

/** Runs every statement unnamed: what a transaction pooler needs (see PoolOptions.transactionPooler). */
const unnamedStatements: Interceptor = {
  name: 'unnamed-statements',
  transformQuery: (_context, query) => (query.name === undefined ? query : { ...query, name: undefined }),
};

export async function createDatabasePool(connectionUri: string, options: PoolOptions = {}): Promise<DatabasePool> {
  const pool = await createPool(connectionUri, {
    typeParsers,
    interceptors: [
      ...(options.transactionPooler ? [unnamedStatements] : []),
      ...(options.parseResults === false ? [] : [resultParserInterceptor]),
      ...(options.interceptors ?? []),
    ],
    maxPoolSize: options.maxPoolSize ?? 20,
    statementTimeout: options.transactionPooler ? 'DISABLE_TIMEOUT' : (options.statementTimeoutMs ?? 15_000),
    ...(options.transactionPooler ? { idleInTransactionSessionTimeout: 'DISABLE_TIMEOUT' as const } : {}),
    connectionTimeout: options.connectionTimeoutMs ?? 5_000,
    idleTimeout: 30_000,
    captureStackTrace: false,
    // slonik's default runs DISCARD ALL whenever a connection returns to the pool: one more round
    // trip per query, and it drops the named prepared statements (sql.prepared) that hot paths use
    // to skip planning — planning costs ~10x executing on our point look-ups. We keep no other
    // session state (only transaction-local settings and advisory xact locks).
    resetConnection: async () => {},
  });
  return watchAvailability(pool, new DatabaseAvailability());
}

/** The methods that run one statement on a connection of their own (no caller code in between). */
const statementMethods = ['any', 'anyFirst', 'exists', 'many', 'manyFirst', 'maybeOne', 'maybeOneFirst', 'one', 'oneFirst', 'query', 'record', 'stream'] as const;

/**
 * Routes every method of `pool` through `availability`, in place (the pool keeps its identity, its
 * `configuration`, `end` and events). What a lost connection means depends on the method: a
 * transaction whose handler had not finished never sent its COMMIT, so Postgres rolled it back; a
 * single statement, a COMMIT in flight or a connection routine may have been applied.
 */
function watchAvailability(pool: DatabasePool, availability: DatabaseAvailability): DatabasePool {
  const watched = async <T>(run: () => Promise<T>, lostStep: () => Exclude<FailedStep, 'connect'>): Promise<T> => {
    let result: T;
    try {
      result = await run();
    } catch (error) {
      throw availability.failed(error, lostStep());
    }
    availability.succeeded();
    return result;
  };
  const methods = pool as unknown as Record<string, unknown>;
  for (const name of statementMethods) {
    const original = pool[name] as (...args: unknown[]) => Promise<unknown>;
    methods[name] = (...args: unknown[]) => watched(() => original(...args), () => 'unknown');
  }
  const { connect, transaction } = pool;
  const watchedConnect: DatabasePool['connect'] = (routine) => watched(() => connect(routine), () => 'unknown');
  const watchedTransaction: DatabasePool['transaction'] = (handler, retryLimit) => {
    let workDone = false;
    const run = () =>
      transaction(async (tx) => {
        workDone = false; // a retried transaction (serialization failure) runs its handler again
        const result = await handler(tx);
        workDone = true;
        return result;
      }, retryLimit);
    return watched(run, () => (workDone ? 'unknown' : 'rolled_back'));
  };
  methods['connect'] = watchedConnect;
  methods['transaction'] = watchedTransaction;
  return pool;
}

/** A cheap round trip used by readiness checks. */
export async function pingDatabase(pool: DatabasePool): Promise<void> {
  await pool.oneFirst(sql.type(z.object({ ok: z.number() }))`SELECT 1 AS ok`);
}

export type { DatabasePool };
