// Bearer authentication for the personal-access-token interfaces (REST, MCP, automation).
// Each interface plugin adds `requireAccessToken(deps, '<interface>')` as its onRequest hook; the
// account's plan and status are read from Postgres on every request.
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { DatabasePool } from 'slonik';
import { AppError } from '../domain/errors.ts';
import { authenticateAccessToken } from '../domain/identity/accounts.ts';
import type { Principal } from '../domain/identity/accounts.ts';
import { assertEntitled } from '../domain/identity/plans.ts';
import type { Interface } from '../domain/identity/plans.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

const challenge = (error?: string) => ({ 'www-authenticate': error ? `Bearer realm="hnp", error="${error}"` : 'Bearer realm="hnp"' });

export async function authenticateRequest(db: DatabasePool, request: FastifyRequest, iface: Interface): Promise<Principal> {
  const raw = bearerToken(request);
  if (!raw) {
    throw new AppError('authentication_required', 'Send Authorization: Bearer <personal access token>.', { headers: challenge() });
  }
  let principal: Principal;
  try {
    principal = await authenticateAccessToken(db, raw);
  } catch (error) {
    if (error instanceof AppError && error.code === 'invalid_token') {
      throw new AppError('invalid_token', undefined, { headers: challenge('invalid_token') });
    }
    throw error;
  }
  assertEntitled(principal.account, iface);
  request.principal = principal;
  return principal;
}

export function requireAccessToken(db: DatabasePool, iface: Interface): onRequestAsyncHookHandler {
  return async (request) => {
    await authenticateRequest(db, request, iface);
  };
}

/** The authenticated principal inside a handler guarded by requireAccessToken. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('authentication_required');
  return request.principal;
}
