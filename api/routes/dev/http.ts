// HTTP details of the Developer REST routes only: which mapping a request names, conditional
// headers, content negotiation and how an apply result becomes a response. What REST shares with
// MCP (target, idempotency, provenance, events paging) is in ../shared/vault-calls.ts.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../domain/errors.ts';
import { etagOf, parseRevision } from '../../../domain/notes/markdown.ts';
import type { ApplyResult } from '../../../domain/notes/knowledge.ts';
import { headerValue } from '../shared/headers.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The mapping named by the body/query and/or the X-Service-Mapping header; they must agree. */
export function requestedMappingId(request: FastifyRequest, fromInput: string | undefined): string {
  const fromHeader = headerValue(request, 'x-service-mapping')?.trim();
  if (fromHeader !== undefined && !UUID.test(fromHeader)) {
    throw new AppError('invalid_request', 'X-Service-Mapping must be a UUID.', { extensions: { errors: [{ pointer: '/headers/x-service-mapping', message: 'not a UUID' }] } });
  }
  if (fromHeader && fromInput && fromHeader.toLowerCase() !== fromInput.toLowerCase()) throw new AppError('mapping_mismatch');
  const mappingId = fromInput ?? fromHeader;
  if (!mappingId) {
    throw new AppError('invalid_request', 'Send mappingId, or the X-Service-Mapping header.', { extensions: { errors: [{ pointer: '/body/mappingId', message: 'required' }] } });
  }
  return mappingId.toLowerCase();
}

/** Conditional headers of a write or delete, as sent. `ifMatchAny` is `If-Match: *`. */
type RequestPreconditions = { ifMatch: string | undefined; ifMatchAny: boolean; ifNoneMatchAny: boolean };

export function preconditionHeaders(request: FastifyRequest): RequestPreconditions {
  const ifMatch = headerValue(request, 'if-match');
  const ifNoneMatch = headerValue(request, 'if-none-match');
  if (ifNoneMatch !== undefined && ifNoneMatch.trim() !== '*') {
    throw new AppError('invalid_request', 'On writes, If-None-Match accepts only * (create-only).', { extensions: { errors: [{ pointer: '/headers/if-none-match', message: 'only * is supported' }] } });
  }
  const ifMatchAny = ifMatch !== undefined && ifMatch.trim() === '*';
  return {
    ifMatch: ifMatch === undefined || ifMatchAny ? undefined : parseRevision(ifMatch, '/headers/if-match'),
    ifMatchAny,
    ifNoneMatchAny: ifNoneMatch !== undefined,
  };
}

/** expectedHash and If-Match are the same token; if both are sent they must agree. */
export function mergeRevisionInputs(expectedHash: string | undefined, ifMatch: string | undefined, pointer = '/body/expectedHash'): string | undefined {
  const parsed = expectedHash === undefined ? undefined : parseRevision(expectedHash, pointer);
  if (parsed !== undefined && ifMatch !== undefined && parsed !== ifMatch) {
    throw new AppError('invalid_request', 'expectedHash and If-Match name different revisions.', { extensions: { errors: [{ pointer, message: 'disagrees with If-Match' }] } });
  }
  return parsed;
}

export function sendApplied<T>(reply: FastifyReply, result: ApplyResult<T>, location?: (body: T) => string | null): T {
  reply.code(result.status);
  const url = result.status === 201 && location ? location(result.body) : null;
  if (url) reply.header('location', url);
  if (result.etag) reply.header('etag', etagOf(result.etag));
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return result.body;
}

/**
 * The URL of a note on the single-note routes (exactly two segments), or null for a note at
 * another depth, which no single-note URL addresses.
 */
export function noteUrl(prefix: string, mappingId: string, path: string): string | null {
  const segments = path.split('/');
  if (segments.length !== 2) return null;
  return `${prefix}/notes/${segments.map(encodeURIComponent).join('/')}?mappingId=${encodeURIComponent(mappingId)}`;
}

/** Whether the client prefers text/markdown over JSON (the only two representations we serve). */
export function prefersMarkdown(request: FastifyRequest): boolean {
  const accept = headerValue(request, 'accept');
  if (!accept) return false;
  let markdown = -1;
  let json = -1;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().split(';');
    const q = Number(params.map((p) => p.trim()).find((p) => p.startsWith('q='))?.slice(2) ?? '1');
    const mediaType = type?.trim().toLowerCase();
    if (mediaType === 'text/markdown') markdown = Math.max(markdown, q);
    if (mediaType === 'application/json') json = Math.max(json, q);
  }
  return markdown > 0 && markdown >= json;
}

/** If-None-Match on reads: `*` or any listed tag (weak comparison) matching the current revision. */
export function notModified(request: FastifyRequest, revision: string): boolean {
  const ifNoneMatch = headerValue(request, 'if-none-match');
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '').replace(/^"|"$/g, '') === revision);
}
