// Activities registered on the platform task queue: thin adapters from workflows to the domain
// core. createActivities closes over the dependencies so there is no module-level state. Every
// activity is idempotent: Temporal may run one again after a timeout or a worker crash.
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { recordForgeFailure, runForgeExecution } from '../domain/automation/forge.ts';
import type { ForgeCrashPoints, ForgeStep } from '../domain/automation/forge.ts';
import { openReview } from '../domain/automation/policy.ts';
import type { OpenedReview } from '../domain/automation/policy.ts';
import { transitionProposal } from '../domain/automation/proposal-states.ts';
import type { ProposalState, Transition } from '../domain/automation/proposal-states.ts';
import { getEvent, recordScheduledRun } from '../domain/automation/events.ts';
import type { EgressPolicy } from '../domain/automation/network.ts';
import { attemptDelivery, recordFailedDelivery, requireSecretBox } from '../domain/automation/webhooks.ts';
import type { AttemptOutcome } from '../domain/automation/webhooks.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import { isAppError } from '../domain/errors.ts';
import type { OAuthProvider } from '../domain/connections/provider.ts';
import { createConnectionActivities } from './connections.ts';
import { completeReservation, overrunWarning } from '../domain/intelligence/ledger.ts';
import type { Completion, Reservation } from '../domain/intelligence/ledger.ts';

export type ActivityDeps = {
  db: DatabasePool;
  /** Opens webhook signing secrets; without it webhook deliveries fail (and say why). */
  secretBox?: SecretBox | null;
  /** Which private addresses webhooks may reach (none by default). */
  egress?: EgressPolicy;
  /**
   * Called inside a Forge execution step after its note write committed (before the receipt is kept)
   * and after the receipt (before the step reports back): the worst moments for a worker to die
   * (tests crash a worker there).
   */
  forgeCrashPoints?: ForgeCrashPoints;
  /** Google's OAuth endpoints; without it (or the secret box) a callback ends its attempt as connections_not_configured. */
  oauthProvider?: OAuthProvider | null;
};

/**
 * Domain refusals (stale revision, missing mapping…) are final: retrying cannot change them. An
 * idempotency key still held by an earlier attempt of the same step is not: retry until it settles.
 */
function final(error: unknown): never {
  if (isAppError(error) && error.code === 'idempotency_in_flight') throw new Error('an earlier attempt of this step is still running');
  if (isAppError(error)) throw ApplicationFailure.nonRetryable(error.message, error.code, { code: error.code, ...error.extensions });
  throw error;
}

export function createActivities(deps: ActivityDeps) {
  const { db } = deps;
  return {
    ...createConnectionActivities({ db, secretBox: deps.secretBox ?? null, oauthProvider: deps.oauthProvider ?? null }),
    // Short state writes: the review runs them as local activities (no round trip through the server).
    async openReview(proposalId: string): Promise<OpenedReview> {
      return openReview(db, proposalId);
    },
    async transitionProposal(input: Transition): Promise<void> {
      await transitionProposal(db, input);
    },
    async recordForgeFailure(input: { proposalId: string; kind: 'apply' | 'undo'; code: string; message: string }): Promise<ProposalState> {
      return recordForgeFailure(db, input);
    },
    /** One Forge execution, all of it one idempotent step (domain/automation/forge.ts runForgeExecution). */
    async executeForge(input: ForgeStep): Promise<{ transactionId: string | null }> {
      const receipt = await runForgeExecution(db, input, deps.forgeCrashPoints).catch(final);
      return { transactionId: receipt.transactionId };
    },
    async fireScheduledTrigger(triggerId: string, fireKey: string): Promise<string | null> {
      return recordScheduledRun(db, triggerId, fireKey);
    },
    async deliverWebhook(input: { endpointId: string; messageId: string; eventId: string; attempt: number }): Promise<AttemptOutcome> {
      const event = await getEvent(db, input.eventId);
      if (!event) return 'skipped';
      // Inside the chain, so a missing secret box (not_ready) is final like every domain refusal:
      // retrying cannot configure the server.
      return Promise.resolve()
        // Temporal's own count of this activity's runs: a repeat of one delivery attempt is told apart in its record.
        .then(() => attemptDelivery(db, requireSecretBox(deps.secretBox ?? null), deps.egress ?? { allowList: [] }, { ...input, event, activityAttempt: activityAttempt() }))
        .catch(final);
    },
    async recordFailedDelivery(endpointId: string): Promise<void> {
      await recordFailedDelivery(db, endpointId);
    },
    /** One ledger transition of a metered intelligence request (a compare-and-set: repeating it changes nothing). */
    async completeIntelligenceReservation(input: { workflowId: string; completion: Completion }): Promise<Reservation | null> {
      const recorded = await completeReservation(db, input.workflowId, input.completion);
      const overrun = input.completion.kind === 'expire' ? null : overrunWarning(recorded);
      if (overrun) log.warn(overrun.message, overrun.fields);
      return recorded;
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;

/** This run's attempt number when called as an activity; null when called directly (tests, scripts). */
function activityAttempt(): number | null {
  try {
    return Context.current().info.attempt;
  } catch {
    return null;
  }
}
