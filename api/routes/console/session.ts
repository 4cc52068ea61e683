// The HTTP side of console sessions: the cookie, admission of every page request through
// domain/principals/admission.ts (judged and charged as the automation gateway), and the checks
// every state-changing request passes: same origin and this session's CSRF token.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DatabasePool } from 'slonik';
import type { AllowanceLeases } from '../../../domain/allowance-lease.ts';
import { checkCsrf, cookieAttributes, csrfTokenFor, sessionCookieName } from '../../../domain/console/sessions.ts';
import type { SignedIn } from '../../../domain/console/sessions.ts';
import { AppError } from '../../../domain/errors.ts';
import type { Principal } from '../../../domain/identity/accounts.ts';
import { admitConsoleSession } from '../../../domain/principals/admission.ts';
import { rateLimitHeaders } from '../../../domain/usage.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session this request was admitted with (api/routes/console/session.ts). */
    consoleSession: { secret: string; id: string; expiresAt: string; csrfToken: string } | null;
  }
  interface FastifyContextConfig {
    /** A console route reachable without a session (sign-in, sign-out, the assets). */
    consolePublic?: boolean;
  }
}

export type SessionDeps = { db: DatabasePool; leases: AllowanceLeases; publicBaseUrl: string | undefined };

/** The session cookie's value, if one was sent. */
export const sessionSecretOf = (request: FastifyRequest): string | undefined => request.cookies[sessionCookieName];

/**
 * Admits the request's session (charged as one automation request; RateLimit headers published)
 * and records it on the request; no or a dead session is `session_invalid`.
 */
export async function admitSession(request: FastifyRequest, reply: FastifyReply, deps: SessionDeps, options: { charge?: boolean } = {}): Promise<Principal> {
  const secret = sessionSecretOf(request);
  if (!secret) throw new AppError('session_invalid', 'Sign in to use the reviewer console.');
  const admitted = await admitConsoleSession(deps.db, { sessionSecret: secret, leases: deps.leases, charge: options.charge ?? true });
  request.principal = { tokenId: admitted.tokenId, account: admitted.account };
  request.consoleSession = { secret, id: admitted.sessionId, expiresAt: admitted.sessionExpiresAt, csrfToken: csrfTokenFor(secret) };
  if (admitted.usage) reply.headers(rateLimitHeaders(admitted.usage));
  return request.principal;
}

/** The console's own origin: PUBLIC_BASE_URL's when configured (behind a proxy), else the one this request reached. */
export function ownOrigin(request: FastifyRequest, publicBaseUrl: string | undefined): string {
  return publicBaseUrl ? new URL(publicBaseUrl).origin : `${request.protocol}://${request.host}`;
}

/** Whether the session cookie must be Secure: when the console is served over HTTPS. */
export const servedOverHttps = (request: FastifyRequest, publicBaseUrl: string | undefined) => (publicBaseUrl ? publicBaseUrl.startsWith('https:') : request.protocol === 'https');

/**
 * A state-changing request must come from the console's own pages: a browser's Origin (or, when a
 * browser sends none, Sec-Fetch-Site) names this origin, and, once signed in, the form carries the
 * session's CSRF token. SameSite=Strict already keeps the cookie off cross-site requests; these
 * checks hold even for a browser that ignores it, and sign-in (no session yet) rests on the first.
 */
export function requireSameOrigin(request: FastifyRequest, publicBaseUrl: string | undefined): void {
  const origin = request.headers.origin;
  const site = request.headers['sec-fetch-site'];
  if (origin === ownOrigin(request, publicBaseUrl)) return;
  if (origin === undefined && (site === undefined || site === 'same-origin' || site === 'none')) return;
  throw new AppError('csrf_check_failed', 'This request came from another site; the console accepts changes only from its own pages.');
}

export function requireCsrf(request: FastifyRequest, presented: string | undefined): void {
  const session = request.consoleSession;
  if (!session || !checkCsrf(session.secret, presented)) {
    throw new AppError('csrf_check_failed', "The form did not carry this session's CSRF token; reload the page and try again.");
  }
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, signedIn: SignedIn, publicBaseUrl: string | undefined): void {
  const seconds = (Date.parse(signedIn.session.expiresAt) - Date.now()) / 1000;
  reply.setCookie(sessionCookieName, signedIn.sessionSecret, cookieAttributes({ secure: servedOverHttps(request, publicBaseUrl), maxAgeSeconds: seconds }));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply, publicBaseUrl: string | undefined): void {
  reply.setCookie(sessionCookieName, '', cookieAttributes({ secure: servedOverHttps(request, publicBaseUrl), maxAgeSeconds: 0 }));
}
