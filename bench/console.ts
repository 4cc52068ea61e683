// `npm run bench -- --suite console`: the reviewer console's pages through the real app
// (app.inject: session admission charged like an automation request, the domain's read models, the
// HTML rendering), against baselines measured in the same run on the same data:
//   - the inbox page (25 of 600 waiting proposals across 3 workspaces) vs the automation API's
//     GET /proposals page of 25 in one workspace (what a script would call instead) and a bare
//     SELECT of 25 rows;
//   - the inbox's live poll answered 304 (what an open tab costs every 10 s);
//   - a proposal page with its diff (a 20 KB note replaced) vs the two API calls it replaces
//     (GET /proposals/:id and GET /proposals/:id/preview);
//   - over real HTTP, a proposal's commit to its row on an open inbox: the live stream (the event,
//     then the list fetched) against the polling page it replaced.
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { buildApp } from '../api/app.ts';
import type { DatabasePool } from '../db/pool.ts';
import { emptyRow } from '../db/row-schemas.ts';
import { insertProposal } from '../domain/automation/proposals.ts';
import { transitionProposal } from '../domain/automation/proposal-states.ts';
import { createAccount, issueAccessToken } from '../domain/identity/accounts.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { addMember, createWorkspace } from '../domain/identity/workspaces.ts';
import { applyTransaction } from '../domain/notes/knowledge.ts';
import { revisionOf } from '../domain/notes/markdown.ts';
import { lazyTemporalConnection } from '../platform/temporal.ts';
import { stats, timed } from './timing.ts';
import { inboxRefreshMs } from '../api/routes/console/inbox-page.ts';
import { openConsoleStream } from '../test/support/console.ts';
import type { Stats } from './timing.ts';


/** Samples of the polling page: each waits a random part of the 10 s interval (the suite's longest row). */
const POLLED_SAMPLES = 5;

export async function runConsoleSuite(input: { db: DatabasePool; samples?: number; printTable: (header: string[], rows: string[][]) => void }): Promise<void> {
  const { db } = input;
  const samples = input.samples ?? 200;
  const tag = randomUUID().slice(0, 8);
  const proposer = await createAccount(db, { email: `bench-console-proposer-${tag}@example.test`, displayName: 'Bench Proposer', plan: 'team' });
  const reviewer = await createAccount(db, { email: `bench-console-reviewer-${tag}@example.test`, displayName: 'Bench Reviewer', plan: 'team' });
  const reviewerToken = (await issueAccessToken(db, { accountId: reviewer.id, name: 'bench' })).token;

  // Three workspaces, 200 waiting proposals each, and one replace of a 20 KB note.
  const workspaces = [];
  for (let w = 0; w < 3; w++) {
    const ws = await createWorkspace(db, { name: `Bench console ${w}`, ownerAccountId: proposer.id });
    await addMember(db, { workspaceId: ws.id, accountId: reviewer.id, role: 'reviewer' });
    const vault = await createVault(db, { name: `Bench console vault ${w}`, ownerWorkspaceId: ws.id });
    const { mappingId } = await createMapping(db, { vaultId: vault.id });
    workspaces.push({ id: ws.id, vaultId: vault.id, mappingId });
  }
  const first = workspaces[0]!;
  const big = Array.from({ length: 400 }, (_, i) => `Line ${i} of the weekly plan, with enough words to look like prose.`).join('\n');
  const path = 'Plans/Week.md';
  await applyTransaction(db, { vaultId: first.vaultId, mappingId: first.mappingId }, [{ type: 'write-note', path, content: `# Week\n\n${big}\n` }],
    { actor: { type: 'account', id: proposer.id }, source: 'ops', requestId: null, idempotencyKey: `seed-${tag}` },
    { accountId: proposer.id, route: 'bench', scope: first.mappingId, key: `seed-${tag}`, fingerprint: `seed-${tag}` });
  const changed = `# Week\n\n${big.replace('Line 200 of', 'Line 200 (moved to Friday) of')}\nOne more line.\n`;
  const proposalIds: string[] = [];
  for (const ws of workspaces) {
    for (let i = 0; i < 200; i++) {
      const id = randomUUID();
      const action = i === 0 && ws === first
        ? { kind: 'note.write' as const, mappingId: ws.mappingId, path, content: changed, expectedHash: revisionOf(`# Week\n\n${big}\n`) }
        : { kind: 'note.write' as const, mappingId: ws.mappingId, path: `Inbox/Bench ${i}.md`, content: `# ${i}\n` };
      await insertProposal(db, { id, workspaceId: ws.id, proposer: { kind: 'account', id: proposer.id }, actingForAccountId: null, bridge: i % 2 ? 'zapier' : 'generic-webhook', action, summary: `Bench proposal ${i}`, expiresInSeconds: 86_400 });
      await transitionProposal(db, { proposalId: id, state: 'pending_review' });
      proposalIds.push(id);
    }
  }
  const withDiff = proposalIds[0]!;
  // A transaction of 100 new notes (issue 29: the page a large proposal makes).
  const hundred = randomUUID();
  const hundredAction = {
    kind: 'note.transaction' as const,
    mappingId: first.mappingId,
    actions: Array.from({ length: 100 }, (_, i) => ({ type: 'write-note' as const, path: `Bulk/Note ${i}.md`, content: `# Note ${i}\n\n${'A line of the imported note.\n'.repeat(20)}` })),
  };
  await insertProposal(db, { id: hundred, workspaceId: first.id, proposer: { kind: 'account', id: proposer.id }, actingForAccountId: null, bridge: 'zapier', action: hundredAction, summary: 'Bench: 100 notes', expiresInSeconds: 86_400 });
  await transitionProposal(db, { proposalId: hundred, state: 'pending_review' });

  const connection = lazyTemporalConnection('127.0.0.1:7233');
  const allowances = { rest: { perMinute: 1_000_000_000, perMonth: { team: 1_000_000_000 } }, mcp: { perMinute: 1, perMonth: {} } };
  const app = await buildApp({ db, temporal: { connection, namespace: 'default', taskQueue: 'bench-console' }, logger: pino({ level: 'warn' }), allowances });
  await app.ready();
  const signIn = await app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
    payload: new URLSearchParams({ token: reviewerToken }).toString(),
  });
  const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
  const bearer = { authorization: `Bearer ${reviewerToken}` };

  const rows: string[][] = [];
  const row = (name: string, s: Stats, baseline: Stats | null) =>
    rows.push([name, String(s.n), s.p50.toFixed(2), s.p95.toFixed(2), s.p99.toFixed(2), baseline ? ratio(s.p50 / baseline.p50) : '-']);
  const ratio = (r: number) => (r < 0.1 ? r.toPrecision(2) : r.toFixed(1));
  try {
    const bare = await timed(async () => {
      const r = await db.any(sql.type(z.object({ id: z.uuid() }))`
        SELECT id FROM action_proposals WHERE workspace_id = ${first.id} AND state = 'pending_review' ORDER BY created_at DESC, id DESC LIMIT 26`);
      return { statusCode: r.length ? 200 : 500, body: '' };
    }, samples, [200], 5);
    const api = await timed(() => app.inject({ method: 'GET', url: `/api/dev/automation/proposals?workspaceId=${first.id}&state=pending_review&limit=25`, headers: bearer }), samples, [200], 5);
    const inbox = await timed(() => app.inject({ method: 'GET', url: '/console', headers: { cookie } }), samples, [200], 5);
    const fragment = await app.inject({ method: 'GET', url: '/console?fragment=list', headers: { cookie } });
    const etag = String(fragment.headers['etag']);
    const poll = await timed(() => app.inject({ method: 'GET', url: '/console?fragment=list', headers: { cookie, 'if-none-match': etag } }), samples, [304], 5);
    row('baseline: bare SELECT of 26 waiting proposals (one workspace)', bare, null);
    row('API: GET /proposals, 25 of one workspace (JSON)', api, bare);
    row('console: inbox page, 25 of 3 workspaces (HTML, filters, standing)', inbox, api);
    row('console: the inbox poll answered 304', poll, api);

    // What an API client reads to review a proposal: the proposal, then its preview.
    const apiReview = (id: string) => async () => {
      const a = await app.inject({ method: 'GET', url: `/api/dev/automation/proposals/${id}`, headers: bearer });
      const b = await app.inject({ method: 'GET', url: `/api/dev/automation/proposals/${id}/preview`, headers: bearer });
      return { statusCode: a.statusCode === 200 ? b.statusCode : a.statusCode, body: b.body };
    };
    const apiRead = await timed(apiReview(withDiff), samples, [200], 5);
    const page = await timed(() => app.inject({ method: 'GET', url: `/console/proposals/${withDiff}`, headers: { cookie } }), samples, [200], 5);
    row('API: GET /proposals/:id + GET …/preview (20 KB note replaced)', apiRead, null);
    row('console: proposal page with the rendered diff', page, apiRead);

    const apiHundred = await timed(apiReview(hundred), samples, [200], 5);
    const hundredPage = await timed(() => app.inject({ method: 'GET', url: `/console/proposals/${hundred}`, headers: { cookie } }), samples, [200], 5);
    row('API: GET /proposals/:id + GET …/preview (a transaction of 100 new notes)', apiHundred, null);
    row('console: the 100-note proposal page (totals, jump list, collapsed diffs)', hundredPage, apiHundred);

    // Issue 29: a proposal created while the inbox is open, from its commit to its row in the list
    // the page holds. Before: the page polled every 10 s (a random phase against the commit). Now:
    // the live stream names it and the page fetches its list once.
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const listShows = async (id: string) => (await (await fetch(`${base}/console?fragment=list`, { headers: { cookie } })).text()).includes(id);
    const arrive = async () => {
      const id = randomUUID();
      await db.transaction(async (tx) => {
        await insertProposal(tx, { id, workspaceId: first.id, proposer: { kind: 'account', id: proposer.id }, actingForAccountId: null, bridge: 'zapier', action: { kind: 'note.write', mappingId: first.mappingId, path: `Inbox/Live ${id}.md`, content: '# Live\n' }, summary: 'Live arrival', expiresInSeconds: 86_400 });
        await transitionProposal(tx, { proposalId: id, state: 'pending_review' });
      });
      return { id, committed: performance.now() };
    };
    const stream = await openConsoleStream(base, cookie);
    const streamed: number[] = [];
    try {
      await stream.next('ready');
      for (let i = 0; i < Math.min(samples, 100); i++) {
        const { id, committed } = await arrive();
        for (let seen = await stream.next('proposal'); (seen.data as { id: string }).id !== id; seen = await stream.next('proposal'));
        if (!(await listShows(id))) throw new Error('the list fetched after the event does not show the proposal');
        streamed.push(performance.now() - committed);
      }
    } finally {
      stream.close();
    }
    const polled: number[] = [];
    for (let i = 0; i < POLLED_SAMPLES; i++) {
      // The page's poll timer runs on its own: its next tick is anywhere in the coming interval.
      const phase = Math.random() * inboxRefreshMs;
      const { id, committed } = await arrive();
      await new Promise((resolve) => setTimeout(resolve, phase));
      while (!(await listShows(id))) await new Promise((resolve) => setTimeout(resolve, inboxRefreshMs));
      polled.push(performance.now() - committed);
    }
    const before = stats(polled);
    row(`before: polling every ${inboxRefreshMs / 1000} s, commit → row on an open inbox (HTTP)`, before, null);
    row('live stream (SSE ← LISTEN/NOTIFY), commit → event → list fetched (HTTP)', stats(streamed), before);
  } finally {
    await db.query(sql.type(emptyRow)`DELETE FROM action_proposals WHERE workspace_id = ANY (${sql.array(workspaces.map((w) => w.id), 'uuid')})`);
    await app.close();
    await connection.close().catch(() => undefined);
  }
  input.printTable(['console (app.inject, one reviewer session)', 'n', 'p50 ms', 'p95 ms', 'p99 ms', 'p50 × baseline'], rows);
}
