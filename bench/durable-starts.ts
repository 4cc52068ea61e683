// Durable workflow starts (issue 25): what the outbox costs a request, and how fast the relay drains
// what piled up while Temporal was away.
// - Request path: proposal create and event ingest (one subscribed endpoint) p50 through the API
//   with Temporal up, beside the outbox's own statements (the intent INSERT in the request's
//   transaction and the UPDATE that marks it started), which is all the outbox adds to a request.
// - Drain: with Temporal stopped, proposals and events are written through the domain (each records
//   its starts exactly as a request does); Temporal is started again and the clock runs until the
//   API's relay has made every pending start.
import { randomUUID } from 'node:crypto';
import type { DatabasePool } from '../db/pool.ts';
import { insertProposal } from '../domain/automation/proposals.ts';
import { ingestEvent } from '../domain/automation/events.ts';
import { createAccount, issueAccessToken } from '../domain/identity/accounts.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { createWorkspace } from '../domain/identity/workspaces.ts';
import { markStarted, pendingIntents, recordStartIntents } from '../domain/workflow-intents.ts';
import { timed } from './timing.ts';
import type { Stats } from './timing.ts';

export type StartsSetup = { db: DatabasePool; baseUrl: string; receiverUrl: string };

async function ok(res: Response): Promise<Record<string, unknown>> {
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

export async function seedStartsWorkspace(input: StartsSetup) {
  const owner = await createAccount(input.db, { email: `bench-starts-${randomUUID()}@example.test`, displayName: 'Starts', plan: 'team' });
  const token = (await issueAccessToken(input.db, { accountId: owner.id, name: 'bench' })).token;
  const workspaceId = (await createWorkspace(input.db, { name: 'Bench starts', ownerAccountId: owner.id })).id;
  const vault = await createVault(input.db, { name: 'Bench starts vault', ownerWorkspaceId: workspaceId });
  const { mappingId } = await createMapping(input.db, { vaultId: vault.id });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  await ok(await fetch(`${input.baseUrl}/api/dev/automation/endpoints`, { method: 'POST', headers, body: JSON.stringify({ workspaceId, url: input.receiverUrl, eventTypes: ['bench.tick'] }) }));
  return { accountId: owner.id, token, workspaceId, mappingId, headers };
}

/** p50s of the request path and of the outbox's own two statements, sequentially (one at a time). */
export async function requestPathCost(input: StartsSetup, seeded: Awaited<ReturnType<typeof seedStartsWorkspace>>, samples: number): Promise<{ name: string; stats: Stats }[]> {
  // bench/timing.ts's sequential timing; each send checks its own answer (ok() throws on a non-2xx).
  const time = (send: () => Promise<void>) => timed(() => send().then(() => ({ statusCode: 200, body: '' })), samples, [200], 5);
  let n = 0;
  const propose = () =>
    fetch(`${input.baseUrl}/api/dev/automation/proposals`, {
      method: 'POST',
      headers: { ...seeded.headers, 'idempotency-key': `bench-${n}-${randomUUID()}` },
      body: JSON.stringify({ workspaceId: seeded.workspaceId, bridge: 'bench', action: { kind: 'note.write', mappingId: seeded.mappingId, path: `Bench/Start ${n++}.md`, content: '# x\n' } }),
    })
      .then(ok)
      .then(() => undefined);
  const ingest = () =>
    fetch(`${input.baseUrl}/api/dev/automation/events`, {
      method: 'POST',
      headers: { ...seeded.headers, 'idempotency-key': `bench-event-${n++}-${randomUUID()}` },
      body: JSON.stringify({ workspaceId: seeded.workspaceId, type: 'bench.tick', source: 'bench', data: { n } }),
    })
      .then(ok)
      .then(() => undefined);
  const outbox = async () => {
    const workflowId = `bench-outbox-${randomUUID()}`;
    await input.db.transaction((tx) => recordStartIntents(tx, [{ workflowId, kind: 'bench', input: { n: n++ } }]));
    await markStarted(input.db, [workflowId]);
  };
  return [
    { name: 'POST /automation/proposals (Temporal up: review started in the request)', stats: await time(propose) },
    { name: 'POST /automation/events, one subscribed endpoint (delivery started in the request)', stats: await time(ingest) },
    { name: "the outbox's own statements (intent INSERT in a transaction + mark started)", stats: await time(outbox) },
  ];
}

/** Writes proposals and events while Temporal is down (their starts recorded, none made). */
export async function pileUp(db: DatabasePool, seeded: Awaited<ReturnType<typeof seedStartsWorkspace>>, proposals: number, events: number): Promise<number> {
  for (let i = 0; i < proposals; i++) {
    await db.transaction((tx) =>
      insertProposal(tx, {
        id: randomUUID(),
        workspaceId: seeded.workspaceId,
        proposer: { kind: 'account', id: seeded.accountId },
        actingForAccountId: null,
        bridge: 'bench',
        action: { kind: 'note.write', mappingId: seeded.mappingId, path: `Bench/Piled ${i}.md`, content: '# piled\n' },
        summary: `Piled ${i}`,
        expiresInSeconds: 3_600,
      }),
    );
  }
  for (let i = 0; i < events; i++) {
    await ingestEvent(db, { workspaceId: seeded.workspaceId, type: 'bench.tick', source: 'bench', occurredAt: null, data: { piled: i }, idempotencyKey: null, accountId: seeded.accountId });
  }
  return (await pendingIntents(db, 1)).summary.pending;
}

/** Milliseconds from now until no start is pending (polled every 50 ms). */
export async function drainTime(db: DatabasePool, timeoutMs = 180_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    if ((await pendingIntents(db, 1)).summary.pending === 0) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error('the relay did not drain the pending starts in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
