// The life of one metered request (workflows/intelligence-usage.ts) on the time-skipping server with
// a stubbed ledger: the reservation timer, the completion deadline, a report before either, a
// repeated report, the API's "not reserved" signal and its "recorded" signal (a settlement it
// committed itself). Each ends with exactly the ledger
// transitions the spec's table asks for, and no other.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { Completion, Reservation, ReservationState } from '../../domain/intelligence/ledger.ts';
import { completeUpdate, intelligenceUsage, notReservedSignal, recordedSignal, stageQuery } from '../../workflows/intelligence-usage.ts';
import { useTimeSkipping } from '../support/time-skipping.ts';

const temporal = useTimeSkipping();
const input = { reservationTtlMs: 60_000, completionDeadlineMs: 180_000 };

/** A ledger whose reservation starts in `initial` and moves as the real compare-and-set would. */
function ledger(initial: ReservationState | null) {
  let state = initial;
  const calls: Completion['kind'][] = [];
  const allowed: Record<Completion['kind'], ReservationState[]> = {
    settle: ['dispatched'],
    release: ['reserved', 'dispatched'],
    billable_failure: ['dispatched'],
    expire: ['reserved'],
  };
  const next: Record<Completion['kind'], ReservationState> = { settle: 'settled', release: 'released', billable_failure: 'billable_failure', expire: 'expired' };
  const row = (s: ReservationState) => ({ id: randomUUID(), state: s }) as unknown as Reservation;
  return {
    calls,
    activities: {
      async completeIntelligenceReservation({ completion }: { workflowId: string; completion: Completion }) {
        calls.push(completion.kind);
        if (state === null) return null;
        if (allowed[completion.kind].includes(state)) state = next[completion.kind];
        return row(state);
      },
    },
  };
}

const start = (client: Client, taskQueue: string) =>
  client.workflow.start(intelligenceUsage, { taskQueue, workflowId: `intelligence-usage-${randomUUID()}`, args: [input] });

describe('intelligenceUsage', () => {
  it('releases an undispatched reservation when its timer fires', async () => {
    const { activities, calls } = ledger('reserved');
    const result = await temporal.run(activities, async ({ client, taskQueue }) => (await start(client, taskQueue)).result());
    expect(result).toBe('expired');
    expect(calls).toEqual(['expire']);
  });

  it('records a dispatched request nobody reports as a billable failure at its completion deadline', async () => {
    const { activities, calls } = ledger('dispatched');
    const result = await temporal.run(activities, async ({ client, taskQueue }) => (await start(client, taskQueue)).result());
    expect(result).toBe('billable_failure');
    expect(calls).toEqual(['expire', 'billable_failure']);
  });

  it('records a report once; a concurrent second report answers the same record without a second transition', async () => {
    const { activities, calls } = ledger('dispatched');
    await temporal.run(activities, async ({ client, taskQueue }) => {
      const handle = await start(client, taskQueue);
      const report = { kind: 'settle', costMicrodollars: 10, model: 'm', inputTokens: 1, outputTokens: 1, images: null } as const;
      // Two reports at once (a retried call): one transition, both answered with its record.
      const [first, again] = await Promise.all([handle.executeUpdate(completeUpdate, { args: [report] }), handle.executeUpdate(completeUpdate, { args: [report] })]);
      expect(first).toEqual(again);
      expect(await handle.result()).toBe('settled');
      expect(await handle.query(stageQuery)).toBe('settled');
    });
    expect(calls).toEqual(['settle']);
  });

  it('a refused reservation ends at once, making sure nothing is held', async () => {
    const { activities, calls } = ledger(null);
    const result = await temporal.run(activities, async ({ client, taskQueue }) => {
      const handle = await start(client, taskQueue);
      await handle.signal(notReservedSignal);
      return handle.result();
    });
    expect(result).toBe('never_reserved');
    expect(calls).toEqual(['expire']);
  });

  it('a report arriving after the timer found the request dispatched is still the one recorded', async () => {
    const { activities, calls } = ledger('dispatched');
    await temporal.run(activities, async ({ client, taskQueue, env }) => {
      const handle = await start(client, taskQueue);
      await env.sleep(input.reservationTtlMs + 1_000);
      await handle.executeUpdate(completeUpdate, { args: [{ kind: 'billable_failure', code: 'client_disconnected', costMicrodollars: null, model: null, inputTokens: null, outputTokens: null }] });
      expect(await handle.result()).toBe('billable_failure');
    });
    expect(calls).toEqual(['expire', 'billable_failure']);
  });

  it('a settlement the API committed and signalled ends the workflow at once, with no ledger step of its own', async () => {
    const { activities, calls } = ledger('settled');
    await temporal.run(activities, async ({ client, taskQueue }) => {
      const handle = await start(client, taskQueue);
      await handle.signal(recordedSignal, { state: 'settled' });
      expect(await handle.result()).toBe('settled');
      expect(await handle.query(stageQuery)).toBe('settled');
    });
    expect(calls).toEqual([]);
  });

  it('a settlement signalled while the completion deadline runs ends the workflow before it', async () => {
    const { activities, calls } = ledger('dispatched');
    await temporal.run(activities, async ({ client, taskQueue, env }) => {
      const handle = await start(client, taskQueue);
      await env.sleep(input.reservationTtlMs + 1_000);
      await handle.signal(recordedSignal, { state: 'settled' });
      expect(await handle.result()).toBe('settled');
    });
    // The timer's step found it dispatched; nothing after the signal (no completion_lost).
    expect(calls).toEqual(['expire']);
  });

  it('a lost signal leaves the timer to find the settled row: nothing is charged twice', async () => {
    const { activities, calls } = ledger('settled');
    const result = await temporal.run(activities, async ({ client, taskQueue }) => (await start(client, taskQueue)).result());
    expect(result).toBe('settled');
    expect(calls).toEqual(['expire']);
  });
});
