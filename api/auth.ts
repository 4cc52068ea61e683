// The HTTP side of admission (domain/principals/admission.ts) for the interfaces a personal access
// token reaches (REST, MCP, automation): the bearer header and its challenge, admitting a request
// and recording what was admitted, the hook of the interfaces that charge every request, and where
// a handler finds its principal.
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { DatabasePool } from 'slonik';
import { AppError } from '../domain/errors.ts';
import type { Principal } from '../domain/identity/accounts.ts';
import type { Interface } from '../domain/identity/plans.ts';
import type { AllowanceLeases } from '../domain/allowance-lease.ts';
import { admitAccessToken } from '../domain/principals/admission.ts';
import { rateLimitHeaders } from '../domain/usage.ts';
import type { UsageSnapshot } from '../domain/usage.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /**
     * The handler admits the request itself, fused into its own statement (the hot single-note
     * read); the interface hook then only checks that a bearer token is present.
     */
    admitsInHandler?: boolean;
  }
}

/** What an interface admits with: the app's pool and its allowance leases (with the plans table). */
export type AdmissionDeps = { db: DatabasePool; leases: AllowanceLeases };

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

/** Adds the Bearer challenge to an `invalid_token` refusal (RFC 6750). */
export async function withChallenge<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError && error.code === 'invalid_token') throw new AppError('invalid_token', undefined, { headers: challenge('invalid_token') });
    throw error;
  }
}

/**
 * Admits the request's bearer token to `iface` and records it: charged (one request, RateLimit
 * headers published) unless `charge: false`, for an answer that consumes nothing.
 */
export async function admitRequest(request: FastifyRequest, reply: FastifyReply, deps: AdmissionDeps, iface: Interface, options: { charge?: boolean } = {}): Promise<void> {
  const token = presentedToken(request);
  const admission = { token, iface, leases: deps.leases };
  if (options.charge === false) {
    request.principal = await withChallenge(() => admitAccessToken(deps.db, { ...admission, charge: false }));
    return;
  }
  const { usage, ...principal } = await withChallenge(() => admitAccessToken(deps.db, admission));
  acceptCharged(request, reply, principal, usage);
}

/**
 * onRequest hook of the interfaces that charge every request (REST `rest`, the automation gateway
 * `automation`). A route whose handler admits fused (`admitsInHandler`) is only checked for
 * a bearer token here.
 */
export function admitEveryRequest(deps: AdmissionDeps, iface: 'rest' | 'automation'): onRequestAsyncHookHandler {
  return async (request, reply) => {
    if (request.routeOptions.config.admitsInHandler) {
      presentedToken(request);
      return;
    }
    await admitRequest(request, reply, deps, iface);
  };
}

/** Records a charged admission: the principal, and the RateLimit and RateLimit-Policy headers. */
export function acceptCharged(request: FastifyRequest, reply: FastifyReply, principal: Principal, usage: UsageSnapshot): void {
  request.principal = principal;
  reply.headers(rateLimitHeaders(usage));
}

/** The admitted principal inside a handler. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('authentication_required');
  return request.principal;
}
