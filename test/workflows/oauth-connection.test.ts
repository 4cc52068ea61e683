// One OAuth round trip's workflow (workflows/oauth-connection.ts) on the time-skipping server with
// stubbed activities: the expiry timer, a callback before it, a second callback refused while the
// first is exchanged, malformed or foreign payloads refused by the validator, a denied consent, and
// an exchange that keeps failing. Each ends with exactly the activity calls it should make.
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, WorkflowUpdateStage } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { ConnectionActivities } from '../../activities/connections.ts';
import type { AttemptFailureCode, AttemptOutcome, OAuthCallback } from '../../domain/connections/attempts.ts';
import { callbackRefusals, callbackUpdate, oauthConnection, stateQuery } from '../../workflows/oauth-connection.ts';
import { useTimeSkipping } from '../support/time-skipping.ts';

// The production bundle (workflows/index.ts) on the time-skipping server, one per file.
const temporal = useTimeSkipping();
const run = <T>(activities: Partial<ConnectionActivities>, fn: (r: { client: Client; taskQueue: string }) => Promise<T>): Promise<T> => temporal.run(activities, fn);

const stateHash = 'a'.repeat(64);
const ttlMs = 600_000;
const codeCallback: OAuthCallback = { stateHash, kind: 'code', sealedCode: 'k1:sealed-code' };

/** Activities that record their calls; the exchange answers `exchange()` (connected by default). */
function stubs(exchange: () => Promise<AttemptOutcome> = async () => ({ status: 'connected', connectionId: 'c0ffee00-0000-4000-8000-000000000001' })) {
  const calls: string[] = [];
  const activities: Partial<ConnectionActivities> = {
    async exchangeOAuthCode(input) {
      calls.push(`exchange:${input.sealedCode}`);
      return exchange();
    },
    async expireOAuthAttempt() {
      calls.push('expire');
      return { status: 'failed', code: 'oauth_state_expired' };
    },
    async failOAuthAttempt(input: { attemptId: string; code: AttemptFailureCode }) {
      calls.push(`fail:${input.code}`);
      return { status: 'failed', code: input.code };
    },
  };
  return { calls, activities };
}

const start = (client: Client, taskQueue: string) =>
  client.workflow.start(oauthConnection, { taskQueue, workflowId: `oauth-connection-${randomUUID()}`, args: [{ attemptId: randomUUID(), stateHash, ttlMs }] });

/** The refusal type of a rejected update. */
async function refusal(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (error as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return (cause as ApplicationFailure).type ?? undefined;
}

describe('oauthConnection', () => {
  it('expires the attempt when no callback comes before its timer', async () => {
    const { activities, calls } = stubs();
    const result = await run(activities, async ({ client, taskQueue }) => {
      const handle = await start(client, taskQueue);
      const ended = await handle.result();
      // The workflow is gone: a late callback cannot reach it.
      await expect(handle.executeUpdate(callbackUpdate, { args: [codeCallback] })).rejects.toBeInstanceOf(WorkflowNotFoundError);
      return ended;
    });
    expect(result).toMatchObject({ stage: 'expired', failureCode: 'oauth_state_expired', connectionId: null });
    expect(calls).toEqual(['expire']);
  });

  it('a callback before the timer exchanges the code once and answers the connection', async () => {
    const { activities, calls } = stubs();
    await run(activities, async ({ client, taskQueue }) => {
      const handle = await start(client, taskQueue);
      expect(await handle.query(stateQuery)).toMatchObject({ stage: 'awaiting_callback' });
      await temporal.env.sleep(ttlMs - 60_000);
      const outcome = await handle.executeUpdate(callbackUpdate, { args: [codeCallback] });
      expect(outcome).toEqual({ status: 'connected', connectionId: 'c0ffee00-0000-4000-8000-000000000001' });
      expect(await handle.result()).toMatchObject({ stage: 'connected', connectionId: 'c0ffee00-0000-4000-8000-000000000001', failureCode: null });
    });
    expect(calls).toEqual(['exchange:k1:sealed-code']);
  });

  it('refuses a second callback while the first is being exchanged; the state is single-use', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let exchanging!: () => void;
    const started = new Promise<void>((resolve) => (exchanging = resolve));
    const { activities, calls } = stubs(async () => {
      exchanging();
      await released;
      return { status: 'connected', connectionId: 'c0ffee00-0000-4000-8000-000000000002' };
    });
    await run(activities, async ({ client, taskQueue }) => {
      const handle = await start(client, taskQueue);
      const first = await handle.startUpdate(callbackUpdate, { args: [codeCallback], waitForStage: WorkflowUpdateStage.ACCEPTED });
      await started;
      expect(await handle.query(stateQuery)).toMatchObject({ stage: 'exchanging' });
      expect(await refusal(handle.executeUpdate(callbackUpdate, { args: [{ ...codeCallback, sealedCode: 'k1:another-code' }] }))).toBe(callbackRefusals.alreadyReceived);
      release();
      expect(await first.result()).toEqual({ status: 'connected', connectionId: 'c0ffee00-0000-4000-8000-000000000002' });
      await handle.result();
    });
    expect(calls).toEqual(['exchange:k1:sealed-code']);
  });

  it('the validator refuses a malformed payload and another attempt’s state, and the attempt still waits for its own', async () => {
    const { activities, calls } = stubs();
    await run(activities, async ({ client, taskQueue }) => {
      const handle = await start(client, taskQueue);
      const malformed = [
        { stateHash, kind: 'code' },
        { stateHash, kind: 'code', sealedCode: '' },
        { stateHash, kind: 'code', sealedCode: 'x', accessToken: 'smuggled' },
        { stateHash, kind: 'failure', code: 'made_up' },
        { stateHash: 'not-a-hash', kind: 'code', sealedCode: 'x' },
        'a string',
        null,
      ];
      for (const payload of malformed) {
        expect(await refusal(handle.executeUpdate(callbackUpdate, { args: [payload as unknown as OAuthCallback] }))).toBe(callbackRefusals.malformed);
      }
      expect(await refusal(handle.executeUpdate(callbackUpdate, { args: [{ ...codeCallback, stateHash: 'b'.repeat(64) }] }))).toBe(callbackRefusals.wrongState);
      expect(await handle.query(stateQuery)).toMatchObject({ stage: 'awaiting_callback' });
      expect(await handle.executeUpdate(callbackUpdate, { args: [codeCallback] })).toMatchObject({ status: 'connected' });
    });
    expect(calls).toEqual(['exchange:k1:sealed-code']);
  });

  it('a denied consent ends the attempt with its code, without an exchange', async () => {
    const { activities, calls } = stubs();
    await run(activities, async ({ client, taskQueue }) => {
      const handle = await start(client, taskQueue);
      expect(await handle.executeUpdate(callbackUpdate, { args: [{ stateHash, kind: 'failure', code: 'oauth_consent_denied' }] })).toEqual({
        status: 'failed',
        code: 'oauth_consent_denied',
      });
      expect(await handle.result()).toMatchObject({ stage: 'failed', failureCode: 'oauth_consent_denied' });
    });
    expect(calls).toEqual(['fail:oauth_consent_denied']);
  });

  it('an exchange that keeps failing ends the attempt (internal_error) instead of leaving it waiting', async () => {
    const { activities, calls } = stubs(async () => {
      throw new Error('database unavailable');
    });
    await run(activities, async ({ client, taskQueue }) => {
      const handle = await start(client, taskQueue);
      // Awaiting the result too lets the server skip the retry backoff.
      const [outcome] = await Promise.all([handle.executeUpdate(callbackUpdate, { args: [codeCallback] }), handle.result()]);
      expect(outcome).toEqual({ status: 'failed', code: 'internal_error' });
    });
    expect(calls).toEqual([...Array<string>(5).fill('exchange:k1:sealed-code'), 'fail:internal_error']);
  });
});
