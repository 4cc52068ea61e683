// WikiLink relations of one note, resolved the way Obsidian resolves them:
// 1. relative to the linking note's folder (`[[../x]]`, `[[sub/x]]`), with or without `.md`;
// 2. the exact vault path, with or without `.md`;
// 3. a unique case-insensitive file-name match anywhere in the vault.
// Several file-name matches are `ambiguous`: one is still chosen (same folder as the linking note,
// then the shortest path, then alphabetical) and every candidate is reported. Links to nothing, or
// to files that are not notes (e.g. `![[diagram.png]]`), are `unresolved`. Bounded, with `truncated`.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import type { NoteLink } from './markdown.ts';
import { basenameKey, pathKey } from './paths.ts';
import { findNote, noteLinkSchema } from './store.ts';

export const MAX_GRAPH_RELATIONS = 200;

export type Resolution =
  | { status: 'resolved'; path: string }
  | { status: 'ambiguous'; path: string; candidates: string[] }
  | { status: 'unresolved'; path: null };

const folderOf = (path: string) => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');

/** Normalises `a/./b/../c` to `a/c`; null when it climbs above the vault root. */
function normalise(path: string): string | null {
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(segment);
  }
  return out.join('/');
}

const withMd = (p: string) => (p.toLowerCase().endsWith('.md') ? p : `${p}.md`);

/** The exact paths a target may name, in priority order (rules 1 and 2). */
export function exactCandidates(sourcePath: string, target: string): string[] {
  const t = target.normalize('NFC').trim();
  const relative = normalise(`${folderOf(sourcePath)}/${t}`);
  const absolute = normalise(t);
  const candidates = [relative, absolute].filter((p): p is string => !!p).flatMap((p) => [withMd(p), p]);
  return [...new Set(candidates)];
}

/** Tie-break among file-name matches (rule 3). */
export function rankBasenameMatches(sourcePath: string, matches: string[]): string[] {
  const folder = folderOf(sourcePath);
  return [...matches].sort(
    (a, b) => Number(folderOf(b) === folder) - Number(folderOf(a) === folder) || a.length - b.length || (a < b ? -1 : a > b ? 1 : 0),
  );
}

/**
 * Resolves `target` written in `sourcePath`, given the vault's notes among `known` (a set of exact
 * paths) and `byBasename` (file-name key → paths).
 */
export function resolveLink(sourcePath: string, target: string, known: ReadonlySet<string>, byBasename: ReadonlyMap<string, readonly string[]>): Resolution {
  if (!target.trim()) return { status: 'resolved', path: sourcePath }; // [[#heading]] links to itself
  for (const candidate of exactCandidates(sourcePath, target)) if (known.has(candidate)) return { status: 'resolved', path: candidate };
  const file = target.split('/').pop() ?? '';
  // A target with another extension (image, pdf, canvas) is not a note.
  if (/\.[A-Za-z0-9]{1,8}$/.test(file) && !/\.md$/i.test(file)) return { status: 'unresolved', path: null };
  const matches = rankBasenameMatches(sourcePath, [...(byBasename.get(basenameKey(target)) ?? [])]);
  // A target with folders must also end with those folders (Obsidian matches path suffixes).
  const suffix = target.includes('/') ? `/${withMd(target).toLowerCase()}` : null;
  const filtered = suffix ? matches.filter((m) => `/${m.toLowerCase()}`.endsWith(suffix)) : matches;
  if (filtered.length === 0) return { status: 'unresolved', path: null };
  if (filtered.length === 1) return { status: 'resolved', path: filtered[0]! };
  return { status: 'ambiguous', path: filtered[0]!, candidates: filtered };
}

type Db = CommonQueryMethods;

/** Exact paths and file-name matches present in the vault for a set of links. */
async function lookupTargets(db: Db, vaultId: string, sourcePath: string, links: readonly NoteLink[]) {
  const exact = [...new Set(links.flatMap((l) => exactCandidates(sourcePath, l.target)))];
  const keys = [...new Set(links.filter((l) => l.target).map((l) => basenameKey(l.target)))];
  // Exact paths by their path_key (btree), as findNotesByKey does (decision 40). Other spellings it
  // returns match no candidate.
  const rows = await db.any(sql.type(z.object({ path: z.string(), key: z.string() }))`
    SELECT n.path, n.basename_key AS key FROM notes n
     WHERE n.vault_id = ${vaultId}
       AND (n.path_key = ANY (${sql.array([...new Set(exact.map(pathKey))], 'text')}) OR n.basename_key = ANY (${sql.array(keys, 'text')}))
     LIMIT 5000`);
  const known = new Set(rows.map((r) => r.path));
  const byBasename = new Map<string, string[]>();
  for (const r of rows) byBasename.set(r.key, [...(byBasename.get(r.key) ?? []), r.path]);
  return { known, byBasename };
}

export type OutgoingRelation = NoteLink & Resolution;
export type IncomingRelation = NoteLink & { sourcePath: string; ambiguous: boolean };

export type GraphRelations = {
  path: string;
  outgoing: OutgoingRelation[];
  incoming: IncomingRelation[];
  counts: { outgoing: number; incoming: number; unresolved: number; ambiguous: number };
  truncated: boolean;
  limit: number;
};

export async function queryGraphRelations(db: Db, vaultId: string, path: string, limit = MAX_GRAPH_RELATIONS): Promise<GraphRelations> {
  const note = await findNote(db, vaultId, path);
  if (!note) throw new AppError('note_not_found', `No live note at ${path}.`);

  const outgoingLinks = note.links.slice(0, limit);
  const targets = await lookupTargets(db, vaultId, path, outgoingLinks);
  const outgoing: OutgoingRelation[] = outgoingLinks.map((link) => ({ ...link, ...resolveLink(path, link.target, targets.known, targets.byBasename) }));

  // Incoming: notes that mention this note's file name in a link (indexed), each checked by
  // resolving its own links, so a link that resolves elsewhere is not counted.
  const sources = await db.any(sql.type(z.object({ path: z.string(), links: z.array(noteLinkSchema) }))`
    SELECT n.path, n.links FROM notes n
     WHERE n.vault_id = ${vaultId} AND n.link_keys && ${sql.array([basenameKey(path)], 'text')}
     ORDER BY n.path
     LIMIT ${limit + 1}`);
  const incoming: IncomingRelation[] = [];
  let sourcesTruncated = sources.length > limit;
  for (const source of sources.slice(0, limit)) {
    const candidates = source.links.filter((l) => l.target && basenameKey(l.target) === basenameKey(path));
    const found = await lookupTargets(db, vaultId, source.path, candidates);
    for (const link of candidates) {
      const resolution = resolveLink(source.path, link.target, found.known, found.byBasename);
      if (resolution.path === path) incoming.push({ ...link, sourcePath: source.path, ambiguous: resolution.status === 'ambiguous' });
    }
  }
  if (incoming.length > limit) {
    incoming.length = limit;
    sourcesTruncated = true;
  }
  return {
    path,
    outgoing,
    incoming,
    counts: {
      outgoing: outgoing.length,
      incoming: incoming.length,
      unresolved: outgoing.filter((o) => o.status === 'unresolved').length,
      ambiguous: outgoing.filter((o) => o.status === 'ambiguous').length,
    },
    truncated: note.links.length > limit || sourcesTruncated,
    limit,
  };
}
