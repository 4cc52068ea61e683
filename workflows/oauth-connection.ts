// One OAuth round trip (domain/connections/attempts.ts): started by the API right after the attempt
// is recorded, it waits for the provider's redirect as the `callback` update, up to the attempt's
// lifetime. The update's validator refuses a malformed payload, a state that is not this attempt's
// and any callback after the first (or after the timer): a state is single-use. On the callback the
// code is exchanged and the connection stored in one activity (tokens never enter this history; the
// code arrives sealed), and the update answers how the attempt ended. When the timer fires first,
// the attempt expires.
import { ApplicationFailure, ActivityFailure, condition, defineQuery, defineUpdate, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { ConnectionActivities } from '../activities/connections.ts';
import type { AttemptOutcome, OAuthCallback, OAuthConnectionInput } from '../domain/connections/attempts.ts';

// The exchange talks to the provider: an ordinary activity, a few tries for a database hiccup (the
// step answers an attempt that already ended with its recorded end, so a repeat is harmless).
const provider = proxyActivities<ConnectionActivities>({ startToCloseTimeout: '45 seconds', retry: { maximumAttempts: 5, maximumInterval: '10 seconds' } });
// Ending an attempt is one compare-and-set row update: a local activity.
const records = proxyLocalActivities<ConnectionActivities>({ startToCloseTimeout: '10 seconds', retry: { maximumInterval: '5 seconds' } });

export type OAuthConnectionStage = 'awaiting_callback' | 'exchanging' | 'connected' | 'failed' | 'expired';

/** What operators see (no secret: ids, stage and the failure code). */
export type OAuthConnectionState = { attemptId: string; stage: OAuthConnectionStage; connectionId: string | null; failureCode: string | null };

/** The provider's redirect, from the callback route; answers how the attempt ended. */
export const callbackUpdate = defineUpdate<AttemptOutcome, [OAuthCallback]>('callback');
export const stateQuery = defineQuery<OAuthConnectionState>('state');

/** Why a callback was refused (the failure's `type`): the route tells a second callback from a broken one. */
export const callbackRefusals = { malformed: 'callback_malformed', wrongState: 'callback_state_mismatch', alreadyReceived: 'callback_already_received', expired: 'callback_after_expiry' } as const;

const failureCodes = new Set(['oauth_consent_denied', 'oauth_provider_error', 'oauth_return_target_mismatch']);

/** The payload's shape, checked before the update is accepted (nothing invalid reaches the history as accepted). */
export function isOAuthCallback(value: unknown): value is OAuthCallback {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  if (typeof v['stateHash'] !== 'string' || !/^[0-9a-f]{64}$/.test(v['stateHash'])) return false;
  if (v['kind'] === 'code') return typeof v['sealedCode'] === 'string' && v['sealedCode'].length > 0 && v['sealedCode'].length <= 4096 && Object.keys(v).length === 3;
  if (v['kind'] === 'failure') return typeof v['code'] === 'string' && failureCodes.has(v['code']) && Object.keys(v).length === 3;
  return false;
}

const refuse = (type: string, message: string) => ApplicationFailure.create({ type, message, nonRetryable: true });

export async function oauthConnection(input: OAuthConnectionInput): Promise<OAuthConnectionState> {
  const state: OAuthConnectionState = { attemptId: input.attemptId, stage: 'awaiting_callback', connectionId: null, failureCode: null };
  let handling: Promise<AttemptOutcome> | null = null;
  let expiring = false;
  const record = (outcome: AttemptOutcome | null): AttemptOutcome => {
    const ended = outcome ?? { status: 'failed', code: 'internal_error' };
    if (ended.status === 'connected') Object.assign(state, { stage: 'connected', connectionId: ended.connectionId });
    else Object.assign(state, { stage: ended.code === 'oauth_state_expired' ? 'expired' : 'failed', failureCode: ended.code });
    return ended;
  };

  const handle = async (callback: OAuthCallback): Promise<AttemptOutcome> => {
    if (callback.kind === 'failure') return record(await records.failOAuthAttempt({ attemptId: input.attemptId, code: callback.code }));
    state.stage = 'exchanging';
    try {
      return record(await provider.exchangeOAuthCode({ attemptId: input.attemptId, sealedCode: callback.sealedCode }));
    } catch (error) {
      // Retries used up (the database stayed down): the attempt ends rather than hanging.
      if (!(error instanceof ActivityFailure)) throw error;
      return record(await records.failOAuthAttempt({ attemptId: input.attemptId, code: 'internal_error' }));
    }
  };

  setHandler(stateQuery, () => state);
  setHandler(
    callbackUpdate,
    (callback) => {
      handling = handle(callback);
      return handling;
    },
    {
      validator: (callback) => {
        if (!isOAuthCallback(callback)) throw refuse(callbackRefusals.malformed, 'The callback payload is malformed.');
        if (callback.stateHash !== input.stateHash) throw refuse(callbackRefusals.wrongState, 'The callback is for another attempt.');
        if (handling) throw refuse(callbackRefusals.alreadyReceived, 'This attempt already received its callback.');
        if (expiring) throw refuse(callbackRefusals.expired, 'This attempt expired.');
      },
    },
  );

  await condition(() => handling !== null, input.ttlMs);
  // Checked and set in one step: a callback validated after this sees `expiring`.
  if (handling === null) {
    expiring = true;
    record(await records.expireOAuthAttempt(input.attemptId));
    return state;
  }
  await handling;
  return state;
}
