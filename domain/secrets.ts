// Bearer secrets (personal access tokens, service credentials): 256 bits of randomness behind a
// recognisable prefix, so secret scanners and people can tell what leaked. Only the SHA-256 hex
// digest is stored; with this much entropy a slow password hash buys nothing.
import { createHash, randomBytes } from 'node:crypto';

export const secretPrefixes = {
  accessToken: 'hnp_pat_',
  serviceCredential: 'hnp_svc_',
  /** The reviewer console's session (a cookie) and its CSRF token (domain/console/sessions.ts). */
  consoleSession: 'hnp_ses_',
  consoleCsrf: 'hnp_csrf_',
} as const;

export function generateSecret(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function hashSecret(raw: string): string {
  return createHash('sha256').update(raw, 'utf8').digest('hex');
}

/** What a listing shows: the prefix and the first few random characters. */
export function displayPrefix(raw: string, prefix: string): string {
  return raw.slice(0, prefix.length + 6);
}

export function looksLikeSecret(raw: string, prefix: string): boolean {
  return raw.startsWith(prefix) && /^[A-Za-z0-9_-]{43}$/.test(raw.slice(prefix.length));
}
