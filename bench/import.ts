// `npm run bench -- --suite import`: vault import and export through the knowledge core, against
// baselines measured in the same run on the same database:
// - one note per transaction (applyWrite, what importing through the single-note API costs), and
// - API transactions of 100 notes (applyTransaction),
// each on a sample and normalised per note; then the import of a whole folder of `--notes` notes
// (default 10,000: read, checked, written in batches with one provenance event each), the same
// import again (nothing to write), and the export of the vault back to files, compared byte for byte.
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { sql } from 'slonik';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { applyTransaction, applyWrite } from '../domain/notes/knowledge.ts';
import type { Target } from '../domain/notes/knowledge.ts';
import type { Provenance } from '../domain/notes/store.ts';
import { exportVault, importVault } from '../domain/notes/vault-transfer.ts';

/** The same notes bench/run.ts seeds: frontmatter, a heading, a link, 50 folders. */
export function benchNote(n: number, count: number): { path: string; content: string } {
  return {
    path: `Folder ${String(n % 50).padStart(2, '0')}/Note ${String(n).padStart(5, '0')}.md`,
    content: `---\ntags: [bench, t${n % 7}]\n---\n# Note ${n}\n\nSome text about topic ${n % 97} linking [[Note ${(n + 1) % count}]].\n`,
  };
}

export type ImportRow = { name: string; notes: number; seconds: number; events: number };

async function newTarget(db: DatabasePool, accountId: string, name: string): Promise<Target> {
  const vault = await createVault(db, { name, ownerAccountId: accountId });
  const { mappingId } = await createMapping(db, { vaultId: vault.id });
  return { vaultId: vault.id, mappingId };
}

async function eventCount(db: DatabasePool, vaultId: string): Promise<number> {
  return db.oneFirst(sql.type(z.object({ count: z.number() }))`SELECT count(*)::int AS count FROM note_events WHERE vault_id = ${vaultId} AND source = 'ops'`);
}

async function vaultOfMapping(db: DatabasePool, mappingId: string): Promise<string> {
  return db.oneFirst(sql.type(z.object({ id: z.uuid() }))`SELECT vault_id AS id FROM vault_mappings WHERE id = ${mappingId}`);
}

export async function importSuite(input: { db: DatabasePool; accountId: string; notes: number; sample: number }): Promise<{ rows: ImportRow[]; baselineMsPerNote: number }> {
  const { db, accountId, notes: count, sample } = input;
  const provenance: Provenance = { actor: { type: 'account', id: accountId }, source: 'ops', requestId: null, idempotencyKey: null };
  const rows: ImportRow[] = [];
  const time = async (name: string, notes: number, vaultId: string, work: () => Promise<unknown>) => {
    const before = await eventCount(db, vaultId);
    const started = performance.now();
    await work();
    const seconds = (performance.now() - started) / 1000;
    rows.push({ name, notes, seconds, events: (await eventCount(db, vaultId)) - before });
    console.log(`  measured ${name}: ${seconds.toFixed(2)} s`);
  };

  // Baseline: one note per transaction, each with its idempotency claim, lock, event and commit.
  const single = await newTarget(db, accountId, 'one note per transaction');
  await time(`baseline: one note per transaction (applyWrite), ${sample} notes`, sample, single.vaultId, async () => {
    for (let n = 0; n < sample; n++) {
      const key = randomUUID();
      await applyWrite(db, single, benchNote(n, count), provenance, { accountId, route: 'bench:single', scope: single.mappingId, key, fingerprint: key });
    }
  });

  const batched = await newTarget(db, accountId, 'API transactions');
  await time(`API transactions of 100 (applyTransaction), ${sample} notes`, sample, batched.vaultId, async () => {
    for (let start = 0; start < sample; start += 100) {
      const actions = Array.from({ length: Math.min(100, sample - start) }, (_, i) => ({ type: 'write-note' as const, ...benchNote(start + i, count) }));
      const key = randomUUID();
      await applyTransaction(db, batched, actions, provenance, { accountId, route: 'bench:tx', scope: batched.mappingId, key, fingerprint: key });
    }
  });

  const folder = await mkdtemp(join(tmpdir(), 'hnp-bench-vault-'));
  const exported = join(folder, '..', `${folder.split('/').pop()}-export`);
  try {
    const source = join(folder, 'vault');
    for (let n = 0; n < count; n++) {
      const note = benchNote(n, count);
      await mkdir(dirname(join(source, note.path)), { recursive: true });
      await writeFile(join(source, note.path), note.content);
    }
    const target = await newTarget(db, accountId, 'Imported vault');
    await time(`vault import, ${count.toLocaleString('en-US')} notes (folder → vault)`, count, target.vaultId, () =>
      importVault(db, { folder: source, mappingId: target.mappingId, accountId }),
    );
    await time(`vault import again (every note unchanged)`, count, target.vaultId, () => importVault(db, { folder: source, mappingId: target.mappingId, accountId }));
    await time(`vault export, ${count.toLocaleString('en-US')} notes (vault → folder)`, count, await vaultOfMapping(db, target.mappingId), () =>
      exportVault(db, { folder: exported, mappingId: target.mappingId, accountId }),
    );
    // Not timed: the round trip is exact.
    for (let n = 0; n < count; n++) {
      const { path } = benchNote(n, count);
      const [a, b] = await Promise.all([readFile(join(source, path)), readFile(join(exported, path))]);
      if (!a.equals(b)) throw new Error(`export differs from the imported file at ${path}`);
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
    await rm(exported, { recursive: true, force: true });
  }
  return { rows, baselineMsPerNote: (rows[0]!.seconds * 1000) / rows[0]!.notes };
}
