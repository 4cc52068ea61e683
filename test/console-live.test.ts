// The reviewer console's live stream (GET /console/live, decision 98) over real HTTP on real
// Postgres: a change of a proposal reaches an open stream when its transaction commits, whoever
// wrote it, and only for workspaces where the reviewer may see proposals; the stream is charged
// once, when it opens, never per heartbeat or event; a session that ends or a member who is removed
// stops hearing at the next heartbeat; the listener's lost connection comes back with a `resync`;
// every API process's streams hear every change; the process bounds its streams; and closing the
// app ends every open stream at once.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { transitionProposal } from '../domain/automation/proposal-states.ts';
import { signOut } from '../domain/console/sessions.ts';
import { createAccount, issueAccessToken } from '../domain/identity/accounts.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { addMember, createRole, createWorkspace, removeMember } from '../domain/identity/workspaces.ts';
import { emptyRow } from '../db/row-schemas.ts';
import { createMetricsRegistry } from '../platform/metrics.ts';
import { buildTestApp } from './support/app.ts';
import { storedProposal } from './support/fixtures.ts';
import { consoleSignIn, openConsoleStream } from './support/console.ts';
import type { ConsoleSession } from './support/console.ts';
import { useTestApp } from './support/harness.ts';

const HEARTBEAT_MS = 200;
const ctx = useTestApp({ listen: true, overrides: { consoleLive: { heartbeatMs: HEARTBEAT_MS } } });

type Space = { id: string; mappingId: string };
let ownerId: string;
let garden: Space; // the reviewer is a member (role reviewer)
let foreign: Space; // another owner's; the reviewer is no member
let reviewerId: string;
let reviewerToken: string;

async function account(name: string): Promise<{ id: string; token: string }> {
  const created = await createAccount(ctx.db.pool, { email: `${randomUUID()}@example.test`, displayName: name, plan: 'developer_agent' });
  return { id: created.id, token: (await issueAccessToken(ctx.db.pool, { accountId: created.id, name: 'console' })).token };
}

async function space(name: string, owner: string): Promise<Space> {
  const ws = await createWorkspace(ctx.db.pool, { name, ownerAccountId: owner });
  const vault = await createVault(ctx.db.pool, { name: `${name} vault`, ownerWorkspaceId: ws.id });
  return { id: ws.id, mappingId: (await createMapping(ctx.db.pool, { vaultId: vault.id })).mappingId };
}

/** A proposal in `ws`, written straight through the domain (as the gateway's transaction does). */
const propose = (ws: Space, summary = 'A note') => storedProposal(ctx.db.pool, { workspaceId: ws.id, mappingId: ws.mappingId, proposerAccountId: ownerId, summary });

/** Serves another app (a second API process) on a loopback port; its base URL. */
async function serve(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

const charged = (accountId: string) =>
  ctx.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT month_count AS n FROM usage_counters WHERE account_id = ${accountId} AND interface = 'rest'`);

beforeAll(async () => {
  const owner = await account('Olive Owner');
  ownerId = owner.id;
  const reviewer = await account('Rui Reviewer');
  reviewerId = reviewer.id;
  reviewerToken = reviewer.token;
  garden = await space('Garden', ownerId);
  await addMember(ctx.db.pool, { workspaceId: garden.id, accountId: reviewerId, role: 'reviewer' });
  foreign = await space('Elsewhere', (await account('Stranger')).id);
});

describe('a proposal change reaches an open stream', () => {
  let session: ConsoleSession;
  beforeAll(async () => {
    session = await consoleSignIn(ctx.app, reviewerToken);
  });

  it('answers text/event-stream, says ready once listening, then names each change of a proposal in the reviewer’s workspaces', async () => {
    const stream = await openConsoleStream(ctx.url, session.cookie);
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(stream.headers.get('cache-control')).toBe('no-store');
      await stream.next('ready');
      const id = await propose(garden, 'Arrives live');
      expect((await stream.next('proposal')).data).toEqual({ id, workspaceId: garden.id });
      await transitionProposal(ctx.db.pool, { proposalId: id, state: 'pending_review' });
      expect((await stream.next('proposal')).data).toEqual({ id, workspaceId: garden.id });
    } finally {
      stream.close();
    }
  });

  it('says nothing of another workspace’s proposals: a change there is never sent, one committed after it is', async () => {
    const stream = await openConsoleStream(ctx.url, session.cookie);
    try {
      await stream.next('ready');
      const theirs = await propose(foreign, 'Not yours');
      await transitionProposal(ctx.db.pool, { proposalId: theirs, state: 'pending_review' });
      const ours = await propose(garden, 'Yours');
      // Notifications arrive in commit order: had the foreign ones been sent, they would come first.
      const event = await stream.next('proposal');
      expect(event.data).toEqual({ id: ours, workspaceId: garden.id });
      expect(event.skipped).toEqual([]);
      expect(JSON.stringify(stream.events)).not.toContain(theirs);
    } finally {
      stream.close();
    }
  });

  it('is charged once, when it opens: heartbeats and events cost nothing', async () => {
    const before = await charged(reviewerId);
    const stream = await openConsoleStream(ctx.url, session.cookie);
    try {
      await stream.next('ready');
      expect(await charged(reviewerId)).toBe(before + 1);
      for (let i = 0; i < 3; i++) {
        await propose(garden, `Uncharged ${i}`);
        await stream.next('proposal');
      }
      // Several heartbeats (each re-checks the session, uncharged).
      await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_MS * 4));
      expect(stream.comments.filter((c) => c === 'heartbeat').length).toBeGreaterThanOrEqual(2);
      expect(await charged(reviewerId)).toBe(before + 1);
    } finally {
      stream.close();
    }
  });

  it('stops carrying a workspace once the reviewer is no longer a member of it (at the next heartbeat)', async () => {
    const member = await account('Leaving Member');
    await addMember(ctx.db.pool, { workspaceId: garden.id, accountId: member.id, role: 'reviewer' });
    const other = await space('Still member', ownerId);
    await addMember(ctx.db.pool, { workspaceId: other.id, accountId: member.id, role: 'reviewer' });
    const own = await consoleSignIn(ctx.app, member.token);
    const stream = await openConsoleStream(ctx.url, own.cookie);
    try {
      await stream.next('ready');
      await propose(garden, 'Heard while a member');
      await stream.next('proposal');
      await removeMember(ctx.db.pool, { workspaceId: garden.id, accountId: member.id });
      const heartbeats = stream.comments.length;
      await expect.poll(() => stream.comments.length, { timeout: 5_000 }).toBeGreaterThan(heartbeats + 1);
      const gone = await propose(garden, 'After leaving');
      const stays = await propose(other, 'Still heard');
      const event = await stream.next('proposal');
      expect(event.data).toEqual({ id: stays, workspaceId: other.id });
      expect(JSON.stringify(stream.events)).not.toContain(gone);
    } finally {
      stream.close();
    }
  });

  it('a member who may not see proposals (no automation.view) hears nothing of that workspace', async () => {
    const blind = await account('No View');
    await createRole(ctx.db.pool, { workspaceId: garden.id, name: 'notes-only', permissions: ['vault.read'] });
    await addMember(ctx.db.pool, { workspaceId: garden.id, accountId: blind.id, role: 'notes-only' });
    const seen = await space('Seen', ownerId);
    await addMember(ctx.db.pool, { workspaceId: seen.id, accountId: blind.id, role: 'reviewer' });
    const own = await consoleSignIn(ctx.app, blind.token);
    const stream = await openConsoleStream(ctx.url, own.cookie);
    try {
      await stream.next('ready');
      const hidden = await propose(garden, 'Hidden');
      const shown = await propose(seen, 'Shown');
      const event = await stream.next('proposal');
      expect(event.data).toEqual({ id: shown, workspaceId: seen.id });
      expect(JSON.stringify(stream.events)).not.toContain(hidden);
    } finally {
      stream.close();
    }
  });

  it('ends with `end` {reason: session_ended} once the session is signed out elsewhere', async () => {
    const own = await consoleSignIn(ctx.app, reviewerToken);
    const stream = await openConsoleStream(ctx.url, own.cookie);
    await stream.next('ready');
    await signOut(ctx.db.pool, own.secret);
    expect((await stream.next('end')).data).toEqual({ reason: 'session_ended' });
    await stream.ended;
    // No change reaches it any more: it is gone from the listener's subscribers.
    await propose(garden, 'After the end');
    expect(stream.events.at(-1)!.event).toBe('end');
  });

  it('is refused without a session like every script request: 401 problem+json session_invalid, never a redirect', async () => {
    const stream = await openConsoleStream(ctx.url, 'hnp_console_session=nope');
    expect(stream.status).toBe(401);
    expect(stream.headers.get('content-type')).toContain('application/problem+json');
    expect((await stream.problem())['code']).toBe('session_invalid');
  });

  it('takes no query parameters (400)', async () => {
    const res = await fetch(`${ctx.url}/console/live?topic=everything`, { headers: { cookie: session.cookie, accept: 'text/event-stream' } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('invalid_request');
  });

  it('says `paused` when its database connection is lost, `resync` when it is back, and carries changes again', async () => {
    const stream = await openConsoleStream(ctx.url, session.cookie);
    try {
      await stream.next('ready');
      // The listener's own connection, cut from the server side (as a Postgres restart or a failover would).
      await ctx.db.pool.any(sql.type(emptyRow)`
        SELECT FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                      WHERE application_name = 'hnp-notifications' AND datname = current_database()) t`);
      // Told at once that nothing can come for now (the page polls), then that it is back.
      await stream.next('paused');
      await stream.next('resync', 10_000);
      const id = await propose(garden, 'After the resync');
      expect((await stream.next('proposal')).data).toEqual({ id, workspaceId: garden.id });
    } finally {
      stream.close();
    }
  });
});

describe('more than one API process', () => {
  let second: FastifyInstance;
  let secondUrl: string;
  beforeAll(async () => {
    second = await buildTestApp(ctx.db.pool, { consoleLive: { heartbeatMs: HEARTBEAT_MS } });
    secondUrl = await serve(second);
  });
  afterAll(async () => {
    await second?.close();
  });

  it('every process’s streams hear a change, whichever process (or worker) wrote it; a session opened on one is good on the other', async () => {
    const session = await consoleSignIn(ctx.app, reviewerToken);
    const one = await openConsoleStream(ctx.url, session.cookie);
    const two = await openConsoleStream(secondUrl, session.cookie);
    try {
      await Promise.all([one.next('ready'), two.next('ready')]);
      const id = await propose(garden, 'Heard by both');
      expect((await one.next('proposal')).data).toEqual({ id, workspaceId: garden.id });
      expect((await two.next('proposal')).data).toEqual({ id, workspaceId: garden.id });
    } finally {
      one.close();
      two.close();
    }
  });
});

describe('bounds and shutdown', () => {
  it('holds at most maxStreams streams; past it 503 live_updates_unavailable with Retry-After (the page polls)', async () => {
    const bounded = await buildTestApp(ctx.db.pool, { consoleLive: { maxStreams: 2 } });
    const url = await serve(bounded);
    const session = await consoleSignIn(bounded, reviewerToken);
    // Six at once: the bound holds under concurrent opens.
    const opened = await Promise.all(Array.from({ length: 6 }, () => openConsoleStream(url, session.cookie)));
    const open = opened.filter((s) => s.status === 200);
    try {
      expect(opened.map((s) => s.status).sort()).toEqual([200, 200, 503, 503, 503, 503]);
      for (const stream of open) await stream.next('ready');
      const refused = opened.find((s) => s.status === 503)!;
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('30');
      expect((await refused.problem())['code']).toBe('live_updates_unavailable');
      // A stream that closes frees its place.
      open.pop()!.close();
      await expect.poll(async () => {
        const again = await openConsoleStream(url, session.cookie);
        again.close();
        return again.status;
      }, { timeout: 5_000 }).toBe(200);
    } finally {
      for (const stream of open) stream.close();
      await bounded.close();
    }
  });

  it('an app built without live updates answers 503 live_updates_unavailable at once, without Retry-After (it never will)', async () => {
    const without = await buildTestApp(ctx.db.pool, { consoleLive: null });
    try {
      const url = await serve(without);
      const session = await consoleSignIn(without, reviewerToken);
      const refused = await openConsoleStream(url, session.cookie);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBeNull();
      expect(await refused.problem()).toMatchObject({ code: 'live_updates_unavailable', detail: expect.stringContaining('serves no live updates') });
    } finally {
      await without.close();
    }
  });

  it('shows in the metrics: open streams and whether the listener is up; a stream is no response time', async () => {
    const registry = createMetricsRegistry({ process: 'api' });
    const measured = await buildTestApp(ctx.db.pool, { metrics: registry });
    const url = await serve(measured);
    try {
      const session = await consoleSignIn(measured, reviewerToken);
      const stream = await openConsoleStream(url, session.cookie);
      await stream.next('ready');
      let text = await registry.metrics();
      expect(text).toContain('hnp_console_live_streams{process="api"} 1');
      expect(text).toContain('hnp_console_live_listening{process="api"} 1');
      stream.close();
      await expect.poll(async () => (await registry.metrics()).includes('hnp_console_live_streams{process="api"} 0')).toBe(true);
      text = await registry.metrics();
      expect(text).not.toMatch(/hnp_http_request_duration_seconds_count\{[^}]*route="\/console\/live"/);
    } finally {
      await measured.close();
    }
  });

  it('closing the app ends every open stream with `end` {reason: shutdown} and does not wait for the browsers', async () => {
    const closing = await buildTestApp(ctx.db.pool, { consoleLive: { heartbeatMs: 60_000 } });
    const url = await serve(closing);
    const session = await consoleSignIn(closing, reviewerToken);
    const streams = [await openConsoleStream(url, session.cookie), await openConsoleStream(url, session.cookie)];
    for (const stream of streams) await stream.next('ready');
    const closed = closing.close().then(() => 'closed');
    // Without ending the streams close() waits for the browsers for ever; the test's timeout would say so.
    expect(await closed).toBe('closed');
    for (const stream of streams) {
      expect((await stream.next('end')).data).toEqual({ reason: 'shutdown' });
      await stream.ended;
    }
  });
});
