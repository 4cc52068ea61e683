// Drive round trips over an access token, through @googleapis/drive pointed at the configured root
// (Google in production, the loopback double in tests). Token refresh is the caller's job: a
// `provider_unauthorized` failure means refresh and call again.
//
// Only `drive.file` is ever granted, so these reach only files this service created or the person
// opened with it. Writes are retry-safe (a create reuses an id reserved under the caller's
// Idempotency-Key) and conflict-checked (an update names the version it last saw).
import { auth, drive } from '@googleapis/drive';
import type { drive_v3 } from '@googleapis/drive';
import { GoogleApiError, GoogleInputError, googleApiError, inspectFailure, transporterSettings } from './google-oauth.ts';
import type { GoogleAccess } from './google-oauth.ts';

export const GOOGLE_DOC_MIME = 'application/vnd.google-apps.document';

export const DRIVE_LIMITS = {
  nameChars: 200,
  markdownBytes: 1024 * 1024,
  /** The most a read may ask for, whatever the caller's own bound. */
  readBytes: 1024 * 1024,
} as const;

/** What the product keeps of a Drive object: its identity and the version it last saw. */
export type DriveLineage = {
  fileId: string;
  name: string;
  mimeType: string;
  /** Drive's monotonically increasing version (an int64 as a decimal string). */
  version: string;
  modifiedTime: string;
};

/** The file changed at Drive since the version the caller saw: nothing was written. */
export class DriveVersionConflictError extends Error {
  readonly code = 'drive_version_conflict';
  readonly current: DriveLineage;

  constructor(current: DriveLineage) {
    super('The Drive file changed since the version given');
    this.name = 'DriveVersionConflictError';
    this.current = current;
  }
}

/** The file's text is larger than the read allows: nothing beyond the bound was kept. */
export class DriveContentTooLargeError extends Error {
  readonly code = 'drive_content_too_large';
  readonly limitBytes: number;

  constructor(limitBytes: number) {
    super(`The Drive file's text exceeds ${limitBytes} bytes`);
    this.name = 'DriveContentTooLargeError';
    this.limitBytes = limitBytes;
  }
}

/** Neither a Google Doc nor a UTF-8 text file: there is no text to read. */
export class DriveUnsupportedFileError extends Error {
  readonly code = 'drive_unsupported_file';

  constructor() {
    super('The Drive file has no readable text (not a Google Doc or a text file)');
    this.name = 'DriveUnsupportedFileError';
  }
}

const LINEAGE_FIELDS = 'id,name,mimeType,version,modifiedTime';
const TEXT_TYPES = ['text/markdown', 'text/plain'];

function client(access: GoogleAccess): drive_v3.Drive {
  const oauth = new auth.OAuth2({ clientId: access.settings.clientId, ...transporterSettings(access.settings) });
  oauth.setCredentials({ access_token: access.accessToken });
  return drive({ version: 'v3', auth: oauth, rootUrl: access.settings.endpoints.driveRootUrl, timeout: access.settings.timeoutMs, retry: false });
}

/** Media uploads build their URL from the per-call rootUrl only (the global one is ignored for them). */
const uploadOptions = (access: GoogleAccess) => ({ rootUrl: access.settings.endpoints.driveRootUrl });

/** Reserves a file id to create under; the caller stores it with its Idempotency-Key before creating. */
export async function reserveFileId(access: GoogleAccess): Promise<string> {
  try {
    const res = await client(access).files.generateIds({ count: 1, space: 'drive', type: 'files' });
    const id = res.data.ids?.[0];
    if (!id) throw new GoogleApiError('provider_error', res.status, false);
    return id;
  } catch (error) {
    throw googleApiError(error, false);
  }
}

/**
 * Creates a Google Doc from Markdown under a reserved id. Retry-safe: if an earlier attempt already
 * created it (Drive answers 409 for an id in use), the existing file's lineage is returned.
 */
export async function createDocument(access: GoogleAccess, input: { fileId: string; name: string; markdown: string }): Promise<DriveLineage> {
  const fileId = checkFileId(input.fileId);
  const name = checkName(input.name);
  const markdown = checkMarkdown(input.markdown);
  try {
    const res = await client(access).files.create(
      { requestBody: { id: fileId, name, mimeType: GOOGLE_DOC_MIME }, media: { mimeType: 'text/markdown', body: markdown }, fields: LINEAGE_FIELDS },
      uploadOptions(access),
    );
    return lineage(res.data, res.status);
  } catch (error) {
    // A reserved id is ours alone, so the file holding it is the one an earlier attempt made.
    if (inspectFailure(error).status === 409) return getLineage(access, fileId);
    throw googleApiError(error, true);
  }
}

export async function getLineage(access: GoogleAccess, fileId: string): Promise<DriveLineage> {
  const id = checkFileId(fileId);
  try {
    const res = await client(access).files.get({ fileId: id, fields: LINEAGE_FIELDS });
    return lineage(res.data, res.status);
  } catch (error) {
    throw googleApiError(error, false);
  }
}

/**
 * Replaces a document's content if, and only if, Drive still has the version the caller last saw;
 * otherwise throws DriveVersionConflictError with the current lineage and writes nothing.
 */
export async function updateDocument(access: GoogleAccess, input: { fileId: string; expectedVersion: string; markdown: string }): Promise<DriveLineage> {
  const fileId = checkFileId(input.fileId);
  const markdown = checkMarkdown(input.markdown);
  if (!/^\d{1,19}$/.test(input.expectedVersion)) throw new GoogleInputError('expectedVersion', 'a Drive version (decimal digits)');
  const current = await getLineage(access, fileId);
  if (current.version !== input.expectedVersion) throw new DriveVersionConflictError(current);
  // The gap: Drive v3 has no conditional write (no If-Match on files.update), so an edit landing
  // between the read above and this PATCH is overwritten (it stays in the file's revision history).
  // The window is one round trip; nothing narrower is possible with this API.
  try {
    const res = await client(access).files.update(
      { fileId, requestBody: {}, media: { mimeType: 'text/markdown', body: markdown }, fields: LINEAGE_FIELDS },
      uploadOptions(access),
    );
    return lineage(res.data, res.status);
  } catch (error) {
    throw googleApiError(error, true);
  }
}

/**
 * A document's text, bounded: a Google Doc exported as Markdown (or plain text), a text file as is.
 * Refuses with DriveContentTooLargeError past `maxBytes` (at most DRIVE_LIMITS.readBytes) without
 * reading the rest.
 */
export async function readDocumentText(
  access: GoogleAccess,
  input: { fileId: string; maxBytes: number; format?: 'markdown' | 'plain' },
): Promise<{ lineage: DriveLineage; text: string; mimeType: string }> {
  const fileId = checkFileId(input.fileId);
  if (!Number.isInteger(input.maxBytes) || input.maxBytes < 1 || input.maxBytes > DRIVE_LIMITS.readBytes) {
    throw new GoogleInputError('maxBytes', `an integer from 1 to ${DRIVE_LIMITS.readBytes}`);
  }
  const api = client(access);
  let meta: drive_v3.Schema$File;
  try {
    meta = (await api.files.get({ fileId, fields: `${LINEAGE_FIELDS},size` })).data;
  } catch (error) {
    throw googleApiError(error, false);
  }
  const current = lineage(meta, 200);
  let mimeType: string;
  let body: AsyncIterable<Uint8Array>;
  try {
    if (current.mimeType === GOOGLE_DOC_MIME) {
      mimeType = input.format === 'plain' ? 'text/plain' : 'text/markdown';
      body = (await api.files.export({ fileId, mimeType }, { responseType: 'stream' })).data;
    } else if (TEXT_TYPES.includes(current.mimeType)) {
      if (Number(meta.size ?? 0) > input.maxBytes) throw new DriveContentTooLargeError(input.maxBytes);
      mimeType = current.mimeType;
      body = (await api.files.get({ fileId, alt: 'media' }, { responseType: 'stream' })).data;
    } else {
      throw new DriveUnsupportedFileError();
    }
  } catch (error) {
    if (error instanceof DriveContentTooLargeError || error instanceof DriveUnsupportedFileError) throw error;
    throw googleApiError(error, false);
  }
  const bytes = await readBounded(body, input.maxBytes);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new DriveUnsupportedFileError();
  }
  return { lineage: current, text, mimeType };
}

/** Reads at most `maxBytes`, stopping (and closing the stream) as soon as there is more. */
async function readBounded(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body) {
      total += chunk.byteLength;
      // Leaving the loop early closes the stream and its connection.
      if (total > maxBytes) throw new DriveContentTooLargeError(maxBytes);
      parts.push(Buffer.from(chunk));
    }
  } catch (error) {
    if (error instanceof DriveContentTooLargeError) throw error;
    throw googleApiError(error, false);
  }
  return Buffer.concat(parts);
}

function lineage(file: drive_v3.Schema$File, status: number): DriveLineage {
  const { id, name, mimeType, version, modifiedTime } = file;
  if (!id || typeof name !== 'string' || !mimeType || !version || !modifiedTime) throw new GoogleApiError('provider_error', status, false);
  return { fileId: id, name, mimeType, version, modifiedTime };
}

function checkFileId(fileId: string): string {
  if (!/^[A-Za-z0-9_-]{10,128}$/.test(fileId)) throw new GoogleInputError('fileId', 'a Drive file id');
  return fileId;
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || [...trimmed].length > DRIVE_LIMITS.nameChars || /[\u0000-\u001f\u007f]/.test(trimmed)) {
    throw new GoogleInputError('name', `1 to ${DRIVE_LIMITS.nameChars} characters, no control characters`);
  }
  return trimmed;
}

function checkMarkdown(markdown: string): string {
  if (Buffer.byteLength(markdown, 'utf8') > DRIVE_LIMITS.markdownBytes) throw new GoogleInputError('markdown', `at most ${DRIVE_LIMITS.markdownBytes} bytes`);
  return markdown;
}
