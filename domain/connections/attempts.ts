// OAuth round trips (authorization code flow with PKCE S256 and a single-use `state`), one attempt
// per round trip, each run by a workflow (workflows/oauth-connection.ts):
//   1. startAttempt (the product's start request): services and return target checked, a 256-bit
//      state (only its SHA-256 is stored) and a PKCE pair (the verifier sealed to the attempt),
//      the provider's authorization URL. The API then starts the attempt's workflow.
//   2. receiveCallback (the provider's redirect to our callback): the attempt found by the state's
//      hash, refused if replayed or expired, and the outcome handed to the workflow as its
//      `callback` update. The authorization code is sealed to the attempt first, so the workflow's
//      history never holds it in the clear.
//   3. the workflow's activities: exchangeAndStore (code → tokens → sealed connection, in one step so
//      tokens never pass through the workflow), expireAttempt (its timer), failAttempt.
// Every way an attempt ends stores nothing but the attempt's own status and failure code; the
// sealed verifier is cleared whatever the end.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { emptyRow, isoTimestamp } from '../../db/row-schemas.ts';
import { AppError } from '../errors.ts';
import type { SecretBox } from '../secret-box.ts';
import { hashSecret } from '../secrets.ts';
import { recordStartIntents } from '../workflow-intents.ts';
import { connectionError, grantedServices, insertConnection, requireConfigured } from './connections.ts';
import type { ConnectionCaller, ConnectionDeps } from './connections.ts';
import { OAuthProviderError, googleServices, scopesFor } from './provider.ts';
import type { GoogleService } from './provider.ts';

/** How long a person has to come back from the consent screen. */
export const DEFAULT_ATTEMPT_TTL_MS = 10 * 60_000;
export const MAX_ATTEMPT_TTL_MS = 60 * 60_000;

export const attemptWorkflowId = (attemptId: string) => `oauth-connection-${attemptId}`;
/** The kind of the attempt's recorded workflow start (domain/workflow-intents.ts). */
export const OAUTH_ATTEMPT_START_KIND = 'oauth-connection';

/** The attempt's workflow input (workflows/oauth-connection.ts). */
export type OAuthConnectionInput = { attemptId: string; stateHash: string; ttlMs: number };

/** How an attempt can end badly, as recorded in `oauth_attempts.failure_code`. */
export type AttemptFailureCode =
  | 'oauth_state_expired'
  | 'oauth_consent_denied'
  | 'oauth_provider_error'
  | 'oauth_return_target_mismatch'
  | 'connections_not_configured'
  | 'internal_error';

/** What a callback can answer beyond the attempt's own end: a state we never issued, or one already used. */
export type CallbackFailureCode = AttemptFailureCode | 'oauth_state_invalid' | 'oauth_state_replayed';

/** How the attempt ended, as the workflow's `callback` update answers it. */
export type AttemptOutcome = { status: 'connected'; connectionId: string } | { status: 'failed'; code: AttemptFailureCode };

/** What the callback route hands the attempt's workflow. */
export type OAuthCallback = { stateHash: string } & (
  | { kind: 'code'; sealedCode: string }
  | { kind: 'failure'; code: 'oauth_consent_denied' | 'oauth_provider_error' | 'oauth_return_target_mismatch' }
);

/**
 * Sends the callback to the attempt's workflow (the API implements it with the Temporal client):
 * the update's answer; `refused` when the workflow's validator refused it (another callback came
 * first); `closed` when the workflow has ended (its timer fired, or it was terminated).
 */
export type DeliverCallback = (workflowId: string, callback: OAuthCallback) => Promise<AttemptOutcome | { status: 'refused' } | { status: 'closed' }>;

/** The query string of the provider's redirect to our callback (`state`, and `code` or `error`). */
export type CallbackQuery = { state?: string | undefined; code?: string | undefined; error?: string | undefined };

/** Where the person goes next: the return target with the connection id, or with the failure code (no return target for a state we never issued). */
export type CallbackResult =
  | { status: 'connected'; connectionId: string; returnTarget: string }
  | { status: 'failed'; code: CallbackFailureCode; returnTarget: string | null };

export type StartedAttempt = {
  attemptId: string;
  authorizationUrl: string;
  services: GoogleService[];
  expiresAt: string;
  /** Start this workflow right after (workflows/oauth-connection.ts `oauthConnection`). */
  workflowId: string;
  workflowInput: OAuthConnectionInput;
};

export const attemptSealContext = {
  verifier: (attemptId: string) => `attempt:${attemptId}:verifier`,
  code: (attemptId: string) => `attempt:${attemptId}:code`,
};

const STATE_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const CODE_PATTERN = /^[\x21-\x7e]{1,2048}$/;

/** Services the product asked for: a non-empty subset of drive and classroom, deduplicated, in a stable order. */
export function parseServices(requested: readonly string[]): GoogleService[] {
  const unknown = requested.filter((s) => !(googleServices as readonly string[]).includes(s));
  if (requested.length === 0 || requested.length > 10 || unknown.length > 0) {
    throw new AppError('invalid_request', `services must name one or more of: ${googleServices.join(', ')}.`, {
      extensions: { errors: [{ pointer: '/body/services', message: `one or more of ${googleServices.join(', ')}` }] },
    });
  }
  return googleServices.filter((s) => requested.includes(s));
}

/**
 * Whether `target` may receive the person back: it equals one of the product's registered redirect
 * URIs exactly, or it is an https URL under one of its registered origins
 * (product-runtime/entities.ts validateReturnTargets stores origins bare, exact URIs with a path).
 */
export function returnTargetRegistered(registered: readonly string[], target: string): boolean {
  const url = URL.parse(target);
  if (!url || url.protocol !== 'https:' || url.username || url.password || url.hash || target.length > 2048) return false;
  return registered.some((entry) => {
    const registeredUrl = URL.parse(entry);
    if (!registeredUrl) return false;
    const isOrigin = entry === registeredUrl.origin;
    return isOrigin ? url.origin === registeredUrl.origin : url.href === registeredUrl.href;
  });
}

async function registeredReturnTargets(db: CommonQueryMethods, organizationId: string, installationId: string): Promise<readonly string[]> {
  const row = await db.maybeOne(sql.type(z.object({ redirectUris: z.array(z.string()) }))`
    SELECT pd.redirect_uris AS "redirectUris" FROM product_installations i JOIN product_definitions pd ON pd.id = i.product_definition_id
     WHERE i.id = ${installationId} AND i.organization_id = ${organizationId}`);
  return row?.redirectUris ?? [];
}

const base64url = (bytes: Buffer) => bytes.toString('base64url');

/**
 * Starts a round trip: nothing is stored if the services or the return target are refused. The
 * answer's authorization URL carries the state; the state itself is never stored.
 */
export async function startAttempt(
  deps: ConnectionDeps,
  caller: ConnectionCaller,
  request: { services: readonly string[]; returnTarget: string; redirectUri: string; ttlMs?: number },
): Promise<StartedAttempt> {
  const { db, secretBox, oauthProvider } = requireConfigured(deps);
  const services = parseServices(request.services);
  const ttlMs = request.ttlMs ?? DEFAULT_ATTEMPT_TTL_MS;
  if (!Number.isInteger(ttlMs) || ttlMs < 1_000 || ttlMs > MAX_ATTEMPT_TTL_MS) throw new AppError('invalid_request', 'The attempt lifetime is out of range.');
  if (!returnTargetRegistered(await registeredReturnTargets(db, caller.organizationId, caller.installationId), request.returnTarget)) {
    throw connectionError('oauth_return_target_mismatch', "The return target is not one of the product definition's registered return origins or redirect URIs.");
  }
  const attemptId = randomUUID();
  const state = base64url(randomBytes(32));
  const codeVerifier = base64url(randomBytes(32));
  const codeChallenge = base64url(createHash('sha256').update(codeVerifier, 'ascii').digest());
  const authorizationUrl = oauthProvider.authorizationUrl({ state, codeChallenge, redirectUri: request.redirectUri, scopes: scopesFor(services) });
  const stateHash = hashSecret(state);
  const workflowId = attemptWorkflowId(attemptId);
  const workflowInput = { attemptId, stateHash, ttlMs };
  // The attempt and the start of its workflow, in one transaction (the outbox): a person sent to
  // Google always finds the workflow waiting for the callback, even if Temporal was down a moment.
  const { expiresAt } = await db.transaction(async (tx) => {
    await recordStartIntents(tx, [{ workflowId, kind: OAUTH_ATTEMPT_START_KIND, input: workflowInput }]);
    return tx.one(sql.type(z.object({ expiresAt: isoTimestamp }))`
    INSERT INTO oauth_attempts (id, organization_id, installation_id, state_hash, code_verifier_sealed, services, redirect_uri, return_target, workflow_id,
                                created_by_principal_id, created_request_id, expires_at)
    VALUES (${attemptId}, ${caller.organizationId}, ${caller.installationId}, ${stateHash}, ${secretBox.seal(codeVerifier, attemptSealContext.verifier(attemptId))},
            ${sql.array(services, 'text')}, ${request.redirectUri}, ${request.returnTarget}, ${workflowId},
            ${caller.servicePrincipalId}, ${caller.requestId}, now() + make_interval(secs => ${ttlMs / 1000}))
    RETURNING expires_at AS "expiresAt"`);
  });
  return { attemptId, authorizationUrl, services, expiresAt, workflowId, workflowInput };
}

const attemptRow = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  installationId: z.uuid(),
  status: z.enum(['pending', 'completed', 'failed', 'expired']),
  failureCode: z.string().nullable(),
  connectionId: z.uuid().nullable(),
  workflowId: z.string(),
  returnTarget: z.string(),
  redirectUri: z.string(),
  services: z.array(z.enum(googleServices)),
  verifierSealed: z.string().nullable(),
  createdByPrincipalId: z.uuid(),
  createdRequestId: z.string(),
  expired: z.boolean(),
});
type AttemptRow = z.infer<typeof attemptRow>;
const attemptColumns = sql.fragment`a.id, a.organization_id AS "organizationId", a.installation_id AS "installationId", a.status,
  a.failure_code AS "failureCode", a.connection_id AS "connectionId", a.workflow_id AS "workflowId", a.return_target AS "returnTarget",
  a.redirect_uri AS "redirectUri", a.services, a.code_verifier_sealed AS "verifierSealed",
  a.created_by_principal_id AS "createdByPrincipalId", a.created_request_id AS "createdRequestId", a.expires_at <= now() AS expired`;

async function readAttempt(db: CommonQueryMethods, attemptId: string): Promise<AttemptRow | null> {
  return db.maybeOne(sql.type(attemptRow)`SELECT ${attemptColumns} FROM oauth_attempts a WHERE a.id = ${attemptId}`);
}

/** An ended attempt's outcome as recorded; null while it is pending. */
function recordedOutcome(row: AttemptRow): AttemptOutcome | null {
  if (row.status === 'completed') return { status: 'connected', connectionId: row.connectionId! };
  if (row.status === 'pending') return null;
  return { status: 'failed', code: row.failureCode as AttemptFailureCode };
}

/**
 * Ends a pending attempt with `code` (a compare-and-set: an attempt that already ended keeps its
 * end). Answers the attempt's outcome as recorded; null for an attempt that does not exist.
 */
export async function failAttempt(db: CommonQueryMethods, attemptId: string, code: AttemptFailureCode): Promise<AttemptOutcome | null> {
  await db.query(sql.type(emptyRow)`
    UPDATE oauth_attempts
       SET status = ${code === 'oauth_state_expired' ? 'expired' : 'failed'}, failure_code = ${code}, code_verifier_sealed = NULL, finished_at = now()
     WHERE id = ${attemptId} AND status = 'pending'`);
  const row = await readAttempt(db, attemptId);
  return row && recordedOutcome(row);
}

/** The workflow's timer: a still-pending attempt expires. */
export async function expireAttempt(db: CommonQueryMethods, attemptId: string): Promise<AttemptOutcome | null> {
  return failAttempt(db, attemptId, 'oauth_state_expired');
}

/**
 * The provider's redirect to our callback. The state is looked up by its hash: unknown →
 * oauth_state_invalid; an attempt that already ended → oauth_state_replayed (oauth_state_expired if
 * it expired); past its expiry → oauth_state_expired. Otherwise the workflow gets the outcome: the
 * sealed code, or the failure (consent denied, a provider error, a return target the product no
 * longer registers), and answers how the attempt ended.
 */
export async function receiveCallback(deps: ConnectionDeps, query: CallbackQuery, deliver: DeliverCallback): Promise<CallbackResult> {
  const { db, secretBox } = requireConfigured(deps);
  if (!query.state || !STATE_PATTERN.test(query.state)) return { status: 'failed', code: 'oauth_state_invalid', returnTarget: null };
  const stateHash = hashSecret(query.state);
  const attempt = await db.maybeOne(sql.type(attemptRow)`SELECT ${attemptColumns} FROM oauth_attempts a WHERE a.state_hash = ${stateHash}`);
  if (!attempt) return { status: 'failed', code: 'oauth_state_invalid', returnTarget: null };
  const ended = (code: CallbackFailureCode): CallbackResult => ({ status: 'failed', code, returnTarget: attempt.returnTarget });
  if (attempt.status === 'expired') return ended('oauth_state_expired');
  if (attempt.status !== 'pending') return ended('oauth_state_replayed');
  if (attempt.expired) {
    // The timer may not have fired yet; the attempt ends now all the same.
    const outcome = await expireAttempt(db, attempt.id);
    return outcome?.status === 'failed' && outcome.code === 'oauth_state_expired' ? ended('oauth_state_expired') : ended('oauth_state_replayed');
  }

  let callback: OAuthCallback;
  if (!returnTargetRegistered(await registeredReturnTargets(db, attempt.organizationId, attempt.installationId), attempt.returnTarget)) {
    // The product removed the return target since the start: the person is not sent there.
    callback = { stateHash, kind: 'failure', code: 'oauth_return_target_mismatch' };
  } else if (query.error !== undefined) {
    callback = { stateHash, kind: 'failure', code: query.error === 'access_denied' ? 'oauth_consent_denied' : 'oauth_provider_error' };
  } else if (query.code !== undefined && CODE_PATTERN.test(query.code)) {
    callback = { stateHash, kind: 'code', sealedCode: secretBox.seal(query.code, attemptSealContext.code(attempt.id)) };
  } else {
    callback = { stateHash, kind: 'failure', code: 'oauth_provider_error' };
  }

  const delivered = await deliver(attempt.workflowId, callback);
  if (delivered.status === 'connected') return { ...delivered, returnTarget: attempt.returnTarget };
  if (delivered.status === 'failed') return ended(delivered.code);
  // Refused or ended: another callback came first, or the timer fired meanwhile.
  const now = await readAttempt(db, attempt.id);
  if (now?.status === 'expired') return ended('oauth_state_expired');
  if (now?.status === 'pending' && delivered.status === 'closed') {
    // The workflow is gone without ending the attempt (terminated): end it here.
    await failAttempt(db, attempt.id, 'internal_error');
    return ended('internal_error');
  }
  return ended('oauth_state_replayed');
}

/**
 * The workflow's exchange step, idempotent by attempt: an attempt that already ended answers its
 * recorded end (a retried activity whose first run stored the connection returns that connection).
 * Exchanges the code with the verifier, keeps the services whose scopes were all granted, and stores
 * the sealed tokens and the attempt's completion in one transaction. Tokens never leave this call.
 */
export async function exchangeAndStore(deps: ConnectionDeps, input: { attemptId: string; sealedCode: string }): Promise<AttemptOutcome> {
  const { db } = deps;
  const attempt = await readAttempt(db, input.attemptId);
  if (!attempt) return { status: 'failed', code: 'internal_error' };
  const recorded = recordedOutcome(attempt);
  if (recorded) return recorded;
  if (!deps.secretBox || !deps.oauthProvider) return (await failAttempt(db, attempt.id, 'connections_not_configured'))!;
  const { secretBox, oauthProvider } = deps;

  let code: string;
  let codeVerifier: string;
  try {
    code = secretBox.open(input.sealedCode, attemptSealContext.code(attempt.id));
    codeVerifier = secretBox.open(attempt.verifierSealed!, attemptSealContext.verifier(attempt.id));
  } catch {
    return (await failAttempt(db, attempt.id, 'internal_error'))!;
  }

  let tokens;
  try {
    tokens = await oauthProvider.exchangeCode({ code, codeVerifier, redirectUri: attempt.redirectUri });
  } catch (error) {
    if (!(error instanceof OAuthProviderError)) throw error;
    // A used code answers invalid_grant: if an earlier run of this step stored the connection, that is the answer.
    const again = await readAttempt(db, attempt.id);
    const ended = again && recordedOutcome(again);
    if (ended) return ended;
    return (await failAttempt(db, attempt.id, 'oauth_provider_error'))!;
  }

  const services = grantedServices(attempt.services, tokens.grantedScopes);
  if (services.length === 0) {
    // The person unticked every scope a requested service needs: nothing usable to store.
    await revokeQuietly(oauthProvider, tokens.refreshToken ?? tokens.accessToken);
    return (await failAttempt(db, attempt.id, 'oauth_consent_denied'))!;
  }
  const stored = await storeConnection(db, secretBox, attempt, services, tokens);
  if (stored) return stored;
  // The attempt ended meanwhile (it cannot while its workflow waits on this step; a terminated one
  // could): the fresh grant is given back, the recorded end answered.
  await revokeQuietly(oauthProvider, tokens.refreshToken ?? tokens.accessToken);
  const after = await readAttempt(db, attempt.id);
  return (after && recordedOutcome(after)) ?? { status: 'failed', code: 'internal_error' };
}

async function storeConnection(
  db: DatabasePool,
  secretBox: SecretBox,
  attempt: AttemptRow,
  services: GoogleService[],
  tokens: Parameters<typeof insertConnection>[2]['tokens'],
): Promise<AttemptOutcome | null> {
  return db.transaction(async (tx) => {
    // Lock the pending attempt first: a concurrent end waits, then finds it completed.
    const pending = await tx.maybeOne(sql.type(z.object({ id: z.uuid() }))`SELECT id FROM oauth_attempts WHERE id = ${attempt.id} AND status = 'pending' FOR UPDATE`);
    if (!pending) return null;
    const connectionId = await insertConnection(tx, secretBox, {
      attemptId: attempt.id,
      organizationId: attempt.organizationId,
      installationId: attempt.installationId,
      services,
      tokens,
      createdByPrincipalId: attempt.createdByPrincipalId,
      createdRequestId: attempt.createdRequestId,
    });
    await tx.query(sql.type(emptyRow)`
      UPDATE oauth_attempts SET status = 'completed', connection_id = ${connectionId}, code_verifier_sealed = NULL, finished_at = now() WHERE id = ${attempt.id}`);
    return { status: 'connected' as const, connectionId };
  });
}

async function revokeQuietly(provider: { revoke(token: string): Promise<void> }, token: string): Promise<void> {
  await provider.revoke(token).catch(() => undefined);
}
