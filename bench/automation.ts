// Automation benchmark: proposal create → approve → executed receipt, end to end through the API,
// the review workflow and the Forge execution, for N proposals, split into its two halves (create →
// pending_review, approve → executed receipt); and in the same run the bare cost of starting and
// completing a one-activity workflow (scheduledTriggerFire) with the Temporal client. Targets: the
// first half within 1.5×, the second within 2× of the bare workflow at p50.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { DatabasePool } from '../db/pool.ts';
import { createAccount, issueAccessToken } from '../domain/identity/accounts.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { addMember, createWorkspace } from '../domain/identity/workspaces.ts';
import { scheduledTriggerFire } from '../workflows/scheduled-trigger.ts';

export type Percentiles = { name: string; count: number; p50: number; p95: number; mean: number };

function percentiles(name: string, samples: number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  return { name, count: sorted.length, p50: at(50), p95: at(95), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
}

async function json(res: Response): Promise<Record<string, unknown>> {
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

export async function automationSuite(input: { db: DatabasePool; baseUrl: string; temporalAddress: string; taskQueue: string; proposals: number; concurrency: number }): Promise<Percentiles[]> {
  const { db } = input;
  const proposer = await createAccount(db, { email: `bench-proposer-${randomUUID()}@example.test`, displayName: 'Proposer', plan: 'team' });
  const reviewer = await createAccount(db, { email: `bench-reviewer-${randomUUID()}@example.test`, displayName: 'Reviewer', plan: 'team' });
  const proposerToken = (await issueAccessToken(db, { accountId: proposer.id, name: 'bench' })).token;
  const reviewerToken = (await issueAccessToken(db, { accountId: reviewer.id, name: 'bench' })).token;
  const ws = await createWorkspace(db, { name: 'Bench automation', ownerAccountId: proposer.id });
  await addMember(db, { workspaceId: ws.id, accountId: reviewer.id, role: 'reviewer' });
  const vault = await createVault(db, { name: 'Bench automation vault', ownerWorkspaceId: ws.id });
  const { mappingId } = await createMapping(db, { vaultId: vault.id });

  const headers = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
  const proposalUrl = (id: string) => `${input.baseUrl}/api/dev/automation/proposals/${id}`;
  // Follows the proposal as a client would: blocking reads that wait out the states it passes
  // through on the way to the ones awaited (decisions 103 and 119).
  const wait = async (id: string, seen: string, states: string[], passing: string[]) => {
    for (let state = seen; ; ) {
      if (states.includes(state)) return state;
      const waitedOut = [...new Set([state, ...passing])].join(',');
      state = (await json(await fetch(`${proposalUrl(id)}?changedFrom=${waitedOut}&wait=20`, { headers: headers(proposerToken) })))['state'] as string;
    }
  };

  const toPending: number[] = [];
  const toReceipt: number[] = [];
  const one = async (i: number) => {
    const started = performance.now();
    const created = await json(
      await fetch(`${input.baseUrl}/api/dev/automation/proposals`, {
        method: 'POST',
        headers: { ...headers(proposerToken), 'idempotency-key': `bench-${i}-${randomUUID()}` },
        body: JSON.stringify({ workspaceId: ws.id, bridge: 'bench', action: { kind: 'note.write', mappingId, path: `Bench/Proposal ${i}.md`, content: `# ${i}\n` } }),
      }),
    );
    const id = created['id'] as string;
    // The 201 says pending_review (the review is opened with the proposal, decision 96).
    await wait(id, created['state'] as string, ['pending_review'], []);
    const reviewable = performance.now();
    toPending.push(reviewable - started);
    const approved = await json(await fetch(`${proposalUrl(id)}/approve`, { method: 'POST', headers: headers(reviewerToken), body: '{}' }));
    const done = await wait(id, approved['state'] as string, ['executed', 'failed'], ['approved', 'executing']);
    if (done !== 'executed') throw new Error(`proposal ${id} ${done}`);
    const finished = performance.now();
    toReceipt.push(finished - reviewable);
    return finished - started;
  };

  const endToEnd: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: input.concurrency }, async () => {
      while (next < input.proposals) endToEnd.push(await one(next++));
    }),
  );

  const connection = await Connection.connect({ address: input.temporalAddress });
  const client = new Client({ connection });
  const bare: number[] = [];
  const bareIds: string[] = [];
  next = 0;
  await Promise.all(
    Array.from({ length: input.concurrency }, async () => {
      while (next++ < input.proposals) {
        const started = performance.now();
        const workflowId = `bench-bare-${randomUUID()}`;
        await client.workflow.execute(scheduledTriggerFire, { taskQueue: input.taskQueue, workflowId, args: [{ triggerId: randomUUID() }] });
        bare.push(performance.now() - started);
        bareIds.push(workflowId);
      }
    }),
  );
  // Read after the timing: how long the bare workflows' tasks waited in the server between being
  // scheduled and reaching the worker (a throttled history queue shows here first, decision 116).
  const waits = await workflowTaskWaits(client, bareIds);
  await connection.close();
  const stats = [
    percentiles('proposal create → approve → executed receipt', endToEnd),
    percentiles('bare one-activity workflow (start → result)', bare),
    percentiles('proposal create → pending_review', toPending),
    percentiles('proposal approve → executed receipt', toReceipt),
    percentiles('bare workflow: a workflow task, scheduled → picked up', waits),
  ];
  const [, base, pending, receipt] = stats as [Percentiles, Percentiles, Percentiles, Percentiles];
  const ratio = (of: Percentiles, key: 'p50' | 'p95') => (of[key] / base[key]).toFixed(2);
  console.log(
    `automation (n=${input.proposals}) vs bare workflow: create → pending_review p50 ${ratio(pending, 'p50')}x, p95 ${ratio(pending, 'p95')}x (target 1.5x); ` +
      `approve → receipt p50 ${ratio(receipt, 'p50')}x, p95 ${ratio(receipt, 'p95')}x (target 2x)`,
  );
  return stats;
}

/** Each workflow task's wait between WorkflowTaskScheduled and WorkflowTaskStarted, from the workflows' histories. */
async function workflowTaskWaits(client: Client, workflowIds: readonly string[]): Promise<number[]> {
  const millis = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
  const waits: number[] = [];
  for (const workflowId of workflowIds) {
    let scheduledAt: number | null = null;
    for (const event of (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? []) {
      if (event.eventType === proto.temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED) scheduledAt = millis(event.eventTime);
      else if (event.eventType === proto.temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED && scheduledAt !== null) waits.push(millis(event.eventTime) - scheduledAt);
    }
  }
  return waits;
}
