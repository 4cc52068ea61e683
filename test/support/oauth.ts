// Helpers for the OAuth tests: an OAuthClientProvider for the official MCP SDK's client (kept in
// memory, as a host keeps it on disk), registration and consent driven over HTTP with a console
// session, and the token endpoint's form posts.
import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import type { ConsoleSession } from './console.ts';

export class MemoryOAuthProvider implements OAuthClientProvider {
  readonly redirectUrl: string;
  readonly clientMetadata: OAuthClientMetadata;
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  lastState = '';
  authorizationUrl: URL | undefined;

  constructor(redirectUrl = 'http://127.0.0.1:8976/callback') {
    this.redirectUrl = redirectUrl;
    this.clientMetadata = {
      client_name: 'SDK test client',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    this.lastState = randomBytes(16).toString('hex');
    return this.lastState;
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const entities: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const unescape = (value: string) => value.replace(/&(amp|lt|gt|quot|#39);/g, (e) => entities[e]!);

/** The hidden fields of the consent page's form, as the browser would post them back. */
export function hiddenFields(page: string): Record<string, string> {
  return Object.fromEntries([...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, unescape(m[2]!)]));
}

export type ConsentChoice = { decision?: 'allow' | 'deny'; scopes?: string[]; mappings?: string[]; headers?: Record<string, string>; csrf?: string | null };

/** Opens the consent page at `authorizationUrl` with the session, then posts the person's choice; the raw answers. */
export async function consentOver(app: FastifyInstance, session: ConsoleSession, authorizationUrl: URL | string, choice: ConsentChoice) {
  const url = new URL(authorizationUrl, 'http://localhost');
  // The Host the client's URL names: the issuer and resource are the request's own origin on loopback.
  const host = url.host;
  const page = await app.inject({ method: 'GET', url: url.pathname + url.search, headers: { cookie: session.cookie, host } });
  if (page.statusCode !== 200) return { page, answer: undefined };
  const form = new URLSearchParams(hiddenFields(page.body));
  if (choice.csrf === null) form.delete('csrf');
  else if (choice.csrf !== undefined) form.set('csrf', choice.csrf);
  for (const scope of choice.scopes ?? []) form.append('granted_scope', scope);
  for (const mapping of choice.mappings ?? []) form.append('mapping', mapping);
  form.set('decision', choice.decision ?? 'allow');
  const answer = await app.inject({
    method: 'POST',
    url: '/console/oauth/authorize',
    headers: { cookie: session.cookie, host, 'content-type': 'application/x-www-form-urlencoded', ...choice.headers },
    payload: form.toString(),
  });
  return { page, answer };
}

/** The redirect's query parameters (code or error, state, iss). */
export function redirectParams(location: string | undefined): URLSearchParams {
  if (!location) throw new Error('no Location');
  return new URL(location).searchParams;
}

export const pkcePair = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** A form post to the token (or revocation) endpoint, on `host` (the issuer's: the loopback origin the client used). */
export function tokenPost(app: FastifyInstance, fields: Record<string, string>, host = 'localhost', url = '/oauth/token') {
  return app.inject({ method: 'POST', url, headers: { host, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString() });
}

export function registerPost(app: FastifyInstance, body: unknown) {
  return app.inject({ method: 'POST', url: '/oauth/register', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
}
