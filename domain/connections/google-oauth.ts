// Google's OAuth 2.0 authorization-code flow with PKCE (S256), through google-auth-library's
// OAuth2Client pointed at the configured endpoints (its `endpoints` option: Google in production, the
// loopback double in tests). Also the pieces the Drive and Classroom modules share: how a failed
// Google call becomes a typed error, and the bounded-input error.
//
// Nothing a provider says passes through: failures become stable codes, and no error carries a token,
// a code, the client secret or the provider's text (the library's own errors hold the request, with
// its Authorization header and form body, so they are never attached as a cause).
import { createHash, randomBytes } from 'node:crypto';
import { CodeChallengeMethod, OAuth2Client } from 'google-auth-library';
import { GOOGLE_SCOPES, OAuthProviderError } from './provider.ts';
import type { GoogleClientSettings, OAuthProvider, OAuthTokens } from './provider.ts';

/** A PKCE pair (RFC 7636, S256): the verifier stays with the attempt, the challenge goes in the URL. */
export function newPkcePair(): { verifier: string; challenge: string } {
  // 32 random bytes → 43 base64url characters, the shortest verifier RFC 7636 allows, 256 bits.
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A single-use `state`: 256 random bits, base64url. */
export function newState(): string {
  return randomBytes(32).toString('base64url');
}

const allowedScopes = new Set(Object.values(GOOGLE_SCOPES).flat());
const base64url43 = /^[A-Za-z0-9_-]{43,128}$/;

/** Library options shared by every client we build: our timeout, one attempt, no SDK debug logging. */
export function transporterSettings(settings: GoogleClientSettings) {
  return {
    // The library's default interceptors only add debug logging (of token responses and request
    // URLs, when GOOGLE_SDK_NODE_LOGGING is set) and client headers: leave them out.
    useAuthRequestParameters: false,
    // One attempt per call: a dropped code exchange may already have used the single-use code, and
    // the caller's activity owns retries (it sees the typed failure).
    transporterOptions: { timeout: settings.timeoutMs, retry: false, retryConfig: { retry: 0, noResponseRetries: 0 } },
  };
}

export function createGoogleOAuthProvider(settings: GoogleClientSettings): OAuthProvider {
  const client = () =>
    new OAuth2Client({
      clientId: settings.clientId,
      clientSecret: settings.clientSecret,
      endpoints: {
        oauth2AuthBaseUrl: settings.endpoints.authorizeUrl,
        oauth2TokenUrl: settings.endpoints.tokenUrl,
        oauth2RevokeUrl: settings.endpoints.revokeUrl,
      },
      ...transporterSettings(settings),
    });

  return {
    authorizationUrl({ state, codeChallenge, redirectUri, scopes }) {
      if (!base64url43.test(state)) throw new RangeError('state must be base64url, at least 256 bits');
      if (!base64url43.test(codeChallenge)) throw new RangeError('codeChallenge must be an S256 challenge (base64url)');
      if (!URL.canParse(redirectUri)) throw new RangeError('redirectUri must be an absolute URL');
      if (scopes.length === 0 || scopes.some((s) => !allowedScopes.has(s))) throw new RangeError('scopes must be among GOOGLE_SCOPES');
      return client().generateAuthUrl({
        response_type: 'code',
        redirect_uri: redirectUri,
        scope: [...scopes],
        state,
        code_challenge: codeChallenge,
        code_challenge_method: CodeChallengeMethod.S256,
        // A refresh token on every consent (Google sends one only with offline access and a prompt).
        access_type: 'offline',
        prompt: 'consent',
        // No include_granted_scopes: a grant never widens beyond what this attempt asked for.
      });
    },

    async exchangeCode({ code, codeVerifier, redirectUri }) {
      try {
        const { tokens } = await client().getToken({ code, codeVerifier, redirect_uri: redirectUri });
        return toTokens(tokens);
      } catch (error) {
        throw oauthFailure(error);
      }
    },

    async refresh(refreshToken) {
      const oauth = client();
      oauth.setCredentials({ refresh_token: refreshToken });
      // The library copies the old refresh token into its result; the 'tokens' event (its documented
      // way to learn of a new one) shows what Google actually sent.
      let sent: { refresh_token?: string | null } = {};
      oauth.on('tokens', (tokens) => (sent = { ...tokens }));
      try {
        const { credentials } = await oauth.refreshAccessToken();
        return toTokens({ ...credentials, refresh_token: sent.refresh_token ?? null });
      } catch (error) {
        throw oauthFailure(error);
      }
    },

    async revoke(token) {
      const oauth = client();
      try {
        // The token goes in the form body (Google accepts either), not the query string the
        // library's revokeToken uses: URLs end up in proxy and access logs.
        await oauth.transporter.request({
          method: 'POST',
          url: String(oauth.endpoints.oauth2RevokeUrl),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          data: new URLSearchParams({ token }).toString(),
        });
      } catch (error) {
        const failure = inspectFailure(error);
        // Google answers 400 invalid_token for a token already revoked or expired: the goal holds.
        if (failure.status === 400 && errorField(failure.data) === 'invalid_token') return;
        throw oauthFailure(error);
      }
    },
  };
}

function toTokens(tokens: { access_token?: string | null; refresh_token?: string | null; expiry_date?: number | null; scope?: string | null }): OAuthTokens {
  if (!tokens.access_token || typeof tokens.expiry_date !== 'number' || typeof tokens.scope !== 'string') {
    throw new OAuthProviderError('provider_error');
  }
  return {
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token ?? null,
    expiresAt: new Date(tokens.expiry_date).toISOString(),
    grantedScopes: tokens.scope.split(' ').filter(Boolean),
  };
}

function oauthFailure(error: unknown): OAuthProviderError {
  if (error instanceof OAuthProviderError) return error;
  const failure = inspectFailure(error);
  if (failure.status === null) return new OAuthProviderError(failure.transport === 'timeout' ? 'provider_timeout' : 'provider_unreachable');
  const code = errorField(failure.data);
  // redirect_uri_mismatch at the token endpoint: the code was issued for another redirect (RFC 6749 calls that invalid_grant).
  if (failure.status === 400 && (code === 'invalid_grant' || code === 'redirect_uri_mismatch')) return new OAuthProviderError('provider_invalid_grant', 400);
  if (failure.status === 401 || code === 'invalid_client' || code === 'unauthorized_client') return new OAuthProviderError('provider_invalid_client', failure.status);
  return new OAuthProviderError('provider_error', failure.status);
}

function errorField(data: unknown): string | null {
  if (data && typeof data === 'object' && 'error' in data && typeof data.error === 'string') return data.error;
  return null;
}

// --- shared by the Drive and Classroom modules ---

/** An access token and where Google lives: what every Drive and Classroom call takes. */
export type GoogleAccess = { settings: GoogleClientSettings; accessToken: string };

/** What a failed call through the Google clients amounts to, without the request it carried. */
export type CallFailure =
  | { status: number; data: unknown; transport: null }
  /** No answer: `refused` means nothing reached the provider; `timeout` and `cut` may have been applied. */
  | { status: null; data: null; transport: 'timeout' | 'refused' | 'cut' };

// How the installed clients say "no answer in time" (read from their code, not their messages):
// - gaxios 8 (@googleapis/drive's googleapis-common 9, google-auth-library 11: Drive and OAuth)
//   attaches `AbortSignal.timeout(timeout)` to every request and, when it fires, sets the
//   GaxiosError's `code` to 'TimeoutError' ('AbortError' for any other abort of the signal).
// - gaxios 7 (googleapis-common 8, which @googleapis/classroom uses) attaches the same signal but
//   sets no code: node-fetch rejects with its own AbortError (`name` 'AbortError', `type` 'aborted'),
//   which gaxios keeps as the `cause`. This is the one the classification used to miss (a Classroom
//   call past GOOGLE_TIMEOUT_MS answered 502 connection_provider_error).
// - Both keep the request's options as `config`, its AbortSignal included: a signal whose `reason`
//   is a TimeoutError DOMException means the deadline passed, whatever error the transport then
//   surfaced (an ECONNRESET or a premature close while the call hung).
// - A body read as a stream (Drive export) fails with node-fetch's AbortError itself, no GaxiosError.
// - A native fetch or undici (a future gaxios) rejects with a DOMException TimeoutError/AbortError
//   (gaxios copies its `name` into `code`) or an undici `UND_ERR_*_TIMEOUT` code.
// These clients are aborted only by their deadline (nothing here cancels a call otherwise), so an
// abort is a timeout. A system ETIMEDOUT is one too. A refused connection or an unknown host never
// reached Google; any other cut (ECONNRESET before the deadline, EPIPE) stays a failure, not a timeout.
const TIMEOUT_CODES = new Set(['TimeoutError', 'AbortError', 'ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const REFUSED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

type ErrorLike = { response?: { status?: unknown; data?: unknown }; code?: unknown; name?: unknown; type?: unknown; cause?: unknown; config?: { signal?: unknown } };

/** The error and its causes (a GaxiosError → node-fetch's error → the system error), at most four deep. */
function errorChain(error: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  for (let e = error; e && typeof e === 'object' && chain.length < 4 && !chain.includes(e as ErrorLike); e = (e as ErrorLike).cause) chain.push(e as ErrorLike);
  return chain;
}

/** Whether the request's own AbortSignal (gaxios' `config.signal`) fired because its deadline passed. */
function deadlinePassed(e: ErrorLike): boolean {
  const signal = e.config?.signal;
  if (!(signal instanceof AbortSignal) || !signal.aborted) return false;
  const reason: unknown = signal.reason;
  return reason instanceof Error && reason.name === 'TimeoutError';
}

/** Reads a gaxios error (either major version the clients bundle) by its properties, never its message. */
export function inspectFailure(error: unknown): CallFailure {
  const chain = errorChain(error);
  const e = chain[0] ?? {};
  if (e.response && typeof e.response.status === 'number') return { status: e.response.status, data: e.response.data ?? null, transport: null };
  const codes = chain.flatMap((link) => [link.code, link.name]).filter((c): c is string => typeof c === 'string');
  const aborted = chain.some((link) => link.type === 'aborted'); // node-fetch's AbortError
  if (chain.some(deadlinePassed) || aborted || codes.some((c) => TIMEOUT_CODES.has(c))) return { status: null, data: null, transport: 'timeout' };
  if (codes.some((c) => REFUSED_CODES.has(c))) return { status: null, data: null, transport: 'refused' };
  return { status: null, data: null, transport: 'cut' };
}

export type GoogleApiFailureCode =
  | 'provider_unauthorized' // the access token is expired or revoked: refresh, or the connection is gone
  | 'provider_forbidden' // a scope was not granted, or the file or course is not the user's to use
  | 'provider_not_found'
  | 'provider_rate_limited'
  | 'provider_error'
  | 'provider_unreachable'
  | 'provider_timeout';

export class GoogleApiError extends Error {
  readonly code: GoogleApiFailureCode;
  readonly status: number | null;
  /** The call may have taken effect at Google (no answer, or a 5xx to a write): reconcile before retrying. */
  readonly maybeApplied: boolean;

  constructor(code: GoogleApiFailureCode, status: number | null, maybeApplied: boolean) {
    super(`Google API call failed: ${code}${status === null ? '' : ` (${status})`}`);
    this.name = 'GoogleApiError';
    this.code = code;
    this.status = status;
    this.maybeApplied = maybeApplied;
  }
}

/** A failed Drive or Classroom call as a typed error; `write` says whether the call changes something. */
export function googleApiError(error: unknown, write: boolean): GoogleApiError {
  if (error instanceof GoogleApiError) return error;
  const failure = inspectFailure(error);
  if (failure.status === null) {
    if (failure.transport === 'refused') return new GoogleApiError('provider_unreachable', null, false);
    return new GoogleApiError(failure.transport === 'timeout' ? 'provider_timeout' : 'provider_unreachable', null, write);
  }
  const { status } = failure;
  if (status === 401) return new GoogleApiError('provider_unauthorized', status, false);
  if (status === 403) return new GoogleApiError(isRateLimit(failure.data) ? 'provider_rate_limited' : 'provider_forbidden', status, false);
  if (status === 404) return new GoogleApiError('provider_not_found', status, false);
  if (status === 429) return new GoogleApiError('provider_rate_limited', status, false);
  return new GoogleApiError('provider_error', status, write && status >= 500);
}

/** Drive answers some quota refusals as 403 with a rate-limit reason. */
function isRateLimit(data: unknown): boolean {
  const errors = (data as { error?: { errors?: { reason?: unknown }[] } } | null)?.error?.errors ?? [];
  return errors.some((e) => typeof e.reason === 'string' && /rateLimitExceeded|userRateLimitExceeded/.test(e.reason));
}

/** An input outside the bounds a Google round trip accepts (names, sizes, page sizes, identifiers). */
export class GoogleInputError extends RangeError {
  readonly code = 'invalid_input';
  readonly field: string;

  constructor(field: string, rule: string) {
    super(`${field}: ${rule}`);
    this.name = 'GoogleInputError';
    this.field = field;
  }
}
