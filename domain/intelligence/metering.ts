// The reservation lifecycle of every metered operation, written once (the spec's reservation table):
//   - the request's workflow is started first, so a timer exists before anything is reserved;
//   - the maximum bounded cost is reserved (or a settled request with the same key is replayed);
//   - rejected before the provider accepted (refusal, unreachable, timeout, client gone) → released;
//   - accepted, then interrupted (client gone, stream broke, deadline, unusable output) → billable failure;
//   - completed → the answer is stored, then settled at the actual cost; the same key replays it.
// The settlement is committed by the API itself (the workflow's own compare-and-set, run here), and the
// workflow is told with a signal: the answer's receipt is what this process committed, and no worker
// round trip stands between the provider's answer and the reply. Releases and billable failures are
// reported to the workflow (an update), which records them even through a Postgres outage.
// A report that cannot reach the workflow is not lost: its timers record the request as the spec says.
// An operation states only its own steps: `meter()` opens, `accept()` calls the provider, `settle()`
// turns what it answered into the stored result and the charge (domain/intelligence/generation.ts).
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DatabasePool } from 'slonik';
import type { UsageReceipt } from '@hosted-notes/runtime-sdk';
import { unreachableReason } from '../../db/availability.ts';
import { AppError } from '../errors.ts';
import type { ErrorCode } from '../errors.ts';
import { fingerprintOf } from '../idempotency.ts';
import { hashSecret } from '../secrets.ts';
import { completeReservation, markDispatched, overrunWarning, receiptOf, reserve, storeResult } from './ledger.ts';
import type { Completion, Reservation } from './ledger.ts';
import { ProviderInterruption, ProviderRejection } from './provider.ts';
import type { MeteringTiming } from './setup.ts';

/** How the API saw a request end (the expiry is the workflow's own). */
export type CompletionReport = Exclude<Completion, { kind: 'expire' }>;

/** The metering workflow of a request, as the lifecycle needs it (Temporal, in api/routes/product/metering-workflows.ts). */
export type MeteringWorkflows = {
  /** Starts the request's workflow, which holds the reservation's timers; refuses with workflow_service_unavailable when it cannot. */
  start(workflowId: string, timing: MeteringTiming): Promise<void>;
  /** Reports how the request ended; answers the reservation as the workflow recorded it (null: never reserved). */
  complete(workflowId: string, report: CompletionReport): Promise<Reservation | null>;
  /** Tells the workflow the API committed the request's end itself, so it can end now (bounded; the caller treats a failure as best effort). */
  recorded(workflowId: string, state: 'settled'): Promise<void>;
  /** Nothing is held under this workflow: let it end now rather than at its timer (best effort). */
  endUnreserved(workflowId: string): void;
};

export type MeteringLog = { warn(details: object, message: string): void; error(details: object, message: string): void };

export type MeteringDeps = { db: DatabasePool; workflows: MeteringWorkflows; timing: MeteringTiming; log: MeteringLog };

/** What a metered request holds against: the caller's organization and installation. */
export type MeteredCaller = { organizationId: string; installationId: string };

/** A metered request: its metered kind (the receipt's operation), its parsed body (fingerprinted) and its bounded cost. */
export type MeteredRequest = { operation: string; body: unknown; costMicrodollars: number };

/** What a completed request stores and is charged: the result replayed by its key, and the usage. */
export type Settlement = {
  stored: unknown;
  bytes?: Buffer;
  /** null: the provider reported no usage, so the reserved bound is charged. */
  costMicrodollars: number | null;
  model: string;
  inputTokens: number | null;
  outputTokens: number | null;
  images: number | null;
};

/** What a billable failure is charged: its known cost (null: the reserved bound), and what is known of it. */
export type FailureCharge = Pick<Settlement, 'costMicrodollars' | 'inputTokens' | 'outputTokens'> & { model: string | null };

/**
 * How long a completed request's result, then its settlement, is retried into Postgres through an
 * outage. The provider's work is done and paid for: a short outage must not lose it (the drill cuts
 * Postgres for 5 s). Past this a result not stored is recorded as a billable failure at its known
 * usage, at once; a stored result's settlement is handed to the workflow (the update).
 */
const STORE_RETRY_MS = 20_000;

/** A reservation's receipt when it ended settled or as a billable failure (null when the report did not land). */
function receiptOrNull(recorded: Reservation | null): UsageReceipt | null {
  return recorded && (recorded.state === 'settled' || recorded.state === 'billable_failure') ? receiptOf(recorded) : null;
}

/** The problem a billable failure answers with, naming its receipt. */
function billableProblem(code: ProviderInterruption['code'], message: string, receipt: UsageReceipt | null): AppError {
  const appCode: ErrorCode = code === 'client_disconnected' ? 'intelligence_interrupted' : code;
  return new AppError(appCode, message, { extensions: { outcome: 'billable_failure', outcomeCode: code, receipt } });
}

/** A request whose cost is reserved: the provider may be called (accept) and the outcome recorded (settle, fail). */
export class HeldRequest {
  readonly reservation: Reservation;
  readonly workflowId: string;
  private readonly deps: MeteringDeps;

  constructor(deps: MeteringDeps, workflowId: string, reservation: Reservation) {
    this.deps = deps;
    this.workflowId = workflowId;
    this.reservation = reservation;
  }

  /**
   * Marks the reservation dispatched and calls the provider. A rejection before it accepted releases
   * the reservation and refuses; anything else (a bug: the request may have been sent) is billable.
   */
  async accept<T>(call: () => Promise<T>): Promise<T> {
    try {
      await markDispatched(this.deps.db, this.workflowId);
    } catch (error) {
      // The provider was not called. A dispatch whose commit answer was lost (the connection cut at
      // the commit) may have moved the row anyway; left so, the completion deadline would charge a
      // billable failure for nothing sent. The workflow records the release once Postgres answers.
      if (unreachableReason(error) !== null) await this.report({ kind: 'release', code: 'database_unavailable' });
      throw error;
    }
    try {
      return await call();
    } catch (error) {
      if (error instanceof ProviderRejection) return this.release(error);
      await this.report({ kind: 'billable_failure', code: 'intelligence_interrupted', costMicrodollars: null, model: null, inputTokens: null, outputTokens: null });
      throw error;
    }
  }

  /**
   * Runs what follows acceptance. Its settlement is stored, then settled at its cost; a
   * ProviderInterruption is a billable failure charged `charge(interruption)` and refused with its
   * receipt. Answers the recorded reservation (whose receipt the operation returns) and what was stored.
   */
  async settle<S extends Settlement>(work: () => Promise<S>, charge: (interruption: ProviderInterruption) => FailureCharge): Promise<{ recorded: Reservation; stored: S['stored'] }> {
    let settlement: S;
    try {
      settlement = await work();
    } catch (error) {
      if (!(error instanceof ProviderInterruption)) throw error;
      throw billableProblem(error.code, error.message, await this.fail(error, charge(error)));
    }
    const { stored, bytes, ...usage } = settlement;
    const deadline = Date.now() + STORE_RETRY_MS;
    try {
      await this.retrying(() => storeResult(this.deps.db, this.workflowId, stored, bytes ?? null), deadline, 'storing a completed result');
    } catch (error) {
      // The answer cannot be kept, so it cannot be given or replayed: a billable failure at what it
      // used, recorded now rather than at the completion deadline, and the outage answered (503).
      await this.fail(new ProviderInterruption('intelligence_interrupted', 'The result could not be stored.'), {
        costMicrodollars: usage.costMicrodollars,
        model: usage.model,
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
      });
      throw error;
    }
    const recorded = await this.record({ kind: 'settle', ...usage }, deadline);
    if (recorded?.state !== 'settled') throw billableProblem('intelligence_interrupted', 'The request completed after its deadline was recorded.', receiptOrNull(recorded));
    return { recorded, stored };
  }

  /**
   * Settles the request in Postgres with the compare-and-set the workflow's update would run
   * (ledger.completeReservation): one charge whoever moves the row first, this or the workflow's
   * completion deadline; a repeat after a lost commit answer finds the row as it was left. The
   * workflow is then told with a signal, best effort (a lost one leaves its timer to find the row
   * settled). When Postgres cannot be reached by `deadline`, or the commit fails otherwise, the
   * settlement goes to the workflow, whose ledger step retries until Postgres answers (as before).
   */
  private async record(settlement: Extract<CompletionReport, { kind: 'settle' }>, deadline: number): Promise<Reservation | null> {
    let recorded: Reservation | null;
    try {
      recorded = await this.retrying(() => completeReservation(this.deps.db, this.workflowId, settlement), deadline, 'settling a completed request');
    } catch (error) {
      this.deps.log.warn({ err: error, workflowId: this.workflowId }, 'settling a completed request failed in the API; reporting it to the workflow');
      return this.deps.workflows.complete(this.workflowId, settlement);
    }
    if (recorded?.state === 'settled') {
      const overrun = overrunWarning(recorded);
      if (overrun) this.deps.log.warn(overrun.fields, overrun.message);
      await this.deps.workflows.recorded(this.workflowId, 'settled').catch((error: unknown) => {
        this.deps.log.warn({ err: error, workflowId: this.workflowId }, 'the settled request could not be signalled to its workflow; its timer will find it settled');
      });
    }
    return recorded;
  }

  /** Runs `step` (one statement or transaction), retried while Postgres is unreachable, until `deadline`. */
  private async retrying<T>(step: () => Promise<T>, deadline: number, what: string): Promise<T> {
    for (let wait = 200; ; wait = Math.min(wait * 2, 2_000)) {
      try {
        return await step();
      } catch (error) {
        if (unreachableReason(error) === null || Date.now() + wait > deadline) throw error;
        this.deps.log.warn({ workflowId: this.workflowId, retryInMs: wait }, `${what}: database unreachable, retrying`);
        await sleep(wait);
      }
    }
  }

  /** Records an accepted request that ended without a result as a billable failure; its receipt, or null when the report did not land. */
  async fail(interruption: ProviderInterruption, charge: FailureCharge): Promise<UsageReceipt | null> {
    return receiptOrNull(await this.report({ kind: 'billable_failure', code: interruption.code, ...charge }));
  }

  /** Releases the reservation (nothing was generated) and refuses with the rejection's code. */
  async release(rejection: ProviderRejection): Promise<never> {
    await this.report({ kind: 'release', code: rejection.code });
    if (rejection.code === 'client_disconnected') throw new AppError('intelligence_interrupted', 'The client went away before the provider accepted; released, nothing charged.');
    // An unread image URL says why (fetchImageUrl's reason, the service's own words, never the URL); the
    // provider's refusals keep the catalog's detail.
    const detail = rejection.code === 'intelligence_output_unreadable' ? rejection.message : undefined;
    throw new AppError(rejection.code, detail, rejection.retryAfterSeconds !== null ? { headers: { 'retry-after': String(rejection.retryAfterSeconds) } } : {});
  }

  /** Reports an end the caller will not wait on; a failure is logged, never thrown: the workflow's timers cover it. */
  private async report(completion: CompletionReport): Promise<Reservation | null> {
    try {
      return await this.deps.workflows.complete(this.workflowId, completion);
    } catch (error) {
      this.deps.log.warn({ err: error, workflowId: this.workflowId, completion: completion.kind }, 'intelligence completion could not be reported; the workflow timers will record it');
      return null;
    }
  }
}

/** A metered request opened: held (call the provider, then settle), or already settled under its key (replay the stored result). */
export type Metered = { kind: 'held'; held: HeldRequest } | { kind: 'settled'; reservation: Reservation };

/**
 * Opens a metered request: starts its workflow, then reserves its bounded cost against the
 * organization's budget, the installation's sublimit and the concurrency bound (ledger.reserve),
 * or finds the settled request of the same key and body (another body is idempotency_key_reused).
 */
export async function meter(deps: MeteringDeps, caller: MeteredCaller, idempotencyKey: string, request: MeteredRequest): Promise<Metered> {
  const workflowId = `intelligence-usage-${randomUUID()}`;
  const started = Date.now();
  // The workflow holds the reservation's timers, so nothing is reserved without it.
  await deps.workflows.start(workflowId, deps.timing);
  try {
    const outcome = await reserve(deps.db, {
      id: randomUUID(),
      organizationId: caller.organizationId,
      installationId: caller.installationId,
      operation: request.operation,
      keyHash: hashSecret(idempotencyKey),
      fingerprint: fingerprintOf({ operation: request.operation, body: request.body }),
      costMicrodollars: request.costMicrodollars,
      workflowId,
      ttlMs: deps.timing.reservationTtlMs,
      // Half the timer: a reservation can never be made after the timer looked for it.
      reserveBy: started + deps.timing.reservationTtlMs / 2,
    });
    if (outcome.kind === 'settled') {
      deps.workflows.endUnreserved(workflowId);
      return { kind: 'settled', reservation: outcome.reservation };
    }
    return { kind: 'held', held: new HeldRequest(deps, workflowId, outcome.reservation) };
  } catch (error) {
    deps.workflows.endUnreserved(workflowId);
    throw error;
  }
}
