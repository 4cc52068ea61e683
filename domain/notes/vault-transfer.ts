// Moving a folder of Markdown files (an Obsidian-style vault) into a hosted vault, and a hosted vault
// back out to a folder. System Operations (`npm run ops -- vault import|export`) call these.
//
// Import goes through the knowledge core (applyImportBatch): the same path rules and size limit as
// an API write, one provenance event per created or replaced note (source 'ops'), search vectors
// and link columns maintained by the same write. It runs in two passes:
//   1. check: every file is read, decoded and checked, and every note judged against the vault,
//      before anything is written. Any refusal (and, by default, any note stored with other
//      content) refuses the whole import with every problem listed: nothing is written.
//   2. write: the notes to create or replace, in batches; a batch is one transaction (notes and
//      events together, all or nothing) holding the vault lock. Notes the vault already holds with
//      the same bytes are left alone and record no event, so re-running an import is a no-op and
//      an interrupted import resumes where it stopped.
// Not notes, and reported as skipped: hidden files and folders (.obsidian, .trash, …), symbolic
// links (never followed: they may leave the folder or loop), files that are not `.md`
// (attachments, canvases) and special files.
//
// Export writes every note to `<folder>/<path>` with the exact bytes stored, from one snapshot.
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdir, readdir, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import type { DatabasePool } from 'slonik';
import { AppError } from '../errors.ts';
import { resolveMappingForAccount } from '../identity/vaults.ts';
import { applyImportBatch, checkImportNote, findDuplicatePaths, importLimits, planImport, prepareImportBatch } from './knowledge.ts';
import type { PreparedImportBatch } from './knowledge.ts';
import type { ExistingPolicy, ImportJudgement, ImportProblem } from './knowledge.ts';
import { revisionOf } from './markdown.ts';
import { noteLimits } from './paths.ts';
import { countNotes, listNoteFiles, mergeDeferredIndexEntries, readOneSnapshot } from './store.ts';
import type { Provenance } from './store.ts';

/** A failure of an import or export as a whole, with a stable code and what the operator needs. */
export class TransferError extends Error {
  readonly code: string;
  readonly details: Record<string, unknown>;
  constructor(code: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'TransferError';
    this.code = code;
    this.details = details;
  }
}

export type TransferProgress = { phase: 'check' | 'write'; done: number; total: number };
type OnProgress = (progress: TransferProgress) => void;

/** An entry of the folder that is not a note. */
export type SkippedEntry = { path: string; code: 'hidden' | 'symlink' | 'not_markdown' | 'special_file'; message: string };

/** A note file that cannot be imported: `path` is the file's path in the folder. */
export type FileProblem = { path: string; code: string; message: string };

/** Problems `--skip-invalid` may skip: the file itself is wrong. A stored note with other content is governed by ExistingPolicy only. */
const INVALID_CODES = new Set(['invalid_path', 'note_too_large', 'invalid_utf8', 'invalid_character', 'duplicate_path', 'path_case_conflict', 'file_unreadable']);

export const DEFAULT_IMPORT_BATCH = 500;

// ---- the folder ------------------------------------------------------------------------------

async function assertFolder(folder: string): Promise<void> {
  const info = await stat(folder).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new TransferError('folder_not_found', `No folder at ${folder}.`);
    throw new TransferError('folder_unreadable', `Cannot read ${folder}: ${error.code ?? error.message}.`);
  });
  if (!info.isDirectory()) throw new TransferError('not_a_folder', `${folder} is not a folder.`);
}

/** Markdown files under `root` (relative `/` paths, sorted), and what was skipped and why. */
export async function scanFolder(root: string): Promise<{ files: string[]; skipped: SkippedEntry[] }> {
  const files: string[] = [];
  const skipped: SkippedEntry[] = [];
  const pending = [''];
  while (pending.length > 0) {
    const relDir = pending.pop()!;
    const entries = await readdir(join(root, relDir), { withFileTypes: true });
    for (const entry of entries) {
      const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
      if (entry.name.startsWith('.')) skipped.push({ path: rel, code: 'hidden', message: 'hidden file or folder (application state such as .obsidian or .trash), not imported' });
      else if (entry.isSymbolicLink()) skipped.push({ path: rel, code: 'symlink', message: 'symbolic link, not followed' });
      else if (entry.isDirectory()) pending.push(rel);
      else if (!entry.isFile()) skipped.push({ path: rel, code: 'special_file', message: 'not a regular file' });
      else if (/\.md$/i.test(entry.name)) files.push(rel);
      else skipped.push({ path: rel, code: 'not_markdown', message: 'not a Markdown note (.md); attachments and canvases are not imported' });
    }
  }
  return { files: files.sort(compare), skipped: skipped.sort((a, b) => compare(a.path, b.path)) };
}

/** Code-unit order: stable across locales, like the vault's own path order for ASCII names. */
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

// A note file is read twice (checked, then written): through the callback API, one thread-pool task
// per call; fs/promises' readFile reads in chunks of its own tasks, about 3x the time for 2 KB
// files here (decision 114).
const lstat = promisify(fs.lstat);
const readFile = promisify(fs.readFile);

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }); // a BOM stays part of the bytes

/** The file's text, or the problem that keeps it out. Stats first so an oversized file is never read whole. */
async function readNoteFile(root: string, rel: string): Promise<{ content: string } | { problem: Omit<FileProblem, 'path'> }> {
  const file = join(root, rel);
  try {
    const info = await lstat(file);
    if (info.size > noteLimits.maxContentBytes) {
      return { problem: { code: 'note_too_large', message: `The file is ${info.size} bytes; the limit is ${noteLimits.maxContentBytes} bytes.` } };
    }
    const bytes = await readFile(file);
    try {
      return { content: utf8.decode(bytes) };
    } catch {
      return { problem: { code: 'invalid_utf8', message: 'The file is not valid UTF-8 text.' } };
    }
  } catch (error) {
    return { problem: { code: 'file_unreadable', message: `Cannot read the file: ${(error as NodeJS.ErrnoException).code ?? String(error)}.` } };
  }
}

/** Runs `fn` over `items` with at most `limit` in flight, results in input order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

const FILE_CONCURRENCY = 16;

// ---- import ----------------------------------------------------------------------------------

export type ImportOptions = {
  folder: string;
  mappingId: string;
  /** The account the import acts as: it must be able to write the mapping's vault; events name it. */
  accountId: string;
  existing?: ExistingPolicy;
  /** Import the valid notes and list the invalid ones, instead of refusing the import. */
  skipInvalid?: boolean;
  dryRun?: boolean;
  batchSize?: number;
};

export type ImportReport = {
  folder: string;
  mappingId: string;
  vaultId: string;
  dryRun: boolean;
  /** Shared by every event of this import (requestId in the events feed). */
  requestId: string;
  notes: { found: number; created: number; replaced: number; unchanged: number; kept: number; invalid: number };
  events: number;
  batches: number;
  skipped: SkippedEntry[];
  /** Note files left out by skipInvalid, with their codes. */
  invalid: FileProblem[];
  seconds: number;
};

type Checked = { file: string; path: string; revision: string; size: number };

export async function importVault(db: DatabasePool, options: ImportOptions, onProgress: OnProgress = () => {}): Promise<ImportReport> {
  const started = performance.now();
  const folder = resolve(options.folder);
  const existing = options.existing ?? 'refuse';
  const batchSize = Math.min(options.batchSize ?? DEFAULT_IMPORT_BATCH, importLimits.maxBatchNotes);
  const mapping = await resolveMappingForAccount(db, options.mappingId, options.accountId, 'write');
  const target = { vaultId: mapping.vaultId, mappingId: mapping.mappingId };
  await assertFolder(folder);
  const { files, skipped } = await scanFolder(folder);

  // Pass 1: read and check every file, then judge every note against the vault.
  const problems: FileProblem[] = [];
  let read = 0;
  onProgress({ phase: 'check', done: 0, total: files.length });
  const checked = await mapLimit(files, FILE_CONCURRENCY, async (file): Promise<Checked | null> => {
    const result = await readNoteFile(folder, file);
    onProgress({ phase: 'check', done: ++read, total: files.length });
    if ('problem' in result) {
      problems.push({ path: file, ...result.problem });
      return null;
    }
    try {
      const path = checkImportNote(file, result.content);
      return { file, path, revision: revisionOf(result.content), size: Buffer.byteLength(result.content, 'utf8') };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      problems.push({ path: file, code: error.code, message: error.message });
      return null;
    }
  });
  let candidates = checked.filter((c): c is Checked => c !== null);
  const duplicates = findDuplicatePaths(candidates.map((c) => c.path));
  const dropped = new Set(duplicates.map((d) => d.index));
  problems.push(...duplicates.map((d) => ({ path: candidates[d.index]!.file, code: d.code, message: d.message })));
  candidates = candidates.filter((_, i) => !dropped.has(i));
  const plan = await planImport(db, target, candidates, existing);
  const asFileProblem = (p: ImportProblem): FileProblem => ({ path: candidates[p.index]!.file, code: p.code, message: p.message });
  problems.push(...plan.problems.map(asFileProblem));
  problems.sort((a, b) => compare(a.path, b.path));

  const refusing = options.skipInvalid ? problems.filter((p) => !INVALID_CODES.has(p.code)) : problems;
  if (refusing.length > 0) {
    const first = refusing[0]!;
    throw new TransferError(first.code, `${refusing.length} of ${files.length} note files cannot be imported; nothing was written. First: ${first.path}: ${first.message}`, {
      problems: refusing,
      ...(options.skipInvalid ? {} : { hint: 'Fix or remove these files, or pass --skip-invalid to import the others (a stored note with other content needs --existing skip or replace).' }),
    });
  }

  const judged = candidates.map((c, i) => ({ ...c, judgement: plan.judgements[i] })).filter((c): c is Checked & { judgement: ImportJudgement } => Boolean(c.judgement));
  const count = (operation: ImportJudgement['operation']) => judged.filter((c) => c.judgement.operation === operation).length;
  const toWrite = judged.filter((c) => c.judgement.operation === 'create' || c.judgement.operation === 'replace');
  const requestId = `vault-import:${randomUUID()}`;
  const report: ImportReport = {
    folder,
    mappingId: target.mappingId,
    vaultId: target.vaultId,
    dryRun: options.dryRun === true,
    requestId,
    notes: { found: files.length, created: count('create'), replaced: count('replace'), unchanged: count('unchanged'), kept: count('kept'), invalid: problems.length },
    events: 0,
    batches: 0,
    skipped,
    invalid: problems,
    seconds: 0,
  };
  if (options.dryRun) return { ...report, seconds: (performance.now() - started) / 1000 };

  // Pass 2: write in batches bounded by count and bytes; each batch re-reads its files and is judged
  // again under the vault lock, so a change since pass 1 is seen, never overwritten by accident.
  const provenance: Provenance = { actor: { type: 'account', id: options.accountId }, source: 'ops', requestId, idempotencyKey: null };
  const tally = { create: 0, replace: 0, unchanged: 0, kept: 0 };
  let written = 0;
  onProgress({ phase: 'write', done: 0, total: toWrite.length });
  const batches: Array<typeof toWrite> = [];
  for (let start = 0; start < toWrite.length; ) {
    let bytes = 0;
    let end = start;
    while (end < toWrite.length && end - start < batchSize && (end === start || bytes + toWrite[end]!.size <= importLimits.maxBatchContentBytes)) bytes += toWrite[end++]!.size;
    batches.push(toWrite.slice(start, end));
    start = end;
  }
  // Read and prepared one batch ahead: Node reads, checks and derives batch k + 1 while Postgres
  // writes batch k (on two cores, about a third of a prose import's time; decision 107).
  const prepare = async (batch: typeof toWrite): Promise<PreparedImportBatch | { changed: string; problem: FileProblem }> => {
    const notes: Array<{ path: string; content: string }> = [];
    let changed: { changed: string; problem: FileProblem } | null = null;
    await mapLimit(batch, FILE_CONCURRENCY, async (entry, i) => {
      const result = await readNoteFile(folder, entry.file);
      if ('problem' in result) changed ??= { changed: entry.file, problem: { path: entry.file, ...result.problem } };
      else notes[i] = { path: entry.path, content: result.content };
    });
    return changed ?? prepareImportBatch(notes);
  };
  let next = batches.length > 0 ? prepare(batches[0]!) : null;
  // The merge of the last committed batch's GIN entries, outside the vault lock (decision 107).
  let merging: Promise<void> = Promise.resolve();
  for (const [index, batch] of batches.entries()) {
    const prepared = next!;
    next = index + 1 < batches.length ? prepare(batches[index + 1]!) : null;
    // Awaited in its turn; if this batch fails first, the next one's failure is not an unhandled rejection.
    next?.catch(() => {});
    try {
      const ready = await prepared;
      // Told with what had committed when it is reached, not when the file was read.
      if ('changed' in ready) throw new TransferError(ready.problem.code, `${ready.changed}: ${ready.problem.message} (it changed during the import)`, batchDetails(report, written));
      const applied = await applyImportBatch(db, target, ready, provenance, existing, 'by-caller');
      if (applied.mergePending) {
        // One merge at a time: the next batch's is started when this one has ended.
        await merging;
        merging = mergeDeferredIndexEntries(db);
        merging.catch(() => {});
      }
      for (const r of applied.results) tally[r.operation]++;
      report.events += applied.results.filter((r) => r.eventId !== null).length;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const errors = (error.extensions['errors'] as Array<{ path: string; code: string; message: string }> | undefined) ?? [];
      throw new TransferError(error.code, `A batch was refused (${error.message}).`, {
        ...batchDetails(report, written),
        problems: errors.map((e) => ({ path: batch.find((b) => b.path === e.path)?.file ?? e.path, code: e.code, message: e.message })),
      });
    }
    report.batches++;
    written += batch.length;
    onProgress({ phase: 'write', done: written, total: toWrite.length });
  }
  // Every batch's entries are merged before the import answers, as a batch merging in its own
  // transaction would have them.
  await merging;
  // The counts of what was written; notes that changed since pass 1 moved between them.
  report.notes.created = tally.create;
  report.notes.replaced = tally.replace;
  report.notes.unchanged += tally.unchanged;
  report.notes.kept += tally.kept;
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

function batchDetails(report: ImportReport, written: number) {
  return {
    committedBatches: report.batches,
    committedNotes: written,
    requestId: report.requestId,
    hint: 'Batches already committed stay; running the same import again continues from here (notes already imported are unchanged).',
  };
}

// ---- export ----------------------------------------------------------------------------------

export type ExportOptions = { folder: string; mappingId: string; accountId: string };
export type ExportReport = { folder: string; mappingId: string; vaultId: string; notes: number; bytes: number; seconds: number };

/** Notes and content bytes held in memory at once while exporting. */
const EXPORT_PAGE = { limit: 1000, maxBytes: 32 * 1_048_576 };

/** The folder must be new or empty: an export never overwrites or mixes with other files. */
async function prepareExportFolder(folder: string): Promise<void> {
  const entries = await readdir(folder).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    if (error.code === 'ENOTDIR') throw new TransferError('not_a_folder', `${folder} is not a folder.`);
    throw new TransferError('folder_unreadable', `Cannot read ${folder}: ${error.code ?? error.message}.`);
  });
  if (entries && entries.length > 0) throw new TransferError('folder_not_empty', `${folder} is not empty; export into a new or empty folder.`, { entries: entries.length });
  await mkdir(folder, { recursive: true });
}

/**
 * Writes every note of the mapping's vault to `<folder>/<path>` with the exact bytes stored (the
 * UTF-8 of the content, whose SHA-256 is the revision) and the note's update time as the file's
 * modification time. Reads one snapshot in pages; not atomic on disk (a failure leaves the files
 * written so far).
 */
export async function exportVault(db: DatabasePool, options: ExportOptions, onProgress: OnProgress = () => {}): Promise<ExportReport> {
  const started = performance.now();
  const folder = resolve(options.folder);
  const mapping = await resolveMappingForAccount(db, options.mappingId, options.accountId, 'read');
  await prepareExportFolder(folder);
  const made = new Set<string>([folder]);
  let notes = 0;
  let bytes = 0;
  await db.transaction(async (tx) => {
    await readOneSnapshot(tx);
    const total = await countNotes(tx, mapping.vaultId);
    onProgress({ phase: 'write', done: 0, total });
    for (let after: string | null = null; ; ) {
      const page = await listNoteFiles(tx, mapping.vaultId, { ...EXPORT_PAGE, after });
      if (page.length === 0) break;
      // Folders first (one mkdir each), then the files of the page in parallel.
      for (const dir of new Set(page.map((note) => dirname(join(folder, note.path))))) {
        if (made.has(dir)) continue;
        await mkdir(dir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
          throw new TransferError('file_not_writable', `Cannot create the folder ${dir}: ${error.code ?? error.message}.`, { notesWritten: notes });
        });
        made.add(dir);
      }
      await mapLimit(page, FILE_CONCURRENCY, async (note) => {
        const file = join(folder, note.path);
        // Stored paths never climb (no "..", no leading "/"); checked again before touching the disk.
        if (!file.startsWith(folder + sep)) throw new TransferError('invalid_path', `The stored path ${note.path} leaves the folder.`);
        const data = Buffer.from(note.content, 'utf8');
        try {
          await writeFile(file, data, { flag: 'wx' });
          const updated = new Date(note.updatedAt);
          await utimes(file, updated, updated);
        } catch (error) {
          throw new TransferError('file_not_writable', `Cannot write ${note.path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`, { notesWritten: notes });
        }
        bytes += data.length;
        notes++;
      });
      onProgress({ phase: 'write', done: notes, total });
      after = page[page.length - 1]!.path;
    }
  });
  return { folder, mappingId: mapping.mappingId, vaultId: mapping.vaultId, notes, bytes, seconds: (performance.now() - started) / 1000 };
}
