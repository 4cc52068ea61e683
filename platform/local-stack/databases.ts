// Small admin helpers over a Postgres server: create/drop databases and swap the database name
// in a connection URL. Database names are identifiers, so they go through sql.identifier.
import { sql } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../db/pool.ts';
import { emptyRow } from '../../db/row-schemas.ts';

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function withAdminPool<T>(adminUrl: string, fn: (pool: Awaited<ReturnType<typeof createDatabasePool>>) => Promise<T>): Promise<T> {
  const pool = await createDatabasePool(adminUrl, { maxPoolSize: 1 });
  try {
    return await fn(pool);
  } finally {
    await pool.end();
  }
}

export async function databaseExists(adminUrl: string, name: string): Promise<boolean> {
  return withAdminPool(adminUrl, (pool) =>
    pool.exists(sql.type(z.object({ datname: z.string() }))`SELECT datname FROM pg_database WHERE datname = ${name}`),
  );
}

export async function createDatabase(adminUrl: string, name: string, template?: string): Promise<void> {
  await withAdminPool(adminUrl, (pool) =>
    pool.query(
      template
        ? sql.type(emptyRow)`CREATE DATABASE ${sql.identifier([name])} TEMPLATE ${sql.identifier([template])}`
        : sql.type(emptyRow)`CREATE DATABASE ${sql.identifier([name])}`,
    ),
  );
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withAdminPool(adminUrl, (pool) => pool.query(sql.type(emptyRow)`DROP DATABASE IF EXISTS ${sql.identifier([name])} WITH (FORCE)`));
}

export async function listDatabases(adminUrl: string, prefix: string): Promise<readonly string[]> {
  return withAdminPool(adminUrl, (pool) =>
    pool.anyFirst(sql.type(z.object({ datname: z.string() }))`SELECT datname FROM pg_database WHERE starts_with(datname, ${prefix})`),
  );
}
