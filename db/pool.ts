// The slonik pool every module shares. Type parsers are chosen so rows map onto plain JSON:
// timestamps become ISO-8601 strings and int8 becomes a JS number (our counters stay far below 2^53).
import { createPool, createTypeParserPreset, sql } from 'slonik';
import type { DatabasePool, DriverTypeParser } from 'slonik';
import { z } from 'zod';

const typeParsers: DriverTypeParser[] = [
  ...createTypeParserPreset().filter((p) => !['int8', 'timestamptz', 'timestamp'].includes(p.name)),
  { name: 'int8', parse: (value: string) => Number(value) },
  { name: 'timestamptz', parse: (value: string) => new Date(Date.parse(value)).toISOString() },
];

export type PoolOptions = {
  maxPoolSize?: number;
  statementTimeoutMs?: number;
  connectionTimeoutMs?: number;
};

export async function createDatabasePool(connectionUri: string, options: PoolOptions = {}): Promise<DatabasePool> {
  return createPool(connectionUri, {
    typeParsers,
    maxPoolSize: options.maxPoolSize ?? 20,
    statementTimeout: options.statementTimeoutMs ?? 15_000,
    connectionTimeout: options.connectionTimeoutMs ?? 5_000,
    idleTimeout: 30_000,
    captureStackTrace: false,
    // slonik's default runs DISCARD ALL whenever a connection returns to the pool: one more round
    // trip per query, and it drops the named prepared statements (sql.prepared) that hot paths use
    // to skip planning — planning costs ~10x executing on our point look-ups. We keep no other
    // session state (only transaction-local settings and advisory xact locks).
    resetConnection: async () => {},
  });
}

/** A cheap round trip used by readiness checks. */
export async function pingDatabase(pool: DatabasePool): Promise<void> {
  await pool.oneFirst(sql.type(z.object({ ok: z.number() }))`SELECT 1 AS ok`);
}

export type { DatabasePool };
