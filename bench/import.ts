// `npm run bench -- --suite import`: vault import and export through the knowledge core, against
// baselines measured in the same run on the same database:
// - one note per transaction (applyWrite, what importing through the single-note API costs), and
// - API transactions of 100 notes (applyTransaction),
// each on a sample and normalised per note; then the import of a whole folder of `--notes` notes
// (default 10,000: read, checked, written in batches with one provenance event each), the same
// import again (nothing to write), and the export of the vault back to files, compared byte for byte;
// then a baseline and an import with prose notes of ~2.2 KB, closer to a real vault's.
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
import { mergeDeferredIndexEntries } from '../domain/notes/store.ts';
import { indexAllQueuedNotes } from '../domain/notes/substring-index.ts';
import type { Provenance } from '../domain/notes/store.ts';
import { exportVault, importVault } from '../domain/notes/vault-transfer.ts';
import { pseudoWords, xorshift } from './pseudo-words.ts';

/** The same notes bench/run.ts seeds: frontmatter, a heading, a link, 50 folders. */
export function benchNote(n: number, count: number): { path: string; content: string } {
  return {
    path: `Folder ${String(n % 50).padStart(2, '0')}/Note ${String(n).padStart(5, '0')}.md`,
    content: `---\ntags: [bench, t${n % 7}]\n---\n# Note ${n}\n\nSome text about topic ${n % 97} linking [[Note ${(n + 1) % count}]].\n`,
  };
}

/** A deterministic word list and generator (xorshift), so every run imports the same prose. */
function prose(seed: number) {
  const next = xorshift(seed);
  const words = pseudoWords(next, 5000);
  return { next, word: () => words[Math.floor(next() * words.length)]! };
}

/** Notes closer to a real vault's: ~2.2 KB of prose in paragraphs, frontmatter, a link per paragraph. */
export function proseNotes(count: number): Array<{ path: string; content: string }> {
  const { next, word } = prose(42);
  return Array.from({ length: count }, (_, n) => {
    const paragraphs: string[] = [];
    let size = 0;
    while (size < 2000) {
      const paragraph = `${Array.from({ length: 40 }, word).join(' ')} [[Note ${Math.floor(next() * count)}]]`;
      paragraphs.push(paragraph);
      size += paragraph.length;
    }
    return {
      path: `Area ${String(n % 20).padStart(2, '0')}/Topic ${String(n % 100).padStart(3, '0')}/Note ${n}.md`,
      content: `---\ntags: [t${n % 7}, area${n % 20}]\naliases: [N${n}]\n---\n# Note ${n}\n\n${paragraphs.join('\n\n')}\n`,
    };
  });
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

async function writeFolder(root: string, notes: ReadonlyArray<{ path: string; content: string }>): Promise<void> {
  for (const note of notes) {
    await mkdir(dirname(join(root, note.path)), { recursive: true });
    await writeFile(join(root, note.path), note.content);
  }
}

export type ImportSuiteResult = { rows: ImportRow[]; baselineMsPerNote: number; prose: { rows: ImportRow[]; baselineMsPerNote: number } };

export async function importSuite(input: { db: DatabasePool; accountId: string; notes: number; sample: number }): Promise<ImportSuiteResult> {
  const { db, accountId, notes: count, sample } = input;
  const provenance: Provenance = { actor: { type: 'account', id: accountId }, source: 'ops', requestId: null, idempotencyKey: null };
  const rows: ImportRow[] = [];
  const time = async (name: string, notes: number, vaultId: string, work: () => Promise<unknown>, into = rows) => {
    const before = await eventCount(db, vaultId);
    await mergeDeferredIndexEntries(db); // start with no index entries pending from earlier scenarios
    const started = performance.now();
    await work();
    // Every scenario pays for the index entries it leaves pending (a small sample of single writes
    // would otherwise leave most of its GIN merges to whoever writes next).
    await mergeDeferredIndexEntries(db);
    const seconds = (performance.now() - started) / 1000;
    into.push({ name, notes, seconds, events: (await eventCount(db, vaultId)) - before });
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
    await writeFolder(source, Array.from({ length: count }, (_, n) => benchNote(n, count)));
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

  // The same comparison with prose notes, where the content's index entries dominate the cost.
  const proseRows: ImportRow[] = [];
  const notes = proseNotes(count);
  const proseSample = Math.max(1, Math.floor(sample / 2));
  const singleProse = await newTarget(db, accountId, 'prose, one note per transaction');
  await time(`baseline: one note per transaction (applyWrite), ${proseSample} notes`, proseSample, singleProse.vaultId, async () => {
    for (const note of notes.slice(0, proseSample)) {
      const key = randomUUID();
      await applyWrite(db, singleProse, note, provenance, { accountId, route: 'bench:single', scope: singleProse.mappingId, key, fingerprint: key });
    }
  }, proseRows);
  const proseFolder = await mkdtemp(join(tmpdir(), 'hnp-bench-prose-'));
  try {
    await writeFolder(proseFolder, notes);
    const target = await newTarget(db, accountId, 'Imported prose');
    // Start with no other scenario's notes queued for the substring index.
    await indexAllQueuedNotes(db);
    await time(`vault import, ${count.toLocaleString('en-US')} notes (folder → vault)`, count, target.vaultId, () =>
      importVault(db, { folder: proseFolder, mappingId: target.mappingId, accountId }), proseRows,
    );
    // What each API process then does in the background (decision 106); searches are exact meanwhile.
    await time(`search indexes caught up after it (background, as an API process does)`, count, target.vaultId, async () => {
      await indexAllQueuedNotes(db);
    }, proseRows);
  } finally {
    await rm(proseFolder, { recursive: true, force: true });
  }
  const perNote = (row: ImportRow) => (row.seconds * 1000) / row.notes;
  return { rows, baselineMsPerNote: perNote(rows[0]!), prose: { rows: proseRows, baselineMsPerNote: perNote(proseRows[0]!) } };
}
