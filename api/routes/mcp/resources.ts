// Notes as MCP resources: `note://{mappingId}/{+path}` names a note of a mapped vault (each path
// segment percent-encoded, so the URI is ASCII and fits the Mcp-Name header). resources/read
// returns its Markdown with the revision; resources/list pages through every note the caller may
// read; tools name the notes they return with resource links. Access is the tools' own: the same
// mapping rule (resolveTarget), the same admission and the same one operation per request.
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { AppError, isAppError } from '../../../domain/errors.ts';
import { decodeCursor, encodeCursor } from '../../../domain/cursor.ts';
import { readableNotesPage } from '../../../domain/notes/note-resources.ts';
import { validateNotePath } from '../../../domain/notes/paths.ts';
import { findNote } from '../../../domain/notes/store.ts';
import { resolveTarget } from '../shared/vault-calls.ts';
import type { Caller } from '../shared/vault-calls.ts';
import { rpcCodes, RpcError } from './protocol.ts';
import type { Revision } from './protocol.ts';

export const NOTE_URI_SCHEME = 'note';
const MARKDOWN = 'text/markdown';
/** Notes per resources/list page. */
export const RESOURCES_PAGE_SIZE = 100;

export const noteTemplate = {
  uriTemplate: `${NOTE_URI_SCHEME}://{mappingId}/{+path}`,
  name: 'note',
  title: 'Note of a mapped vault',
  description: 'One Markdown note of a hosted vault: mappingId is the mapping (UUID), path the vault-relative path ending in .md (any depth, each segment percent-encoded).',
  mimeType: MARKDOWN,
};

/** The URI of a note: the one spelling every result uses. */
export function noteUri(mappingId: string, path: string): string {
  return `${NOTE_URI_SCHEME}://${mappingId}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

const uuid = z.uuid();

/**
 * A note URI's mapping and path, or -32602 naming what is wrong with it. Parsed by hand, not by URL:
 * URL would resolve dot segments (note://m/a/../b.md), and the vault's path rules must judge those.
 */
export function parseNoteUri(uri: unknown): { mappingId: string; path: string } {
  const invalid = (why: string) => new RpcError(rpcCodes.invalidParams, `Invalid resource URI: ${why}`, { data: { uri, uriTemplate: noteTemplate.uriTemplate } });
  if (typeof uri !== 'string') throw invalid('params.uri must be a string.');
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)\/([^?#]*)$/.exec(uri);
  if (!match) throw invalid(`expected ${noteTemplate.uriTemplate}, with no query or fragment.`);
  if (match[1]!.toLowerCase() !== NOTE_URI_SCHEME) throw invalid(`the scheme must be ${NOTE_URI_SCHEME}:.`);
  if (!uuid.safeParse(match[2]).success) throw invalid('the authority must be a mapping id (UUID).');
  let path: string;
  try {
    path = match[3]!.split('/').map(decodeURIComponent).join('/');
  } catch {
    throw invalid('the path is not valid percent-encoded UTF-8.');
  }
  return { mappingId: match[2]!.toLowerCase(), path };
}

/** A note as a Resource: its URI, its path as name, its title. */
export function noteResource(mappingId: string, note: { path: string; title?: string | undefined }) {
  return { uri: noteUri(mappingId, note.path), name: note.path, ...(note.title ? { title: note.title } : {}), mimeType: MARKDOWN };
}

/** A `resource_link` content block naming a note (2025-06-18 and later). */
export function noteLink(mappingId: string, note: { path: string; title?: string | undefined }) {
  return { type: 'resource_link' as const, ...noteResource(mappingId, note) };
}

/**
 * "Resource not found" is -32602 from 2026-07-28 on and -32002 before; either carries the REST code
 * (mapping_not_found, note_not_found: another account's mapping answers exactly like a missing one).
 * Any other refusal of the read (an invalid path, a role without vault.read) is -32602 with its code.
 */
export function readRefusal(error: AppError, uri: string, revision: Revision, requestId: string): RpcError {
  const notFound = error.status === 404;
  const rpcCode = notFound && revision !== '2026-07-28' ? rpcCodes.resourceNotFound : rpcCodes.invalidParams;
  return new RpcError(rpcCode, notFound ? 'Resource not found' : (error.detail ?? error.code), {
    data: { uri, code: error.code, status: error.status, requestId, ...error.extensions },
  });
}

type ResourceCall = { db: DatabasePool; caller: Caller; revision: Revision };

/** resources/read: the note's Markdown, its revision and title in `_meta`. */
export async function readNoteResource({ db, caller, revision }: ResourceCall, uri: unknown) {
  const { mappingId, path } = parseNoteUri(uri);
  try {
    const target = await resolveTarget(db, caller, mappingId, 'read');
    const note = await findNote(db, target.vaultId, validateNotePath(path));
    if (!note) throw new AppError('note_not_found', `No live note at ${path}.`);
    return {
      contents: [{ uri: noteUri(target.mappingId, note.path), mimeType: MARKDOWN, text: note.content, _meta: { revision: note.revision, title: note.title, updatedAt: note.updatedAt } }],
    };
  } catch (error) {
    if (isAppError(error)) throw readRefusal(error, String(uri), revision, caller.requestId);
    throw error;
  }
}

const positionSchema = z.tuple([z.uuid(), z.string()]).transform(([mappingId, path]) => ({ mappingId, path }));

/** resources/list: every note the caller may read, ordered by mapping then path, RESOURCES_PAGE_SIZE at a time. */
export async function listNoteResources({ db, caller }: ResourceCall, cursor: unknown) {
  let after = null;
  if (cursor !== undefined) {
    try {
      if (typeof cursor !== 'string') throw new AppError('invalid_request');
      after = decodeCursor(cursor, positionSchema, '/params/cursor');
    } catch (error) {
      if (!isAppError(error)) throw error;
      throw new RpcError(rpcCodes.invalidParams, 'Invalid cursor: pass back the nextCursor of a previous resources/list.', { data: { cursor } });
    }
  }
  const page = await readableNotesPage(db, caller.accountId, { limit: RESOURCES_PAGE_SIZE, after });
  return {
    resources: page.notes.map((note) => ({ ...noteResource(note.mappingId, note), size: note.size, _meta: { revision: note.revision, updatedAt: note.updatedAt } })),
    ...(page.next ? { nextCursor: encodeCursor([page.next.mappingId, page.next.path]) } : {}),
  };
}
