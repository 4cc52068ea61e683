// HTTP details shared by the Developer REST routes: which mapping a request names, conditional
// headers, idempotency headers and how an apply result becomes a response.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DatabasePool } from 'slonik';
import { AppError } from '../../../domain/errors.ts';
import { fingerprintOf, requireIdempotencyKey } from '../../../domain/idempotency.ts';
import type { IdempotencyScope } from '../../../domain/idempotency.ts';
import { resolveMappingForAccount } from '../../../domain/identity/vaults.ts';
import type { VaultAccess } from '../../../domain/identity/vaults.ts';
import { etagOf, parseRevision } from '../../../domain/notes/markdown.ts';
import type { ApplyResult, Target } from '../../../domain/notes/knowledge.ts';
import type { Provenance } from '../../../domain/notes/store.ts';
import { principalOf } from '../../auth.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The mapping named by the body/query and/or the X-Service-Mapping header; they must agree. */
export function requestedMappingId(request: FastifyRequest, fromInput: string | undefined): string {
  const fromHeader = header(request, 'x-service-mapping')?.trim();
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

export async function resolveTarget(db: DatabasePool, request: FastifyRequest, mappingId: string, access: VaultAccess): Promise<Target> {
  const resolved = await resolveMappingForAccount(db, mappingId, principalOf(request).account.id, access);
  return { vaultId: resolved.vaultId, mappingId: resolved.mappingId };
}

/** Conditional headers of a write or delete, as sent. `ifMatchAny` is `If-Match: *`. */
type RequestPreconditions = { ifMatch: string | undefined; ifMatchAny: boolean; ifNoneMatchAny: boolean };

export function preconditionHeaders(request: FastifyRequest): RequestPreconditions {
  const ifMatch = header(request, 'if-match');
  const ifNoneMatch = header(request, 'if-none-match');
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

export function idempotencyFor(request: FastifyRequest, route: string, mappingId: string, payload: unknown): IdempotencyScope {
  return {
    accountId: principalOf(request).account.id,
    route,
    scope: mappingId,
    key: requireIdempotencyKey(header(request, 'idempotency-key')),
    fingerprint: fingerprintOf(payload),
  };
}

export function provenanceOf(request: FastifyRequest, idempotencyKey: string | null): Provenance {
  return { actor: { type: 'account', id: principalOf(request).account.id }, source: 'rest', requestId: request.id, idempotencyKey };
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
  const accept = header(request, 'accept');
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
  const ifNoneMatch = header(request, 'if-none-match');
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '').replace(/^"|"$/g, '') === revision);
}
