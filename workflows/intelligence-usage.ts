// The life of one metered intelligence request after the API started it (docs/intelligence.md).
// The API process starts this workflow before it reserves anything, reserves in Postgres, dispatches
// and streams; from then on this workflow owns the ledger's transitions, but for a settlement the API
// commits itself (the same compare-and-set, so no transition can happen twice):
//   - the API reports how the request ended through the `complete` update (release or billable
//     failure, and a settlement the API could not commit itself), which the workflow records with a
//     compare-and-set;
//   - a completed request is settled by the API itself, with the same compare-and-set in Postgres,
//     then announced with the `recorded` signal: nothing is left to record, the workflow just ends
//     (a lost signal costs nothing: the timer's step finds the row no longer held);
//   - if nothing was dispatched when the reservation's timer fires, the reservation expires and its
//     capacity is released;
//   - if a dispatched request is never reported (the API process died mid-request), the completion
//     deadline records it as a billable failure: the provider may have done the work.
// Nothing held can outlive this workflow, and no transition can happen twice.
import { condition, defineQuery, defineSignal, defineUpdate, proxyLocalActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { Completion, Reservation } from '../domain/intelligence/ledger.ts';

// Each step is one short compare-and-set transaction, safe to repeat: local activities.
const ledger = proxyLocalActivities<Activities>({ startToCloseTimeout: '10 seconds', retry: { maximumInterval: '5 seconds' } });

export type IntelligenceUsageInput = {
  /** Until this long after the start, an undispatched reservation may still be dispatched. */
  reservationTtlMs: number;
  /** How long a dispatched request may run before, unreported, it is recorded as a billable failure. */
  completionDeadlineMs: number;
};

/** How the API saw the request end (the expiry is the workflow's own). */
export type CompletionReport = Exclude<Completion, { kind: 'expire' }>;

/** Reports the end of the request; answers the recorded reservation (null: the attempt never reserved). */
export const completeUpdate = defineUpdate<Reservation | null, [CompletionReport]>('complete');
/** What the API committed itself: the reservation's final state (only ever sent after the commit). */
export type RecordedEnd = { state: 'settled' };
/**
 * The API recorded the request's end itself (ledger.completeReservation, the compare-and-set the
 * `complete` update runs): nothing is held any more, so the workflow ends without a ledger step.
 * Added after histories were recorded: a handler produces no command, so runs that never received
 * it replay unchanged (test/workflows/replay.test.ts), and an older worker that receives it ends at
 * its timer, whose step finds the row settled.
 */
export const recordedSignal = defineSignal<[RecordedEnd]>('recorded');
/** The API's reservation was refused (nothing held): end without waiting for the timer. */
export const notReservedSignal = defineSignal('notReserved');
export const stageQuery = defineQuery<string>('stage');

export async function intelligenceUsage(input: IntelligenceUsageInput): Promise<string> {
  const { workflowId } = workflowInfo();
  let stage = 'awaiting_dispatch';
  let recorded: Reservation | null | undefined;
  /** The end the API recorded and signalled (null: none was signalled). */
  let recordedByApi: RecordedEnd['state'] | null = null;
  let refused = false;
  // The first report wins; a repeated one (a retried update) is answered with what was recorded.
  let reporting: Promise<Reservation | null> | null = null;
  setHandler(stageQuery, () => stage);
  setHandler(notReservedSignal, () => {
    refused = true;
  });
  setHandler(recordedSignal, ({ state }) => {
    if (recordedByApi !== null || recorded !== undefined) return;
    recordedByApi = state;
    stage = state;
  });
  setHandler(completeUpdate, (report) => {
    reporting ??= ledger.completeIntelligenceReservation({ workflowId, completion: report }).then((r) => {
      recorded = r;
      stage = r?.state ?? 'never_reserved';
      return r;
    });
    return reporting;
  });

  const ended = () => recorded !== undefined || recordedByApi !== null;
  if (!(await condition(() => ended() || refused, input.reservationTtlMs))) {
    // The timer: release an undispatched reservation; a dispatched one keeps running.
    const found = await ledger.completeIntelligenceReservation({ workflowId, completion: { kind: 'expire' } });
    if (!ended()) stage = found?.state ?? 'never_reserved';
    if (found?.state === 'dispatched' && !ended()) {
      if (!(await condition(ended, input.completionDeadlineMs))) {
        const lost = await ledger.completeIntelligenceReservation({
          workflowId,
          completion: { kind: 'billable_failure', code: 'completion_lost', costMicrodollars: null, model: null, inputTokens: null, outputTokens: null },
        });
        if (!ended()) stage = lost?.state ?? 'never_reserved';
      }
    }
  } else if (refused && !ended()) {
    // Refused in the API: nothing should be held; make sure (a commit whose answer was lost would be).
    const found = await ledger.completeIntelligenceReservation({ workflowId, completion: { kind: 'expire' } });
    stage = found?.state ?? 'never_reserved';
  }
  // A report arriving while the timer's step ran is still recorded before the workflow ends.
  if (reporting) await reporting;
  return stage;
}
