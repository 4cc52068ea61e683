// Bearer secrets (personal access tokens, service credentials): 256 bits of randomness behind a
// recognisable prefix, so secret scanners and people can tell what leaked. Only the SHA-256 hex
// digest is stored; with this much entropy a slow password hash buys nothing.
import { hash, randomBytes } from 'node:crypto';

export const secretPrefixes = {
  accessToken: 'hnp_pat_',
  serviceCredential: 'hnp_svc_',
  /** The reviewer console's session (a cookie) and its CSRF token (domain/console/sessions.ts). */
  consoleSession: 'hnp_ses_',
  consoleCsrf: 'hnp_csrf_',
  /** OAuth 2.1 for /api/mcp (domain/oauth/): client ids, authorization codes, access and refresh tokens. */
  oauthClientId: 'hnp_cid_',
  oauthCode: 'hnp_oac_',
  oauthAccessToken: 'hnp_oat_',
  oauthRefreshToken: 'hnp_ort_',
} as const;

export function generateSecret(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

// Every authenticated request hashes its credential: the one-shot digest is about half the cost of a
// createHash object (~1 µs against ~2 µs on this machine).
export function hashSecret(raw: string): string {
  return hash('sha256', raw, 'hex');
}

/** What a listing shows: the prefix and the first few random characters. */
export function displayPrefix(raw: string, prefix: string): string {
  return raw.slice(0, prefix.length + 6);
}

export function looksLikeSecret(raw: string, prefix: string): boolean {
  return raw.startsWith(prefix) && /^[A-Za-z0-9_-]{43}$/.test(raw.slice(prefix.length));
}
