// Following a proposal without polling (GET /api/dev/automation/proposals/:id?changedFrom=S&wait=N,
// decision 103) over real HTTP on real Postgres: the answer comes when a change of the proposal
// commits, whoever wrote it; at once when the state already differs; a list of states
// (changedFrom=S1,S2, decision 119) is waited out whole; after `wait` when nothing
// changes; at once, answering the current state, when the app closes; and a change committed while
// the process's LISTEN connection was lost is read once it listens again; a process without one
// reads every second; a process holds at most its bound of waits; a wait whose listener has stopped ends at once. Another account's proposal is refused as a missing one,
// before any wait, and so is a member who lost access while waiting; every parameter is checked; a wait is charged as the one request it is.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { transitionProposal } from '../domain/automation/proposal-states.ts';
import { createAccount, issueAccessToken } from '../domain/identity/accounts.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { addMember, createWorkspace, removeMember } from '../domain/identity/workspaces.ts';
import { emptyRow } from '../db/row-schemas.ts';
import { NotificationListener } from '../db/notification-listener.ts';
import { ProposalWaits } from '../domain/automation/proposal-waits.ts';
import { proposalChangesChannel } from '../domain/console/live.ts';
import { buildTestApp } from './support/app.ts';
import { storedProposal } from './support/fixtures.ts';
import { useTestApp } from './support/harness.ts';

const ctx = useTestApp({ listen: true });

type Space = { id: string; mappingId: string };
let ownerId: string;
let reviewerToken: string;
let strangerToken: string;
let garden: Space;

async function account(name: string): Promise<{ id: string; token: string }> {
  const created = await createAccount(ctx.db.pool, { email: `${randomUUID()}@example.test`, displayName: name, plan: 'developer_agent' });
  return { id: created.id, token: (await issueAccessToken(ctx.db.pool, { accountId: created.id, name: 'wait' })).token };
}

/** A proposal pending review in the garden, written through the domain as the gateway's transaction does. */
async function propose(): Promise<string> {
  const id = await storedProposal(ctx.db.pool, { workspaceId: garden.id, mappingId: garden.mappingId, proposerAccountId: ownerId });
  await transitionProposal(ctx.db.pool, { proposalId: id, state: 'pending_review' });
  return id;
}

const read = (id: string, query: string, token = reviewerToken, base = ctx.url) => fetch(`${base}/api/dev/automation/proposals/${id}${query}`, { headers: { authorization: `Bearer ${token}` } });
const stateOf = async (res: Response) => ((await res.json()) as { state: string }).state;
const charged = (accountId: string) =>
  ctx.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT month_count AS n FROM usage_counters WHERE account_id = ${accountId} AND interface = 'rest'`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the promise is still unsettled after `ms`. */
async function stillWaiting(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([promise.then(() => false, () => false), sleep(ms).then(() => true)]);
}

let reviewerId: string;
beforeAll(async () => {
  const owner = await account('Olive Owner');
  ownerId = owner.id;
  const reviewer = await account('Rui Reviewer');
  reviewerId = reviewer.id;
  reviewerToken = reviewer.token;
  strangerToken = (await account('Sam Stranger')).token;
  const ws = await createWorkspace(ctx.db.pool, { name: 'Garden', ownerAccountId: ownerId });
  const vault = await createVault(ctx.db.pool, { name: 'Garden vault', ownerWorkspaceId: ws.id });
  garden = { id: ws.id, mappingId: (await createMapping(ctx.db.pool, { vaultId: vault.id })).mappingId };
  await addMember(ctx.db.pool, { workspaceId: garden.id, accountId: reviewerId, role: 'reviewer' });
});

describe('a blocking read of a proposal', () => {
  it('answers when a change of the proposal commits, with the new state and its history', async () => {
    const id = await propose();
    const answer = read(id, '?changedFrom=pending_review&wait=20');
    expect(await stillWaiting(answer, 300)).toBe(true);
    await transitionProposal(ctx.db.pool, { proposalId: id, state: 'approved', actorAccountId: reviewerId });
    const res = await answer;
    expect(res.status).toBe(200);
    const body = (await res.json()) as { state: string; history: Array<{ state: string }> };
    expect(body.state).toBe('approved');
    expect(body.history.map((h) => h.state)).toContain('approved');
  });

  it('follows a proposal named with its id in capitals (announcements spell it in lower case)', async () => {
    const id = await propose();
    const answer = read(id.toUpperCase(), '?changedFrom=pending_review&wait=20');
    expect(await stillWaiting(answer, 300)).toBe(true);
    await transitionProposal(ctx.db.pool, { proposalId: id, state: 'approved', actorAccountId: reviewerId });
    const res = await Promise.race([answer, sleep(5_000).then(() => null)]);
    expect(res?.status).toBe(200);
    expect(await stateOf(res!)).toBe('approved');
  });

  it('refuses a member who lost access while waiting, as a missing proposal, when the proposal changes', async () => {
    const id = await propose();
    const leaver = await account('Lee Leaver');
    await addMember(ctx.db.pool, { workspaceId: garden.id, accountId: leaver.id, role: 'viewer' });
    const answer = read(id, '?changedFrom=pending_review&wait=20', leaver.token);
    expect(await stillWaiting(answer, 300)).toBe(true);
    await removeMember(ctx.db.pool, { workspaceId: garden.id, accountId: leaver.id });
    await transitionProposal(ctx.db.pool, { proposalId: id, state: 'approved', actorAccountId: reviewerId });
    const res = await answer;
    expect(res.status).toBe(404);
    expect(((await res.json()) as { code: string }).code).toBe('proposal_not_found');
  });

  it("is not woken by another proposal's changes", async () => {
    const id = await propose();
    const other = await propose();
    const answer = read(id, '?changedFrom=pending_review&wait=20');
    await sleep(200);
    await transitionProposal(ctx.db.pool, { proposalId: other, state: 'approved', actorAccountId: reviewerId });
    expect(await stillWaiting(answer, 500)).toBe(true);
    await transitionProposal(ctx.db.pool, { proposalId: id, state: 'rejected', actorAccountId: reviewerId });
    expect(await stateOf(await answer)).toBe('rejected');
  });

  it('waits out every state of a comma-separated list and answers with the first state outside it', async () => {
    const id = await propose();
    await transitionProposal(ctx.db.pool, { proposalId: id, state: 'approved', actorAccountId: reviewerId });
    const answer = read(id, '?changedFrom=approved,executing&wait=20');
    expect(await stillWaiting(answer, 300)).toBe(true);
    await transitionProposal(ctx.db.pool, { proposalId: id, state: 'executing', actorAccountId: reviewerId });
    expect(await stillWaiting(answer, 500)).toBe(true);
    await transitionProposal(ctx.db.pool, { proposalId: id, state: 'executed', actorAccountId: reviewerId });
    const res = await answer;
    expect(res.status).toBe(200);
    const body = (await res.json()) as { state: string; history: Array<{ state: string }> };
    expect(body.state).toBe('executed');
    expect(body.history.map((h) => h.state)).toEqual(expect.arrayContaining(['approved', 'executing', 'executed']));
  });

  it.each(['approved', 'approved,executing'])('answers at once when the state is already outside changedFrom=%s', async (changedFrom) => {
    const id = await propose();
    const answer = read(id, `?changedFrom=${changedFrom}&wait=30`);
    expect(await stillWaiting(answer, 2_000)).toBe(false);
    expect(await stateOf(await answer)).toBe('pending_review');
  });

  it('answers after `wait` seconds with the state unchanged when nothing happens', async () => {
    const id = await propose();
    const started = Date.now();
    const res = await read(id, '?changedFrom=pending_review&wait=1');
    expect(res.status).toBe(200);
    expect(await stateOf(res)).toBe('pending_review');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('is charged once, as the one request it is', async () => {
    const id = await propose();
    const before = await charged(reviewerId);
    const answer = read(id, '?changedFrom=pending_review&wait=20');
    await sleep(300);
    await transitionProposal(ctx.db.pool, { proposalId: id, state: 'approved', actorAccountId: reviewerId });
    await (await answer).text();
    expect(await charged(reviewerId)).toBe(before + 1);
  });

  it("refuses another account's proposal exactly like a missing one, without waiting", async () => {
    const id = await propose();
    const [foreign, missing] = await Promise.all([read(id, '?changedFrom=pending_review&wait=30', strangerToken), read(randomUUID(), '?changedFrom=pending_review&wait=30', strangerToken)]);
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    const [a, b] = (await Promise.all([foreign.json(), missing.json()])) as [{ code: string; type: string; title: string }, { code: string; type: string; title: string }];
    expect(a.code).toBe('proposal_not_found');
    expect({ code: a.code, type: a.type, title: a.title }).toEqual({ code: b.code, type: b.type, title: b.title });
  });

  it.each([
    ['an unknown state', '?changedFrom=pondering'],
    ['an unknown state in a list', '?changedFrom=approved,pondering'],
    ['an empty member of a list', '?changedFrom=approved,,executing'],
    ['an empty changedFrom', '?changedFrom='],
    ['a list with a trailing comma', '?changedFrom=approved,'],
    ['changedFrom given twice', '?changedFrom=approved&changedFrom=executing'],
    ['wait 0', '?changedFrom=pending_review&wait=0'],
    ['wait over 30', '?changedFrom=pending_review&wait=31'],
    ['wait not a number', '?changedFrom=pending_review&wait=soon'],
    ['wait not whole', '?changedFrom=pending_review&wait=1.5'],
    ['wait without changedFrom', '?wait=5'],
    ['an unknown parameter', '?changedFrom=pending_review&since=1'],
  ])('refuses %s as problem+json 400', async (_label, query) => {
    const id = await propose();
    const res = await read(id, query);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await res.json()) as { code: string }).code).toBe('invalid_request');
  });

  it('answers a change committed while the LISTEN connection was lost (read again once it listens)', async () => {
    const id = await propose();
    const answer = read(id, '?changedFrom=pending_review&wait=20');
    await sleep(300);
    // The process's listener loses its backend; the change is committed while it reconnects.
    await ctx.db.pool.query(sql.type(emptyRow)`
      SELECT FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE application_name = 'hnp-notifications' AND datname = current_database()) t`);
    await transitionProposal(ctx.db.pool, { proposalId: id, state: 'approved', actorAccountId: reviewerId });
    expect(await stateOf(await answer)).toBe('approved');
  });

  /** Another API process on this database, served on loopback: its base URL and how to close it. */
  async function otherApp(overrides: Parameters<typeof buildTestApp>[1]) {
    const app = await buildTestApp(ctx.db.pool, overrides);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    return { app, base: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
  }

  it('holds at most the process bound of waits: one more is answered at once, unchanged', async () => {
    const { app, base } = await otherApp({ consoleLive: { maxStreams: 1 } });
    try {
      const id = await propose();
      const held = read(id, '?changedFrom=pending_review&wait=20', reviewerToken, base);
      await sleep(300);
      const extra = read(id, '?changedFrom=pending_review&wait=20', reviewerToken, base);
      expect(await stillWaiting(extra, 2_000)).toBe(false);
      expect(await stateOf(await extra)).toBe('pending_review');
      expect(await stillWaiting(held, 100)).toBe(true);
      await transitionProposal(ctx.db.pool, { proposalId: id, state: 'approved', actorAccountId: reviewerId });
      expect(await stateOf(await held)).toBe('approved');
    } finally {
      await app.close();
    }
  });

  it('without a LISTEN connection (live updates off) reads every second and still answers the change', async () => {
    const { app, base } = await otherApp({ consoleLive: null });
    try {
      const id = await propose();
      const answer = read(id, '?changedFrom=pending_review&wait=20', reviewerToken, base);
      expect(await stillWaiting(answer, 300)).toBe(true);
      await transitionProposal(ctx.db.pool, { proposalId: id, state: 'rejected', actorAccountId: reviewerId });
      expect(await stateOf(await answer)).toBe('rejected');
    } finally {
      await app.close();
    }
  });

  it('answers every open wait at once, with the state unchanged, when the app closes', async () => {
    const { app: other, base } = await otherApp({});
    const id = await propose();
    const answers = [read(id, '?changedFrom=pending_review&wait=30', reviewerToken, base), read(id, '?changedFrom=pending_review&wait=30', reviewerToken, base)];
    await sleep(300);
    const closed = other.close();
    const states = await Promise.all(answers.map(async (answer) => stateOf(await answer)));
    await closed;
    expect(states).toEqual(['pending_review', 'pending_review']);
  });

  it('ends a wait whose listener is already stopped (the app closing), without a timer or poll left reading', async () => {
    const listener = new NotificationListener(() => ctx.db.url, proposalChangesChannel, { warn: () => {}, info: () => {} });
    await listener.stop();
    const waits = new ProposalWaits(listener, 10);
    let reads = 0;
    const followed = waits.follow(randomUUID(), 20_000, async () => ++reads, () => false);
    await expect(followed).rejects.toThrow(/stopped/);
    await sleep(1_300); // past the fallback poll's first beat
    expect({ reads, open: waits.size }).toEqual({ reads: 0, open: 0 });
  });
});
