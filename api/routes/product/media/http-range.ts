// Conditional and ranged reads of stored media (RFC 9110 §13 and §14), with `range-parser` (jshttp,
// as Express's `send` uses) for the Range header itself. Audio players seek with single ranges;
// a multi-range request is answered with the whole object, which the RFC allows.
import type { FastifyRequest } from 'fastify';
import parseRange from 'range-parser';
import { AppError } from '../../../../domain/errors.ts';
import type { BlobRange } from '../../../../domain/media/blob-store.ts';

/** The strong ETag of stored media: its SHA-256, which identifies the bytes exactly. */
export const mediaEtag = (sha256: string) => `"${sha256}"`;

/** The entity-tags of an If-Match / If-None-Match list (`*` kept as is). */
function entityTags(header: string): string[] {
  return header
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag.length > 0);
}

/** Weak comparison (If-None-Match): W/ is ignored on either side. */
const weakMatch = (tag: string, etag: string) => tag === '*' || tag.replace(/^W\//, '') === etag;

export type ReadDecision = { kind: 'not-modified' } | { kind: 'whole' } | { kind: 'range'; range: BlobRange };

/**
 * What a GET (or HEAD) of media with this ETag and size answers: If-Match first (412 when none
 * matches, strong comparison), then If-None-Match (304), then Range (206, 416, or ignored when
 * malformed, multiple, or when If-Range names another ETag).
 */
export function decideRead(request: FastifyRequest, etag: string, size: number): ReadDecision {
  const ifMatch = request.headers['if-match'];
  if (typeof ifMatch === 'string' && !entityTags(ifMatch).some((tag) => tag === '*' || tag === etag)) {
    throw new AppError('precondition_failed', 'If-Match names no current ETag of this media.');
  }
  const ifNoneMatch = request.headers['if-none-match'];
  if (typeof ifNoneMatch === 'string' && entityTags(ifNoneMatch).some((tag) => weakMatch(tag, etag))) return { kind: 'not-modified' };

  const header = request.headers.range;
  if (typeof header !== 'string') return { kind: 'whole' };
  // If-Range with a date or another ETag: the representation may have changed, send it whole.
  const ifRange = request.headers['if-range'];
  if (typeof ifRange === 'string' && ifRange.trim() !== etag) return { kind: 'whole' };
  const ranges = parseRange(size, header, { combine: true });
  if (ranges === -2) return { kind: 'whole' }; // malformed: ignored, as RFC 9110 §14.2 allows
  if (ranges === -1 || ranges.type !== 'bytes') {
    if (ranges !== -1) return { kind: 'whole' }; // another unit
    throw new AppError('range_not_satisfiable', `The media has ${size} bytes; no requested range starts inside it.`, {
      headers: { 'content-range': `bytes */${size}` },
      extensions: { sizeBytes: size },
    });
  }
  if (ranges.length !== 1) return { kind: 'whole' };
  const [only] = ranges;
  return { kind: 'range', range: { start: only!.start, end: only!.end } };
}
