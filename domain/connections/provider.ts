// The contract between the delegated-connection lifecycle (attempt workflow, connection records,
// sealed tokens) and the identity provider it talks to (Google's OAuth 2.0 endpoints, or the
// scripted loopback double in tests). The lifecycle never sees an HTTP client; the provider never
// sees a database row. Nothing here is ever logged: tokens and codes are secrets.

/** The services a product may ask to connect (the spec's `drive` and `classroom`). */
export const googleServices = ['drive', 'classroom'] as const;
export type GoogleService = (typeof googleServices)[number];

/**
 * Least privilege (docs/connections.md): Drive only the files this service creates or the user
 * opens with it; Classroom the teacher's courses and rosters read-only and coursework for students.
 * Never `classroom.profile.emails`, never a grading or full-Drive scope.
 */
export const GOOGLE_SCOPES: Record<GoogleService, readonly string[]> = {
  drive: ['https://www.googleapis.com/auth/drive.file'],
  classroom: [
    'https://www.googleapis.com/auth/classroom.courses.readonly',
    'https://www.googleapis.com/auth/classroom.rosters.readonly',
    'https://www.googleapis.com/auth/classroom.coursework.students',
  ],
};

/** The scopes a set of services needs, deduplicated, in a stable order. */
export function scopesFor(services: readonly GoogleService[]): string[] {
  return [...new Set(googleServices.filter((s) => services.includes(s)).flatMap((s) => GOOGLE_SCOPES[s]))];
}

export type OAuthTokens = {
  accessToken: string;
  /** Google sends one on the first consent (access_type=offline, prompt=consent); a refresh may not. */
  refreshToken: string | null;
  /** ISO 8601 instant the access token stops working. */
  expiresAt: string;
  /** The scopes the user actually granted (may be fewer than asked). */
  grantedScopes: string[];
};

/** Why a provider call failed, as a stable code (the provider's own text is never passed on). */
export type OAuthFailureCode =
  | 'provider_invalid_grant' // code used, expired, or PKCE verifier wrong; refresh token revoked
  | 'provider_invalid_client' // our client id/secret refused
  | 'provider_error' // 5xx or an answer that is not OAuth JSON
  | 'provider_unreachable'
  | 'provider_timeout';

export class OAuthProviderError extends Error {
  readonly code: OAuthFailureCode;
  /** The HTTP status the provider answered, when it answered. */
  readonly status: number | null;

  constructor(code: OAuthFailureCode, status: number | null = null) {
    super(`OAuth provider call failed: ${code}${status === null ? '' : ` (${status})`}`);
    this.name = 'OAuthProviderError';
    this.code = code;
    this.status = status;
  }
}

/** The authorization-code flow with PKCE (S256), as the lifecycle uses it. */
export interface OAuthProvider {
  /** The URL the person is sent to: code flow, offline access, consent prompt, PKCE S256, our `state`. */
  authorizationUrl(input: { state: string; codeChallenge: string; redirectUri: string; scopes: readonly string[] }): string;
  exchangeCode(input: { code: string; codeVerifier: string; redirectUri: string }): Promise<OAuthTokens>;
  refresh(refreshToken: string): Promise<OAuthTokens>;
  /** Revokes the token (a refresh token revokes the whole grant); an already revoked token is not an error. */
  revoke(token: string): Promise<void>;
}

/** Where the provider lives: Google's endpoints in production, the loopback double in tests. */
export type GoogleEndpoints = {
  authorizeUrl: string; // https://accounts.google.com/o/oauth2/v2/auth
  tokenUrl: string; // https://oauth2.googleapis.com/token
  revokeUrl: string; // https://oauth2.googleapis.com/revoke
  /** Root of the Drive and Classroom REST APIs: https://www.googleapis.com/ and https://classroom.googleapis.com/ in production. */
  driveRootUrl: string;
  classroomRootUrl: string;
};

export const GOOGLE_ENDPOINTS: GoogleEndpoints = {
  authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
  tokenUrl: 'https://oauth2.googleapis.com/token',
  revokeUrl: 'https://oauth2.googleapis.com/revoke',
  driveRootUrl: 'https://www.googleapis.com/',
  classroomRootUrl: 'https://classroom.googleapis.com/',
};

export type GoogleClientSettings = { clientId: string; clientSecret: string; endpoints: GoogleEndpoints; timeoutMs: number };
