// How a metered request is held in the API process: the workflow first (so a timer exists before
// anything is reserved), the reservation in Postgres (milliseconds, on the path to the first
// token), the dispatch mark, then the end reported to the workflow, which records it. Measured on
// this machine: an update-with-start that reserved inside the workflow took ~70 ms p50, a start
// ~5 ms (docs/intelligence.md, decision 53).
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { completeUpdate, intelligenceUsage, notReservedSignal } from '../../../workflows/intelligence-usage.ts';
import type { CompletionReport } from '../../../workflows/intelligence-usage.ts';
import { markDispatched, reserve } from '../../../domain/intelligence/ledger.ts';
import type { Reservation } from '../../../domain/intelligence/ledger.ts';
import { hashSecret } from '../../../domain/secrets.ts';
import type { MeteringTiming } from '../../../domain/intelligence/setup.ts';
import type { RuntimeCaller } from './kit.ts';
import { boundedTemporalCall } from '../shared/workflow-starts.ts';


export type OpenedRun =
  | { kind: 'reserved'; workflowId: string; reservation: Reservation }
  | { kind: 'settled'; workflowId: string; reservation: Reservation };

export class MeteredRuns {
  private readonly db: DatabasePool;
  private readonly temporal: Client;
  private readonly taskQueue: string;
  private readonly timing: MeteringTiming;

  constructor(db: DatabasePool, temporal: Client, taskQueue: string, timing: MeteringTiming) {
    this.db = db;
    this.temporal = temporal;
    this.taskQueue = taskQueue;
    this.timing = timing;
  }

  /** Starts the request's workflow and reserves its maximum cost (or replays / refuses, see ledger.reserve). */
  async open(caller: RuntimeCaller, request: { operation: string; idempotencyKey: string; fingerprint: string; costMicrodollars: number }): Promise<OpenedRun> {
    const workflowId = `intelligence-usage-${randomUUID()}`;
    const started = Date.now();
    // The workflow holds the reservation's timers, so nothing is reserved without it: Temporal is
    // needed now. Bounded: a 503 the caller can retry, never a wait of Temporal's own ~20 s retries.
    await boundedTemporalCall(this.temporal, 'The metering workflow could not be started in time; nothing was reserved or charged.', () =>
      this.temporal.workflow.start(intelligenceUsage, {
        workflowId,
        taskQueue: this.taskQueue,
        args: [{ reservationTtlMs: this.timing.reservationTtlMs, completionDeadlineMs: this.timing.completionDeadlineMs }],
      }),
    );
    try {
      const outcome = await reserve(this.db, {
        id: randomUUID(),
        organizationId: caller.organizationId,
        installationId: caller.installationId,
        operation: request.operation,
        keyHash: hashSecret(request.idempotencyKey),
        fingerprint: request.fingerprint,
        costMicrodollars: request.costMicrodollars,
        workflowId,
        ttlMs: this.timing.reservationTtlMs,
        // Half the timer: a reservation can never be made after the timer looked for it.
        reserveBy: started + this.timing.reservationTtlMs / 2,
      });
      if (outcome.kind === 'settled') this.endUnreserved(workflowId);
      return { ...outcome, workflowId };
    } catch (error) {
      this.endUnreserved(workflowId);
      throw error;
    }
  }

  /** reserved → dispatched, just before the provider call. */
  async dispatch(run: { workflowId: string }): Promise<void> {
    await markDispatched(this.db, run.workflowId);
  }

  /** Reports how the request ended; the workflow records it and answers the reservation as recorded. */
  async complete(run: { workflowId: string }, report: CompletionReport): Promise<Reservation | null> {
    return this.temporal.workflow.getHandle(run.workflowId).executeUpdate(completeUpdate, { args: [report] });
  }

  /** Nothing is held under this workflow: let it end now rather than at its timer (best effort; the timer remains). */
  private endUnreserved(workflowId: string): void {
    this.temporal.workflow
      .getHandle(workflowId)
      .signal(notReservedSignal)
      .catch(() => undefined);
  }
}
