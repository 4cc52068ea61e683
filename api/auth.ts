// Bearer authentication for the personal-access-token interfaces (REST, MCP, automation). The
// account's plan and status are read from Postgres on every request.
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { DatabasePool } from 'slonik';
import { AppError } from '../domain/errors.ts';
import { authenticateAccessToken } from '../domain/identity/accounts.ts';
import type { Principal } from '../domain/identity/accounts.ts';
import { assertEntitled } from '../domain/identity/plans.ts';
import type { Interface } from '../domain/identity/plans.ts';
import { authenticateWithLease } from '../domain/allowance-lease.ts';
import type { AllowanceLeases } from '../domain/allowance-lease.ts';
import { rateLimitHeaders } from '../domain/usage.ts';
import type { UsageSnapshot } from '../domain/usage.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /**
     * The handler authenticates and charges the request itself, fused into its own query (the hot
     * single-note read); the interface hook then only checks that a bearer token is present.
     */
    authenticatesInHandler?: boolean;
  }
}

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

const challenge = (error?: string) => ({ 'www-authenticate': error ? `Bearer realm="hnp", error="${error}"` : 'Bearer realm="hnp"' });

export function presentedToken(request: FastifyRequest): string {
  const raw = bearerToken(request);
  if (!raw) throw new AppError('authentication_required', 'Send Authorization: Bearer <personal access token>.', { headers: challenge() });
  return raw;
}

export async function withChallenge<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError && error.code === 'invalid_token') throw new AppError('invalid_token', undefined, { headers: challenge('invalid_token') });
    throw error;
  }
}

/** Authenticates and checks the plan for `iface`; counts nothing (MCP counts per operation). */
export async function authenticateRequest(db: DatabasePool, leases: AllowanceLeases, request: FastifyRequest, iface: Interface): Promise<Principal> {
  const raw = presentedToken(request);
  const principal = await withChallenge(() => authenticateAccessToken(db, raw));
  assertEntitled(principal.account, iface, leases.entitlements);
  request.principal = principal;
  return principal;
}

/**
 * onRequest hook of interfaces that count every request (REST, automation): authenticates (one
 * round trip), checks the plan's entitlement to `iface`, charges the allowance `iface` counts
 * against through the process's leases (in memory but for a periodic block reservation), and
 * publishes the RateLimit headers.
 */
export function requireAccessTokenAndAllowance(db: DatabasePool, leases: AllowanceLeases, iface: 'rest' | 'automation'): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const raw = presentedToken(request);
    if (request.routeOptions.config.authenticatesInHandler) return;
    const { usage, ...principal } = await withChallenge(() => authenticateWithLease(db, raw, iface, leases));
    acceptCharged(request, reply, principal, usage);
  };
}

/** Records the authenticated principal and publishes the RateLimit and RateLimit-Policy headers. */
export function acceptCharged(request: FastifyRequest, reply: FastifyReply, principal: Principal, usage: UsageSnapshot): void {
  request.principal = principal;
  reply.headers(rateLimitHeaders(usage));
}

/** The authenticated principal inside a handler of an interface that authenticates in its hook. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('authentication_required');
  return request.principal;
}
