// The reviewer console's routes (/console) over app.inject, on real Postgres, the Temporal dev server
// and the platform worker. Proves: a personal access token is exchanged for a cookie session (and
// never echoed or stored), judged and charged like the automation gateway; dead sessions are
// refused; every change needs our origin and the session's CSRF token, and only small form bodies;
// another workspace's proposal is indistinguishable from a missing one; decisions and undo go
// through the domain's rules (self-approval, permissions, one winner under concurrency); and the
// inbox filters, pages and polls (ETag) correctly.
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { undoWorkflowId } from '../domain/automation/workflow-ids.ts';
import { createAccount, issueAccessToken, revokeAccessToken, updateAccount } from '../domain/identity/accounts.ts';
import type { Account } from '../domain/identity/accounts.ts';
import type { Plan } from '../domain/identity/plans.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { addMember, createRole, createWorkspace } from '../domain/identity/workspaces.ts';
import { revisionOf } from '../domain/notes/markdown.ts';
import { consoleGet, consolePost, consoleSignIn, postSignIn, proposeViaApi, sessionCookieOf, waitForProposalState } from './support/console.ts';
import type { ConsoleSession } from './support/console.ts';
import type { DatabasePool } from '../db/pool.ts';
import { devClient } from './support/dev-client.ts';
import type { DevClient, Json } from './support/dev-client.ts';
import { useTestApp, useTestAppWithWorker } from './support/harness.ts';

const ctx = useTestAppWithWorker({ name: 'console-routes', overrides: { proposalExpirySeconds: 3600 } });
let app: FastifyInstance;
let db: DatabasePool;

type Person = { account: Account; token: string; tokenId: string; api: DevClient };

/** An account with a token and a display name of its own (the pages show names). */
async function person(displayName: string, plan: Plan = 'developer_agent'): Promise<Person> {
  const account = await createAccount(db, { email: `${randomUUID()}@example.test`, displayName, plan });
  const issued = await issueAccessToken(db, { accountId: account.id, name: 'console' });
  return { account, token: issued.token, tokenId: issued.record.id, api: devClient(app, issued.token) };
}

const json = { accept: 'application/json' };
const parse = (res: LightMyRequestResponse) => JSON.parse(res.body) as Json;
const ids = (list: Json) => (list['proposals'] as Array<{ id: string }>).map((p) => p.id);

const proposalRow = z.object({ state: z.string(), decisionReason: z.string().nullable() });
const proposalInDb = (id: string) => db.one(sql.type(proposalRow)`SELECT state, decision_reason AS "decisionReason" FROM action_proposals WHERE id = ${id}`);
const proposalCreatedAt = (id: string) => db.oneFirst(sql.type(z.object({ t: z.string() }))`SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS t FROM action_proposals WHERE id = ${id}`);
const sessionRows = (accountId: string) =>
  db.any(sql.type(z.object({ row: z.string(), endedAt: z.string().nullable() }))`SELECT s::text AS row, ended_at::text AS "endedAt" FROM console_sessions s WHERE account_id = ${accountId}`);

let owner: Person; // owns the workspace and proposes (automation.manage)
let reviewer: Person;
let reviewer2: Person;
let watcher: Person; // automation.view only: no review, no vault.read
let stranger: Person; // owns another workspace
let workspaceId: string;
let mappingId: string;
let foreignWorkspaceId: string;
let foreignProposalId: string;
let reviewerSession: ConsoleSession;
let reviewer2Session: ConsoleSession;

const note = (path: string, content: string, expectedHash?: string) => ({ kind: 'note.write', mappingId, path, content, ...(expectedHash ? { expectedHash } : {}) });
const propose = (action: Json, extra: { bridge?: string; summary?: string; workspace?: string } = {}) =>
  proposeViaApi(owner.api, { workspaceId: extra.workspace ?? workspaceId, action, ...extra });
const pending = async (action: Json) => {
  const id = await propose(action);
  await waitForProposalState(owner.api, id, ['pending_review']);
  return id;
};

beforeAll(async () => {
  app = ctx.app;
  db = ctx.db.pool;
  [owner, reviewer, reviewer2, watcher, stranger] = await Promise.all([
    person('Olive Owner', 'team'),
    person('Rita Reviewer'),
    person('Rob Reviewer'),
    person('Walt Watcher'),
    person('Sam Stranger', 'team'),
  ]);
  workspaceId = (await createWorkspace(db, { name: 'Console Routes', ownerAccountId: owner.account.id })).id;
  await addMember(db, { workspaceId, accountId: reviewer.account.id, role: 'reviewer' });
  await addMember(db, { workspaceId, accountId: reviewer2.account.id, role: 'reviewer' });
  await createRole(db, { workspaceId, name: 'watcher', permissions: ['automation.view'] });
  await addMember(db, { workspaceId, accountId: watcher.account.id, role: 'watcher' });
  ({ mappingId } = await createMapping(db, { vaultId: (await createVault(db, { name: 'Team vault', ownerWorkspaceId: workspaceId })).id }));

  foreignWorkspaceId = (await createWorkspace(db, { name: 'Elsewhere', ownerAccountId: stranger.account.id })).id;
  const foreignMapping = await createMapping(db, { vaultId: (await createVault(db, { name: 'Their vault', ownerWorkspaceId: foreignWorkspaceId })).id });
  foreignProposalId = await proposeViaApi(stranger.api, {
    workspaceId: foreignWorkspaceId,
    action: { kind: 'note.write', mappingId: foreignMapping.mappingId, path: 'Secret.md', content: 'theirs' },
  });
  await waitForProposalState(stranger.api, foreignProposalId, ['pending_review']);
  [reviewerSession, reviewer2Session] = await Promise.all([consoleSignIn(app, reviewer.token), consoleSignIn(app, reviewer2.token)]);
});

describe('sign-in', () => {
  it('exchanges a valid token for an HttpOnly, SameSite=Strict, /console-only cookie of eight hours, never echoing or storing the token', async () => {
    const p = await person('Sign In');
    const res = await postSignIn(app, p.token);
    expect(res.statusCode).toBe(303);
    expect(res.headers['location']).toBe('/console');
    const cookie = sessionCookieOf(res)!;
    expect(cookie.value).toMatch(/^hnp_ses_/);
    const attributes = cookie.header.split(';').map((a) => a.trim());
    expect(attributes).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/console']));
    expect(attributes).not.toContain('Secure');
    const maxAge = Number(attributes.find((a) => a.startsWith('Max-Age='))!.slice('Max-Age='.length));
    expect(maxAge).toBeGreaterThan(8 * 3600 - 60);
    expect(maxAge).toBeLessThanOrEqual(8 * 3600);

    const secretPart = p.token.replace(/^hnp_[a-z]+_/, '');
    expect(JSON.stringify(res.headers) + res.body).not.toContain(secretPart);
    const rows = await sessionRows(p.account.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.row).not.toContain(secretPart);
    expect(rows[0]!.row).not.toContain(cookie.value.replace(/^hnp_[a-z]+_/, ''));
    // The cookie opens the inbox.
    expect((await consoleGet(app, { cookie: `hnp_console_session=${cookie.value}`, secret: '', csrf: '' }, '/console')).statusCode).toBe(200);
  });

  it('follows next only to console paths on this origin', async () => {
    const p = await person('Next Follower');
    const cases: Array<[string, string]> = [
      ['//evil.example', '/console'],
      ['https://evil.example/console', '/console'],
      ['/api/dev', '/console'],
      ['/consolex', '/console'],
      ['/console/proposals/x', '/console/proposals/x'],
      ['/console?state=any', '/console?state=any'],
    ];
    for (const [next, expected] of cases) {
      const res = await postSignIn(app, p.token, { next });
      expect(res.statusCode, next).toBe(303);
      expect(res.headers['location'], next).toBe(expected);
    }
  });

  it('re-renders the sign-in form with invalid_token for an unknown or revoked token, echoing neither', async () => {
    const revoked = await person('Revoked');
    await revokeAccessToken(db, revoked.tokenId);
    for (const token of [`hnp_pat_${'A'.repeat(43)}`, 'not-a-token', revoked.token]) {
      const res = await postSignIn(app, token);
      expect(res.statusCode, token).toBe(401);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('action="/console/sign-in"');
      expect(res.body).toContain('name="token"');
      expect(res.body).toContain('<code>invalid_token</code>');
      expect(res.body).not.toContain(token);
      expect(sessionCookieOf(res)).toBeUndefined();
      const asJson = await postSignIn(app, token, { headers: json });
      expect(asJson.statusCode).toBe(401);
      expect(parse(asJson).code).toBe('invalid_token');
    }
    expect(await sessionRows(revoked.account.id)).toEqual([]);
  });

  it('refuses a plan without the automation gateway (entitlement_required) and a suspended account (account_inactive), opening no session', async () => {
    const premium = await person('Premium', 'premium');
    const res = await postSignIn(app, premium.token, { headers: json });
    expect(res.statusCode).toBe(403);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(parse(res).code).toBe('entitlement_required');
    expect(sessionCookieOf(res)).toBeUndefined();
    expect(await sessionRows(premium.account.id)).toEqual([]);

    const suspended = await person('Suspended');
    await updateAccount(db, suspended.account.id, { status: 'suspended' });
    const refused = await postSignIn(app, suspended.token);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('<code>account_inactive</code>');
    expect(await sessionRows(suspended.account.id)).toEqual([]);
  });

  it('charges one REST request for signing in, and one per page', async () => {
    const p = await person('Charged');
    const session = await consoleSignIn(app, p.token);
    const counted = () => db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT month_count AS n FROM usage_counters WHERE account_id = ${p.account.id} AND interface = 'rest'`);
    expect(await counted()).toBe(1);
    const page = await consoleGet(app, session, '/console');
    expect(page.statusCode).toBe(200);
    const quota = Number(/"month";q=(\d+)/.exec(page.headers['ratelimit-policy'] as string)![1]);
    expect(page.headers['ratelimit']).toContain(`"month";r=${quota - 2};`);
    expect(await counted()).toBe(2);
  });

  describe('behind an https PUBLIC_BASE_URL', () => {
    const https = useTestApp({ overrides: { publicBaseUrl: 'https://console.example.test' } });

    it('sets a Secure cookie and checks Origin against the public origin', async () => {
      const account = await createAccount(https.db.pool, { email: `${randomUUID()}@example.test`, displayName: 'Https', plan: 'developer_agent' });
      const { token } = await issueAccessToken(https.db.pool, { accountId: account.id, name: 'console' });
      const res = await postSignIn(https.app, token, { headers: { origin: 'https://console.example.test' } });
      expect(res.statusCode).toBe(303);
      expect(sessionCookieOf(res)!.header.split(';').map((a) => a.trim())).toContain('Secure');
      // The host the request reached is not the console's origin here.
      const wrongOrigin = await postSignIn(https.app, token, { headers: { origin: 'http://localhost:80', ...json } });
      expect(wrongOrigin.statusCode).toBe(403);
      expect(parse(wrongOrigin).code).toBe('csrf_check_failed');
      expect(sessionCookieOf(wrongOrigin)).toBeUndefined();
    });
  });
});

describe('sessions', () => {
  it('sends a request without a session to sign-in (pages) or answers 401 session_invalid (JSON), also for a garbage or unknown cookie', async () => {
    for (const cookie of [undefined, 'hnp_console_session=garbage', `hnp_console_session=hnp_ses_${'A'.repeat(43)}`]) {
      const headers = cookie ? { cookie } : {};
      const page = await app.inject({ method: 'GET', url: '/console', headers });
      expect(page.statusCode, cookie).toBe(303);
      // A cookie that no longer admits was a session that ended: sign-in says so.
      const ended = cookie ? '&expired=1' : '';
      expect(page.headers['location']).toBe(`/console/sign-in?next=%2Fconsole${ended}`);
      const deep = await app.inject({ method: 'GET', url: '/console/proposals/00000000-0000-4000-8000-000000000000', headers });
      expect(deep.headers['location']).toBe(`/console/sign-in?next=%2Fconsole%2Fproposals%2F00000000-0000-4000-8000-000000000000${ended}`);
      const data = await app.inject({ method: 'GET', url: '/console', headers: { ...headers, ...json } });
      expect(data.statusCode).toBe(401);
      expect(data.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(parse(data).code).toBe('session_invalid');
      // A dead cookie is cleared.
      if (cookie) expect(sessionCookieOf(data)!.header).toContain('Max-Age=0');
    }
  });

  it('refuses an expired session, one whose token was revoked, and one of a suspended account', async () => {
    const [expired, revoked, suspended] = await Promise.all([person('Expired'), person('Revoked Later'), person('Suspended Later')]);
    const sessions = await Promise.all([expired, revoked, suspended].map((p) => consoleSignIn(app, p.token)));
    for (const s of sessions) expect((await consoleGet(app, s, '/console', json)).statusCode).toBe(200);

    // expires_at must stay after created_at (a CHECK), so both move into the past.
    await db.query(sql.unsafe`UPDATE console_sessions SET created_at = now() - interval '9 hours', expires_at = now() - interval '1 hour' WHERE account_id = ${expired.account.id}`);
    await revokeAccessToken(db, revoked.tokenId);
    await updateAccount(db, suspended.account.id, { status: 'suspended' });

    for (const s of sessions.slice(0, 2)) {
      const res = await consoleGet(app, s, '/console', json);
      expect(res.statusCode).toBe(401);
      expect(parse(res).code).toBe('session_invalid');
      expect((await consoleGet(app, s, '/console')).headers['location']).toBe('/console/sign-in?next=%2Fconsole&expired=1');
    }
    const signIn = await app.inject({ method: 'GET', url: '/console/sign-in?next=%2Fconsole&expired=1' });
    expect(signIn.body).toContain('Your session ended: it expired, was signed out elsewhere, or its token was revoked.');
    expect(signIn.body).toContain('name="next" value="/console"');
    const inactive = await consoleGet(app, sessions[2]!, '/console', json);
    expect(inactive.statusCode).toBe(403);
    expect(parse(inactive).code).toBe('account_inactive');
  });

  it('marks pages no-store with a self-only CSP and RateLimit headers', async () => {
    const id = await pending(note('Headers.md', 'h'));
    for (const url of ['/console', `/console/proposals/${id}`]) {
      for (const headers of [{}, json]) {
        const res = await consoleGet(app, reviewerSession, url, headers);
        expect(res.statusCode, url).toBe(200);
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.headers['content-security-policy']).toContain("default-src 'self'");
        expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
        expect(res.headers['ratelimit']).toMatch(/"minute";r=\d+;t=\d+, "month";r=\d+;t=\d+/);
        expect(res.headers['ratelimit-policy']).toContain('"month";q=');
      }
    }
  });
});

describe('sign-out', () => {
  it("ends the session with the session's CSRF token: cookie cleared, row ended, the old cookie sent to sign-in", async () => {
    const p = await person('Signing Out');
    const session = await consoleSignIn(app, p.token);
    const res = await consolePost(app, session, '/console/sign-out');
    expect(res.statusCode).toBe(303);
    expect(res.headers['location']).toBe('/console/sign-in?signedOut=1');
    const cleared = sessionCookieOf(res)!;
    expect(cleared.value).toBe('');
    expect(cleared.header).toContain('Max-Age=0');
    expect(cleared.header).toContain('Path=/console');
    expect((await sessionRows(p.account.id))[0]!.endedAt).not.toBeNull();
    const after = await consoleGet(app, session, '/console');
    expect(after.statusCode).toBe(303);
    expect(after.headers['location']).toBe('/console/sign-in?next=%2Fconsole&expired=1');
  });

  it('refuses to end a live session without its CSRF token, and the session goes on', async () => {
    const p = await person('Staying In');
    const session = await consoleSignIn(app, p.token);
    for (const csrf of ['', reviewerSession.csrf]) {
      const res = await consolePost(app, session, '/console/sign-out', { csrf }, json);
      expect(res.statusCode).toBe(403);
      expect(parse(res).code).toBe('csrf_check_failed');
      expect(sessionCookieOf(res)).toBeUndefined();
    }
    // No csrf field at all: refused as forged too.
    const bare = await consolePost(app, session, '/console/sign-out', { csrf: null }, json);
    expect(bare.statusCode).toBe(403);
    expect(parse(bare).code).toBe('csrf_check_failed');
    expect((await sessionRows(p.account.id))[0]!.endedAt).toBeNull();
    expect((await consoleGet(app, session, '/console')).statusCode).toBe(200);
  });
});

describe('CSRF and origin checks on decisions', () => {
  let id: string;
  let url: string;
  beforeAll(async () => {
    id = await pending(note('Csrf.md', 'c'));
    url = `/console/proposals/${id}/decision`;
  });

  const refusedAs = async (res: LightMyRequestResponse, status: number, code: string) => {
    expect(res.statusCode, res.body).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(parse(res).code).toBe(code);
  };

  it('refuses a decision without the CSRF token, with another session\'s, from another origin or a cross-site fetch', async () => {
    await refusedAs(await consolePost(app, reviewerSession, url, { decision: 'approve', csrf: null }, json), 403, 'csrf_check_failed');
    await refusedAs(await consolePost(app, reviewerSession, url, { decision: 'approve', csrf: reviewer2Session.csrf }, json), 403, 'csrf_check_failed');
    await refusedAs(await consolePost(app, reviewerSession, url, { decision: 'approve' }, { ...json, origin: 'https://evil.example' }), 403, 'csrf_check_failed');
    await refusedAs(await consolePost(app, reviewerSession, url, { decision: 'approve' }, { ...json, origin: 'null' }), 403, 'csrf_check_failed');
    await refusedAs(await consolePost(app, reviewerSession, url, { decision: 'approve' }, { ...json, 'sec-fetch-site': 'cross-site' }), 403, 'csrf_check_failed');
    // Without JSON the refusal is an HTML page with the same status.
    const page = await consolePost(app, reviewerSession, url, { decision: 'approve', csrf: null });
    expect(page.statusCode).toBe(403);
    expect(page.body).toContain('<code>csrf_check_failed</code>');
    expect(await proposalInDb(id)).toEqual({ state: 'pending_review', decisionReason: null });
  });

  it('takes only small url-encoded forms with known, valid fields', async () => {
    const asJson = await app.inject({
      method: 'POST',
      url,
      headers: { cookie: reviewerSession.cookie, 'content-type': 'application/json', ...json },
      payload: JSON.stringify({ csrf: reviewerSession.csrf, decision: 'approve' }),
    });
    await refusedAs(asJson, 415, 'unsupported_media_type');
    await refusedAs(await consolePost(app, reviewerSession, url, { decision: 'reject', reason: 'x'.repeat(17 * 1024) }, json), 413, 'payload_too_large');
    const long = await consolePost(app, reviewerSession, url, { decision: 'reject', reason: 'x'.repeat(2001) }, json);
    await refusedAs(long, 400, 'invalid_request');
    expect(parse(long).errors[0].pointer).toBe('/body/reason');
    const unknown = await consolePost(app, reviewerSession, url, { decision: 'reject', extra: '1' }, json);
    await refusedAs(unknown, 400, 'invalid_request');
    expect(parse(unknown).errors[0].pointer).toBe('/body/extra');
    await refusedAs(await consolePost(app, reviewerSession, url, { decision: 'reject', reason: 'a\u0000b' }, json), 400, 'invalid_character');
    await refusedAs(await consolePost(app, reviewerSession, url, { decision: 'maybe' }, json), 400, 'invalid_request');
    expect(await proposalInDb(id)).toEqual({ state: 'pending_review', decisionReason: null });
  });

  it('answers a reason over the limit on the page itself, in words, with what was typed kept in the form', async () => {
    const typed = `${'Because <b>it</b> & more. '.repeat(80)}end`; // 2,083 characters
    const res = await consolePost(app, reviewerSession, url, { decision: 'approve', reason: typed });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain(`Your reason has ${typed.length.toLocaleString('en')} characters; a reason holds at most 2,000. Shorten it, then decide again: nothing was decided.`);
    expect(res.body).not.toContain('/body/reason');
    // The form is there again, holding the reason (escaped), next to the decision buttons.
    expect(res.body).toContain(`>${typed.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')}</textarea>`);
    expect(res.body).toContain('value="approve"');
    expect(await proposalInDb(id)).toEqual({ state: 'pending_review', decisionReason: null });
  });

  it('accepts the same form with the session\'s token from our own origin', async () => {
    const res = await consolePost(app, reviewerSession, url, { decision: 'reject', reason: 'r'.repeat(2000) }, { origin: 'http://localhost:80', 'sec-fetch-site': 'same-origin' });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers['location']).toBe(`/console/proposals/${id}?done=reject`);
    await waitForProposalState(owner.api, id, ['rejected']);
    expect(await proposalInDb(id)).toEqual({ state: 'rejected', decisionReason: 'r'.repeat(2000) });
  });
});

describe('tenancy', () => {
  /** A problem body without what names the request itself (its id, path and the proposal id asked for). */
  const stable = (res: LightMyRequestResponse, proposalId: string) => {
    const { requestId: _r, instance: _i, ...rest } = parse(res);
    return JSON.stringify(rest).replaceAll(proposalId, '<id>');
  };

  it("answers another workspace's proposal exactly like a missing one, on every route", async () => {
    const missing = randomUUID();
    const routes: Array<[string, (pid: string) => Promise<LightMyRequestResponse>]> = [
      ['page', (pid) => consoleGet(app, reviewerSession, `/console/proposals/${pid}`, json)],
      ['fragment', (pid) => consoleGet(app, reviewerSession, `/console/proposals/${pid}?fragment=proposal`)],
      ['decision', (pid) => consolePost(app, reviewerSession, `/console/proposals/${pid}/decision`, { decision: 'approve' }, json)],
      ['undo', (pid) => consolePost(app, reviewerSession, `/console/proposals/${pid}/undo`, {}, json)],
    ];
    for (const [name, call] of routes) {
      const foreign = await call(foreignProposalId);
      const absent = await call(missing);
      expect(foreign.statusCode, name).toBe(404);
      expect(absent.statusCode, name).toBe(404);
      expect(parse(foreign).code, name).toBe('proposal_not_found');
      expect(stable(foreign, foreignProposalId), name).toBe(stable(absent, missing));
    }
    // The HTML page too, up to the request id and the proposal id.
    const html = async (pid: string) => {
      const res = await consoleGet(app, reviewerSession, `/console/proposals/${pid}`);
      expect(res.statusCode).toBe(404);
      return res.body.replace(/<dt>Request id<\/dt><dd><code>[^<]*<\/code>/, '').replaceAll(pid, '<id>');
    };
    expect(await html(foreignProposalId)).toBe(await html(missing));
    // The refused decision and undo changed nothing there.
    expect(await proposalInDb(foreignProposalId)).toEqual({ state: 'pending_review', decisionReason: null });
  });

  it("never lists another workspace's proposals, and filtering by that workspace is like filtering by a made-up one", async () => {
    // The reviewer's own workspace has a proposal, so a filter that fell back to "all" would show it.
    const own = await propose(note('Tenancy/Own.md', 'o'));
    const all = parse(await consoleGet(app, reviewerSession, '/console?state=any', json));
    expect(ids(all)).toContain(own);
    expect(ids(all)).not.toContain(foreignProposalId);
    expect((all['workspaces'] as Array<{ id: string }>).map((w) => w.id)).toEqual([workspaceId]);
    const foreign = parse(await consoleGet(app, reviewerSession, `/console?state=any&workspaceId=${foreignWorkspaceId}`, json));
    const madeUp = randomUUID();
    const invented = parse(await consoleGet(app, reviewerSession, `/console?state=any&workspaceId=${madeUp}`, json));
    expect(foreign['proposals']).toEqual([]);
    expect(JSON.stringify(foreign).replaceAll(foreignWorkspaceId, '<ws>')).toBe(JSON.stringify(invented).replaceAll(madeUp, '<ws>'));
  });

  it('shows a viewer without automation.review why they cannot decide, no decision form, and no preview without vault.read', async () => {
    const id = await pending(note('Watched.md', 'w'));
    const watcherSession = await consoleSignIn(app, watcher.token);
    const view = parse(await consoleGet(app, watcherSession, `/console/proposals/${id}`, json));
    expect(view['standing']).toMatchObject({ canDecide: false, refusal: { code: 'permission_denied' } });
    expect(view).toMatchObject({ preview: null, previewWithheld: 'needs_vault_read', canUndo: false });
    const inbox = parse(await consoleGet(app, watcherSession, '/console', json));
    expect((inbox['proposals'] as Json[]).find((p) => p['id'] === id)).toMatchObject({ standing: { canDecide: false, refusal: { code: 'permission_denied' } } });
    const page = await consoleGet(app, watcherSession, `/console/proposals/${id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain(`action="/console/proposals/${id}/decision"`);
    expect(page.body).toContain('You cannot decide this proposal');
    const refused = await consolePost(app, watcherSession, `/console/proposals/${id}/decision`, { decision: 'approve' }, json);
    expect(refused.statusCode).toBe(403);
    expect(parse(refused).code).toBe('permission_denied');

    // A reviewer (vault.read, automation.review) gets the form with their own CSRF token, and the preview.
    const own = await consoleGet(app, reviewerSession, `/console/proposals/${id}`);
    expect(own.body).toContain(`action="/console/proposals/${id}/decision"`);
    expect(own.body).toContain(`name="csrf" value="${reviewerSession.csrf}"`);
    const reviewerView = parse(await consoleGet(app, reviewerSession, `/console/proposals/${id}`, json));
    expect(reviewerView).toMatchObject({ standing: { canDecide: true, refusal: null }, previewWithheld: null, preview: { verdict: 'applies' } });
  });
});

describe('decisions through the console', () => {
  it('approves (303 to done=approve), Forge executes with a receipt, and undo restores the note', async () => {
    const base = await owner.api.apply({ mappingId, path: 'Console/Doc.md', content: 'v1\n' });
    const id = await pending(note('Console/Doc.md', 'v2\n', base.data['afterRevision'] as string));
    const res = await consolePost(app, reviewerSession, `/console/proposals/${id}/decision`, { decision: 'approve', reason: 'fine' });
    expect(res.statusCode).toBe(303);
    expect(res.headers['location']).toBe(`/console/proposals/${id}?done=approve`);
    await waitForProposalState(owner.api, id, ['executed']);
    const view = parse(await consoleGet(app, reviewerSession, `/console/proposals/${id}`, json));
    expect(view['executions'][0].receipt).toMatchObject({
      kind: 'apply',
      changes: [{ path: 'Console/Doc.md', operation: 'replace', beforeRevision: revisionOf('v1\n'), afterRevision: revisionOf('v2\n'), eventId: expect.any(String) }],
    });
    expect(view).toMatchObject({ canUndo: true, previewWithheld: 'decided', people: { [reviewer.account.id]: 'Rita Reviewer', [owner.account.id]: 'Olive Owner' } });
    expect((await consoleGet(app, reviewerSession, `/console/proposals/${id}?done=approve`)).statusCode).toBe(200);

    const undo = await consolePost(app, reviewerSession, `/console/proposals/${id}/undo`);
    expect(undo.statusCode).toBe(303);
    expect(undo.headers['location']).toBe(`/console/proposals/${id}?done=undo`);
    await waitForProposalState(owner.api, id, ['undone']);
    expect((await owner.api.read(mappingId, 'Console/Doc.md')).data['content']).toBe('v1\n');
  });

  it("refuses the proposer's own approval even with their valid CSRF token", async () => {
    const id = await pending(note('Console/Self.md', 's'));
    const ownerSession = await consoleSignIn(app, owner.token);
    const res = await consolePost(app, ownerSession, `/console/proposals/${id}/decision`, { decision: 'approve' }, json);
    expect(res.statusCode).toBe(403);
    expect(parse(res).code).toBe('self_approval_forbidden');
    const page = await consolePost(app, ownerSession, `/console/proposals/${id}/decision`, { decision: 'approve' });
    expect(page.statusCode).toBe(403);
    expect(page.body).toContain('<code>self_approval_forbidden</code>');
    expect(await proposalInDb(id)).toEqual({ state: 'pending_review', decisionReason: null });
  });

  it('rejects with a reason, stored trimmed as the decision reason', async () => {
    const id = await pending(note('Console/No.md', 'n'));
    const res = await consolePost(app, reviewerSession, `/console/proposals/${id}/decision`, { decision: 'reject', reason: '  not now  ' });
    expect(res.headers['location']).toBe(`/console/proposals/${id}?done=reject`);
    expect(await waitForProposalState(owner.api, id, ['rejected'])).toMatchObject({ decisionReason: 'not now', reviewerAccountId: reviewer.account.id });
  });

  it('lets exactly one of two reviewers deciding at once win, and exactly one of ten parallel undos', async () => {
    const id = await pending(note('Console/Race.md', 'race'));
    const url = `/console/proposals/${id}/decision`;
    const both = await Promise.all([reviewerSession, reviewer2Session].map((s) => consolePost(app, s, url, { decision: 'approve' })));
    expect(both.map((r) => r.statusCode).sort()).toEqual([303, 409]);
    expect(both.find((r) => r.statusCode === 409)!.body).toContain('<code>proposal_not_pending</code>');
    await waitForProposalState(owner.api, id, ['executed']);

    const undos = await Promise.all(
      Array.from({ length: 10 }, (_, i) => consolePost(app, i % 2 ? reviewer2Session : reviewerSession, `/console/proposals/${id}/undo`, {}, json)),
    );
    const accepted = undos.filter((r) => r.statusCode === 202);
    expect(accepted).toHaveLength(1);
    expect(parse(accepted[0]!)).toEqual({ id, state: 'undoing', workflowId: undoWorkflowId(id, 1) });
    for (const r of undos.filter((u) => u.statusCode !== 202)) {
      expect(r.statusCode).toBe(409);
      expect(parse(r).code).toBe('proposal_not_executed');
    }
    const done = await waitForProposalState(owner.api, id, ['undone']);
    expect((done['history'] as Array<{ state: string }>).filter((h) => h.state === 'undoing')).toHaveLength(1);
    const view = parse(await consoleGet(app, reviewerSession, `/console/proposals/${id}`, json));
    expect((view['workflows'] as Array<{ purpose: string }>).filter((w) => w.purpose === 'undo')).toHaveLength(1);
    // And Temporal ran one undo workflow, not a second.
    const client = new Client({ connection: ctx.temporal, namespace: 'default' });
    await expect(client.workflow.getHandle(undoWorkflowId(id, 1)).describe()).resolves.toMatchObject({ status: { name: 'COMPLETED' } });
    await expect(client.workflow.getHandle(undoWorkflowId(id, 2)).describe()).rejects.toThrow();
  });
});

describe('inbox', () => {
  let pagingWorkspaceId: string;
  let pagingMappingId: string;
  let created: string[]; // oldest first
  const inbox = async (query: string, session = reviewerSession) => {
    const res = await consoleGet(app, session, `/console?${query}`, json);
    expect(res.statusCode, res.body).toBe(200);
    return parse(res);
  };
  /** Every proposal of a query, following nextCursor; newest first. */
  const allPages = async (query: string) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await inbox(`${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect((page['proposals'] as unknown[]).length).toBeLessThanOrEqual(25);
      seen.push(...ids(page));
      cursor = page['nextCursor'] as string | null;
      pages++;
    } while (cursor);
    return { seen, pages };
  };

  beforeAll(async () => {
    pagingWorkspaceId = (await createWorkspace(db, { name: 'Paging', ownerAccountId: owner.account.id })).id;
    await addMember(db, { workspaceId: pagingWorkspaceId, accountId: reviewer.account.id, role: 'reviewer' });
    ({ mappingId: pagingMappingId } = await createMapping(db, { vaultId: (await createVault(db, { name: 'Paging vault', ownerWorkspaceId: pagingWorkspaceId })).id }));
    created = [];
    // One after another, so their creation order is their order in the inbox.
    for (let i = 0; i < 30; i++) {
      created.push(
        await propose({ kind: 'note.write', mappingId: pagingMappingId, path: `Page/${i}.md`, content: `${i}` }, { workspace: pagingWorkspaceId, bridge: i < 20 ? 'bridge-alpha' : 'bridge-beta' }),
      );
    }
    await Promise.all(created.map((id) => waitForProposalState(owner.api, id, ['pending_review'])));
  });

  it('pages 25 at a time, newest first, without duplicates or gaps', async () => {
    const first = await inbox(`workspaceId=${pagingWorkspaceId}`);
    expect(first['proposals']).toHaveLength(25);
    expect(first['nextCursor']).toEqual(expect.any(String));
    expect(first['filters']).toEqual({ workspaceId: pagingWorkspaceId, state: 'pending_review', bridge: null, sort: 'newest' });
    const { seen, pages } = await allPages(`workspaceId=${pagingWorkspaceId}`);
    expect(pages).toBe(2);
    expect(seen).toEqual([...created].reverse());
    // Each row says who proposed it, what it touches and how big it is.
    expect((first['proposals'] as Array<Record<string, unknown>>)[0]).toMatchObject({ proposerName: owner.account.displayName, scope: { firstTarget: 'Page/29.md', moreTargets: 0, notes: 1, bytes: 2 } });
  });

  it('names the next proposal waiting for this reviewer: the newest other one it may decide, never the proposer\'s own', async () => {
    const current = created[0]!;
    const pageOf = async (session: ConsoleSession) => {
      const res = await consoleGet(app, session, `/console/proposals/${current}`, json);
      expect(res.statusCode, res.body).toBe(200);
      return parse(res)['next'] as { id: string } | null;
    };
    // What the reviewer's inbox lists first, skipping the proposal itself and any it may not decide.
    const waiting = (await inbox('')) as { proposals: Array<{ id: string; standing: { canDecide: boolean } }> };
    const expected = waiting.proposals.find((p) => p.id !== current && p.standing.canDecide)!;
    expect(expected).toBeDefined();
    expect((await pageOf(reviewerSession))?.id).toBe(expected.id);
    // The owner proposed every one of them: nothing is waiting for the owner.
    expect(await pageOf(await consoleSignIn(app, owner.token))).toBeNull();
  });

  it('pages in the other orders too: waiting longest first, expiring soonest first', async () => {
    const oldest = await allPages(`workspaceId=${pagingWorkspaceId}&sort=oldest`);
    expect(oldest.pages).toBe(2);
    expect(oldest.seen).toEqual(created);
    const expiring = await allPages(`workspaceId=${pagingWorkspaceId}&sort=expiring`);
    expect(expiring.pages).toBe(2);
    expect([...expiring.seen].sort()).toEqual([...created].sort());
    const expiresAt = new Map<string, string>();
    for (const page of [await inbox(`workspaceId=${pagingWorkspaceId}&sort=expiring`)]) {
      for (const p of page['proposals'] as Array<{ id: string; expiresAt: string }>) expiresAt.set(p.id, p.expiresAt);
    }
    const firstPage = expiring.seen.slice(0, 25).map((id) => expiresAt.get(id)!);
    expect(firstPage).toEqual([...firstPage].sort());
    expect((await consoleGet(app, reviewerSession, `/console?sort=sideways`, json)).statusCode).toBe(400);
  });

  it('filters by bridge, state (pending_review by default, any) and workspace', async () => {
    const beta = await inbox(`workspaceId=${pagingWorkspaceId}&bridge=bridge-beta`);
    expect(ids(beta)).toEqual(created.slice(20).reverse());
    expect(beta['bridges']).toEqual(expect.arrayContaining(['bridge-alpha', 'bridge-beta', 'test-bridge']));

    const rejectedId = created[29]!;
    await reviewer.api.request('POST', `/api/dev/automation/proposals/${rejectedId}/reject`, { body: {} });
    await waitForProposalState(owner.api, rejectedId, ['rejected']);
    expect(ids(await inbox(`workspaceId=${pagingWorkspaceId}&bridge=bridge-beta`))).toEqual(created.slice(20, 29).reverse());
    expect(ids(await inbox(`workspaceId=${pagingWorkspaceId}&state=rejected`))).toEqual([rejectedId]);
    expect((await allPages(`workspaceId=${pagingWorkspaceId}&state=any`)).seen).toEqual([...created].reverse());
    // Empty strings (what the filter form sends for "any") are no filter.
    expect((await allPages(`workspaceId=${pagingWorkspaceId}&state=any&bridge=`)).seen).toHaveLength(30);

    const own = ids(await inbox(`workspaceId=${workspaceId}&state=any`));
    expect(own.some((id) => created.includes(id))).toBe(false);
    expect(own.length).toBeGreaterThan(0);
    // Without a workspace filter: every workspace the reviewer may see, newest first across them.
    const everywhere = (await allPages('state=any')).seen;
    expect(everywhere).toEqual(expect.arrayContaining([...own, ...created]));
    expect(everywhere).toHaveLength(new Set(everywhere).size);
    const createdAt = new Map<string, string>();
    for (const id of everywhere) createdAt.set(id, (await proposalCreatedAt(id)));
    const times = everywhere.map((id) => createdAt.get(id)!);
    expect(times).toEqual([...times].sort().reverse());
  });

  it('refuses malformed filters with invalid_request', async () => {
    for (const query of ['state=bogus', 'workspaceId=not-a-uuid', 'bridge=UPPER', 'colour=red']) {
      const res = await consoleGet(app, reviewerSession, `/console?${query}`, json);
      expect(res.statusCode, query).toBe(400);
      expect(parse(res).code, query).toBe('invalid_request');
      expect((await consoleGet(app, reviewerSession, `/console?${query}`)).statusCode, query).toBe(400);
    }
  });

  it('serves the list alone as a fragment with an ETag, 304 while unchanged, a new ETag once a proposal arrives', async () => {
    const url = `/console?workspaceId=${pagingWorkspaceId}&fragment=list`;
    const res = await consoleGet(app, reviewerSession, url);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['x-console-refresh-ms']).toBe('10000');
    const etag = res.headers['etag'] as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(res.body).not.toMatch(/<html|<!doctype/i);
    expect(res.body).toContain(`/console/proposals/${created[28]}`);

    const unchanged = await consoleGet(app, reviewerSession, url, { 'if-none-match': etag });
    expect(unchanged.statusCode).toBe(304);
    expect(unchanged.body).toBe('');
    // A stale ETag gets the list.
    expect((await consoleGet(app, reviewerSession, url, { 'if-none-match': '"stale"' })).statusCode).toBe(200);

    const arrived = await propose({ kind: 'note.write', mappingId: pagingMappingId, path: 'Page/new.md', content: 'new' }, { workspace: pagingWorkspaceId });
    await waitForProposalState(owner.api, arrived, ['pending_review']);
    const changed = await consoleGet(app, reviewerSession, url, { 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers['etag']).not.toBe(etag);
    expect(changed.body).toContain(`/console/proposals/${arrived}`);
  });
});

describe('assets', () => {
  it('serves the stylesheet and script the pages name, without a session, immutable under content-hashed names; anything else is 404', async () => {
    const page = await app.inject({ method: 'GET', url: '/console/sign-in' });
    expect(page.headers['cache-control']).toBe('no-store');
    const names = [...page.body.matchAll(/\/console\/assets\/(console\.[0-9a-f]{16}\.(?:css|js))/g)].map((m) => m[1]!);
    expect(names).toHaveLength(2);
    for (const name of names) {
      const res = await app.inject({ method: 'GET', url: `/console/assets/${name}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers['content-type']).toMatch(name.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
      expect(res.body.length).toBeGreaterThan(100);
    }
    const missing = await app.inject({ method: 'GET', url: '/console/assets/console.0000000000000000.js', headers: json });
    expect(missing.statusCode).toBe(404);
    expect(parse(missing).code).toBe('not_found');
  });
});

describe('signing in again', () => {
  it('ends the session the browser already held, so one browser keeps one session', async () => {
    const p = await person('Signs In Twice');
    const first = await consoleSignIn(app, p.token);
    const second = await consoleSignIn(app, p.token, { headers: { cookie: first.cookie } });
    expect(second.secret).not.toBe(first.secret);
    expect((await consoleGet(app, first, '/console', json)).statusCode).toBe(401);
    expect((await consoleGet(app, second, '/console', json)).statusCode).toBe(200);
    const rows = await sessionRows(p.account.id);
    expect(rows.filter((r) => r.endedAt === null)).toHaveLength(1);
  });
});
