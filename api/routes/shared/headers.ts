// Request headers, read one way by every interface. A request header arrives as one string: Node
// joins a repeated header with ", " (only Set-Cookie becomes a list), and the edge refuses a second
// value of a single-valued header such as Idempotency-Key (api/edge.ts), so there is no list to pick from.
import type { FastifyRequest } from 'fastify';
import { requireIdempotencyKey } from '../../../domain/idempotency.ts';

export function headerValue(request: Pick<FastifyRequest, 'headers'>, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** The raw Idempotency-Key of a request that needs one; `idempotencyScope` validates it. */
export const idempotencyKeyHeader = (request: Pick<FastifyRequest, 'headers'>) => headerValue(request, 'idempotency-key');

/** An optional Idempotency-Key (recommended, not required): null when absent, validated like everywhere else when sent. */
export function optionalIdempotencyKey(request: Pick<FastifyRequest, 'headers'>): string | null {
  const raw = idempotencyKeyHeader(request);
  return raw === undefined ? null : requireIdempotencyKey(raw);
}
