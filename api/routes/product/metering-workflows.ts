// The metering workflow of a request, on Temporal (domain/intelligence/metering.ts runs the
// lifecycle): started before anything is reserved, told how the request ended (an update), told that
// the API settled it itself (a signal), or told that nothing was reserved. Measured on this
// machine: an update-with-start that reserved inside the workflow took ~70 ms p50, a start ~5 ms
// (docs/intelligence.md, decision 53), so the reservation is the API's.
import type { Client } from '@temporalio/client';
import { completeUpdate, intelligenceUsage, notReservedSignal, recordedSignal } from '../../../workflows/intelligence-usage.ts';
import type { MeteringWorkflows } from '../../../domain/intelligence/metering.ts';
import { boundedTemporalCall } from '../shared/workflow-starts.ts';

export function temporalMeteringWorkflows(temporal: Client, taskQueue: string): MeteringWorkflows {
  return {
    // Temporal is needed now. Bounded: a 503 the caller can retry, never a wait of Temporal's own ~20 s retries.
    start: async (workflowId, timing) => {
      await boundedTemporalCall(temporal, 'The metering workflow could not be started in time; nothing was reserved or charged.', () =>
        temporal.workflow.start(intelligenceUsage, {
          workflowId,
          taskQueue,
          args: [{ reservationTtlMs: timing.reservationTtlMs, completionDeadlineMs: timing.completionDeadlineMs }],
        }),
      );
    },
    complete: (workflowId, report) => temporal.workflow.getHandle(workflowId).executeUpdate(completeUpdate, { args: [report] }),
    // A signal, not an update: the settlement is already committed, so nothing waits on the worker.
    // Bounded like a start (boundedTemporalCall), so an outage delays an answer by its wait at most.
    recorded: async (workflowId, state) => {
      await boundedTemporalCall(temporal, 'The settled request could not be signalled to its workflow in time.', () =>
        temporal.workflow.getHandle(workflowId).signal(recordedSignal, { state }),
      );
    },
    endUnreserved: (workflowId) => {
      temporal.workflow
        .getHandle(workflowId)
        .signal(notReservedSignal)
        .catch(() => undefined);
    },
  };
}
