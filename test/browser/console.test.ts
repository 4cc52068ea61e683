// The reviewer console (issue 16) in Debian's Chromium against the real app, Postgres, Temporal dev
// server and platform worker. Proves: a token signs in to an HttpOnly, SameSite=Strict session and
// never reaches the page or its storage; the inbox lists other people's proposals, filters them and
// shows a new one without a reload; a proposal shows its diff against the current revision; a second
// reviewer approves it and the page follows it to the receipt (revisions, event ids, Temporal UI
// link), then undoes it; the proposer gets an explanation instead of buttons and a forged decision is
// refused; form posts from another site or another origin are refused; sign-out ends the session for
// good; axe-core finds no violations at laptop and phone widths; the pages work from the keyboard;
// and no page logs a console error. Screenshots go to .data/artifacts/screenshots/console-*.png.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signOut } from '../../domain/console/sessions.ts';
import { createAccount, issueAccessToken } from '../../domain/identity/accounts.ts';
import { createMapping, createVault } from '../../domain/identity/vaults.ts';
import { addMember, createWorkspace } from '../../domain/identity/workspaces.ts';
import { axeViolations } from '../support/axe.ts';
import { consoleErrors, screenshot, useBrowser } from '../support/browser.ts';
import type { ViewportName } from '../support/browser.ts';
import { devClient } from '../support/dev-client.ts';
import type { DevClient } from '../support/dev-client.ts';
import { useTestAppWithWorker } from '../support/harness.ts';

// Callbacks given to page.evaluate run in Chromium; the program is typed without the DOM library,
// so the little they touch is declared here.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: any;
declare const document: any;
declare const localStorage: any;
declare const sessionStorage: any;
/* eslint-enable @typescript-eslint/no-explicit-any */

const TEMPORAL_UI = 'http://127.0.0.1:8233';
// A short heartbeat, so that a session ended elsewhere reaches an open page's stream within a test.
const ctx = useTestAppWithWorker({ name: 'console-browser', listen: true, overrides: { temporalUiUrl: TEMPORAL_UI, consoleLive: { heartbeatMs: 500 } } });
const chromium = useBrowser();
const viewportNames = ['laptop', 'phone'] as const satisfies readonly ViewportName[];
// Transitions driven by the worker through Temporal: generous, never a timing claim.
const MOVING_TIMEOUT = 20_000;

type Person = { id: string; name: string; token: string; api: DevClient };
type Space = { id: string; name: string; mappingId: string };
let proposer: Person;
let reviewer: Person;
let secondReviewer: Person;
let garden: Space;
let books: Space;

const weekPath = 'Plans/Week.md';
const seedsPath = 'Plans/Seeds.md';
const weekBefore = '# Week\n\nMonday: dig the beds.\nTuesday: water.\nFriday: rest.\n';
const weekAfter = '# Week\n\nMonday: dig the beds.\nTuesday: plant the tomatoes.\nWednesday: mulch.\nFriday: rest.\n';
let weekRevision: string;
let weekId: string; // note.transaction replacing Week.md and creating Seeds.md (garden, zapier)
let readingId: string; // note.write of a new note (books, generic-webhook)
let shedId: string; // stays pending_review throughout (garden, generic-webhook)

async function person(name: string): Promise<Person> {
  const account = await createAccount(ctx.db.pool, { email: `${randomUUID()}@example.test`, displayName: name, plan: 'developer_agent' });
  const { token } = await issueAccessToken(ctx.db.pool, { accountId: account.id, name: 'console' });
  return { id: account.id, name, token, api: devClient(ctx.app, token) };
}

/** A workspace the proposer owns, with both reviewers as members (role reviewer). */
async function space(name: string): Promise<Space> {
  const ws = await createWorkspace(ctx.db.pool, { name, ownerAccountId: proposer.id });
  for (const member of [reviewer, secondReviewer]) await addMember(ctx.db.pool, { workspaceId: ws.id, accountId: member.id, role: 'reviewer' });
  const vault = await createVault(ctx.db.pool, { name: `${name} vault`, ownerWorkspaceId: ws.id });
  const { mappingId } = await createMapping(ctx.db.pool, { vaultId: vault.id });
  return { id: ws.id, name, mappingId };
}

/** The proposal's state through the API (the proposer may view it: owner). */
async function stateOf(id: string): Promise<string> {
  const res = await proposer.api.request('GET', `/api/dev/automation/proposals/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.data['state'] as string;
}

/** Polls the API until the proposal is in `state` (a plain loop: expect.poll works only inside tests, this runs in hooks too). */
async function waitForState(id: string, state: string, timeoutMs = MOVING_TIMEOUT): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (let now = await stateOf(id); now !== state; now = await stateOf(id)) {
    if (Date.now() > until) throw new Error(`proposal ${id} stayed ${now}, waiting for ${state}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Proposes through the automation API with the proposer's token, then waits until it is up for review. */
async function propose(ws: Space, summary: string, action: Record<string, unknown>, bridge: string): Promise<string> {
  const res = await proposer.api.request('POST', '/api/dev/automation/proposals', {
    body: { workspaceId: ws.id, bridge, summary, action: { mappingId: ws.mappingId, ...action } },
    headers: { 'idempotency-key': randomUUID() },
  });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.data['id'] as string;
  await waitForState(id, 'pending_review');
  return id;
}

/** A page in a fresh context, and the console errors it logs from now on. */
async function open(viewport: ViewportName = 'laptop'): Promise<{ page: Page; errors: string[] }> {
  const page = await chromium.newPage({ viewport });
  return { page, errors: consoleErrors(page) };
}

/** Goes to a console path signed out, is sent to sign-in, signs in with the token and lands back on the path. */
async function signIn(page: Page, token: string, path = '/console'): Promise<void> {
  await page.goto(`${ctx.url}${path}`);
  await page.waitForURL((url) => url.pathname === '/console/sign-in' && url.searchParams.get('next') === path);
  await page.getByLabel('Personal access token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname + url.search === path);
}

const noHorizontalOverflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
const focused = (page: Page) => page.evaluate(() => ({ id: document.activeElement?.id as string, text: (document.activeElement?.textContent ?? '').trim() as string }));

/** Chromium's log line for a fetch the server refused; expected where a test forges a request. */
const refusedFetch = /Failed to load resource: the server responded with a status of 403/;

beforeAll(async () => {
  proposer = await person('Priya Proposer');
  reviewer = await person('Rui Reviewer');
  secondReviewer = await person('Sam Second');
  garden = await space('Garden club');
  books = await space('Book circle');
  const seeded = await proposer.api.apply({ mappingId: garden.mappingId, path: weekPath, content: weekBefore });
  expect(seeded.statusCode, seeded.body).toBe(201);
  weekRevision = seeded.data['afterRevision'] as string;
  weekId = await propose(
    garden,
    'Replan the planting week',
    {
      kind: 'note.transaction',
      actions: [
        { type: 'write-note', path: weekPath, content: weekAfter, expectedHash: weekRevision },
        { type: 'write-note', path: seedsPath, content: '# Seeds\n\nTomatoes, basil.\n' },
      ],
    },
    'zapier',
  );
  readingId = await propose(books, 'Add the reading list', { kind: 'note.write', path: 'Reading/List.md', content: '# Reading\n\n1. Middlemarch\n' }, 'generic-webhook');
  shedId = await propose(garden, 'Rename the tool shed note', { kind: 'note.write', path: 'Places/Shed.md', content: '# Shed\n' }, 'generic-webhook');
});

describe('signing in', () => {
  test('exchanges the token for an HttpOnly, SameSite=Strict session cookie; the token is nowhere in the page or its storage', async () => {
    const { page, errors } = await open();
    await signIn(page, reviewer.token);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Proposals');
    expect(await page.locator('header').innerText()).toContain('Signed in as Rui Reviewer');

    const cookies = await page.context().cookies();
    expect(cookies.map(({ name, httpOnly, sameSite, path }) => ({ name, httpOnly, sameSite, path }))).toEqual([
      { name: 'hnp_console_session', httpOnly: true, sameSite: 'Strict', path: '/console' },
    ]);
    const session = cookies[0]!.value;
    expect(session).not.toContain(reviewer.token);

    // Scripts on the page see neither the session nor the token.
    const seen = await page.evaluate(() => ({
      cookie: document.cookie as string,
      local: JSON.stringify({ ...localStorage }),
      session: JSON.stringify({ ...sessionStorage }),
    }));
    expect(seen.cookie).not.toContain(session);
    expect(seen.cookie).not.toContain('hnp_console_session');
    for (const place of [seen.local, seen.session, await page.content(), page.url()]) expect(place).not.toContain(reviewer.token);
    expect(errors).toEqual([]);
  });
});

describe('the inbox', () => {
  for (const viewport of viewportNames) {
    test(`lists the proposals another account made, across the reviewer's workspaces (${viewport})`, async () => {
      const { page, errors } = await open(viewport);
      await signIn(page, reviewer.token);
      const list = page.locator('#inbox-list');
      const titles = await list.locator('a.row-link').allInnerTexts();
      expect(titles).toEqual(expect.arrayContaining(['Replan the planting week', 'Add the reading list', 'Rename the tool shed note']));
      const row = list.locator('tr', { hasText: 'Replan the planting week' });
      // Who proposed it, what it touches (the first path and how many more), its size, its age, where it comes from.
      expect(await row.innerText()).toMatch(/Priya Proposer[\s\S]*Plans\/Week\.md\s+and 1 more[\s\S]*2 notes, [\d.]+ B[\s\S]*Garden club · zapier/);
      expect(await row.locator('.badge').innerText()).toBe('Waiting for review');
      expect(await list.getByRole('link', { name: 'Add the reading list' }).getAttribute('href')).toBe(`/console/proposals/${readingId}`);
      await screenshot(page, `console-inbox-${viewport}`);
      expect(await noHorizontalOverflow(page), 'the inbox scrolls sideways').toBe(true);
      expect(errors).toEqual([]);
    });
  }

  test('filters by workspace, state and bridge through the form', async () => {
    const { page, errors } = await open();
    await signIn(page, reviewer.token);
    const list = page.locator('#inbox-list');
    const titles = () => list.locator('a.row-link').allInnerTexts();
    const apply = () => page.getByRole('button', { name: 'Apply filters' }).click();

    await page.getByLabel('Workspace').selectOption({ label: 'Book circle' });
    await apply();
    await page.waitForURL((url) => url.searchParams.get('workspaceId') === books.id);
    expect(await titles()).toEqual(['Add the reading list']);
    // The form shows the filter in force.
    expect(await page.getByLabel('Workspace').inputValue()).toBe(books.id);

    await page.getByLabel('Workspace').selectOption({ label: 'All my workspaces (2)' });
    await page.getByLabel('Bridge').selectOption('zapier');
    await apply();
    await page.waitForURL((url) => url.searchParams.get('bridge') === 'zapier' && !url.searchParams.get('workspaceId'));
    expect(await titles()).toEqual(['Replan the planting week']);

    await page.getByLabel('Bridge').selectOption({ label: 'Any bridge' });
    await page.getByLabel('State').selectOption({ label: 'Executed' });
    await apply();
    await page.waitForURL((url) => url.searchParams.get('state') === 'executed');
    await list.getByText('No proposals match these filters.').waitFor();
    expect(await titles()).toEqual([]);

    await page.getByLabel('State').selectOption({ label: 'Any state' });
    await page.getByLabel('Workspace').selectOption({ label: 'Garden club' });
    await apply();
    await page.waitForURL((url) => url.searchParams.get('state') === 'any' && url.searchParams.get('workspaceId') === garden.id);
    expect((await titles()).sort()).toEqual(['Rename the tool shed note', 'Replan the planting week']);
    expect(errors).toEqual([]);
  });

  test('a proposal made while the inbox is open arrives through the live stream, without a reload', async () => {
    const { page, errors } = await open();
    const fragments: number[] = [];
    page.on('request', (request) => {
      if (request.url().includes('fragment=list')) fragments.push(Date.now());
    });
    await signIn(page, reviewer.token);
    // A reload would lose this marker.
    await page.evaluate(() => (window.loadedOnce = 'yes'));
    await page.locator('#inbox-list[data-live-mode="stream"]').waitFor();
    const before = fragments.length;
    const proposedAt = Date.now();
    await propose(books, 'A late arrival', { kind: 'note.write', path: 'Reading/Late.md', content: '# Late\n' }, 'generic-webhook');
    // Polling would ask every 10 s; the stream makes the page ask once, as the proposal commits.
    await page.locator('#inbox-list').getByRole('link', { name: 'A late arrival' }).waitFor({ timeout: 9_000 });
    const arrivedMs = Date.now() - proposedAt;
    expect(fragments.length - before, 'the list was fetched because the stream said so, not by a poll').toBeGreaterThanOrEqual(1);
    expect(await page.evaluate(() => window.loadedOnce)).toBe('yes');
    expect(await page.locator('#live-status').innerText()).toMatch(/^Updated at /);
    console.info(`console live stream: proposal on the open inbox ${arrivedMs} ms after the API call began (the bench measures it: npm run bench -- --suite console)`);
    expect(errors).toEqual([]);
  });

  test('where the stream cannot be held, the inbox polls instead', async () => {
    const { page, errors } = await open();
    // As a proxy that refuses the stream would: the browser gets no event stream at all.
    await page.route('**/console/live', (route) => route.fulfill({ status: 503, contentType: 'application/problem+json', body: '{"code":"live_updates_unavailable"}' }));
    const polled = page.waitForRequest((request) => request.url().includes('fragment=list'));
    await signIn(page, reviewer.token);
    await page.locator('#inbox-list[data-live-mode="poll"]').waitFor();
    // Falling back, the page refreshes at once (a change may have come meanwhile), then every 10 s.
    await polled;
    expect(errors.filter((e) => !/status of 503/.test(e))).toEqual([]);
  });

  test('a session signed out elsewhere takes the open page to sign-in, which says why', async () => {
    const { page } = await open();
    await signIn(page, secondReviewer.token);
    await page.locator('#inbox-list[data-live-mode="stream"]').waitFor();
    const cookie = (await page.context().cookies()).find((c) => c.name === 'hnp_console_session')!;
    await signOut(ctx.db.pool, cookie.value);
    await page.waitForURL((url) => url.pathname === '/console/sign-in' && url.searchParams.get('expired') === '1', { timeout: 10_000 });
    expect(await page.locator('.notice[role=status]').innerText()).toMatch(/^Your session ended/);
  });
});

describe('a proposal changing while it is read', () => {
  test('is replaced in place when the stream says so, keeping the reason being written', async () => {
    const { page, errors } = await open();
    const id = await propose(books, 'Reshelve the atlas', { kind: 'note.write', path: 'Reading/Atlas.md', content: '# Atlas\n' }, 'generic-webhook');
    await signIn(page, reviewer.token, `/console/proposals/${id}`);
    await page.locator('#proposal[data-live-mode="stream"]').waitFor();
    await page.getByLabel(/^Reason/).fill('Half written: the atlas goes');
    // Focus leaves the field (a refresh never replaces a part while someone types in it).
    await page.evaluate(() => document.activeElement?.blur());
    expect(await page.locator('#live-status').innerText()).toBe('');
    // What the page shows changes under it (an operator extends the expiry by a day).
    await ctx.db.pool.query(sql.unsafe`UPDATE action_proposals SET expires_at = expires_at + interval '1 day' WHERE id = ${id}`);
    await page.locator('#live-status', { hasText: /^Updated at / }).waitFor({ timeout: 9_000 });
    expect(await page.getByLabel(/^Reason/).inputValue()).toBe('Half written: the atlas goes');
    expect(errors).toEqual([]);
  });
});

describe('a proposal: its diff, the decision, the receipt and undo', () => {
  for (const viewport of viewportNames) {
    test(`shows the diff of every note against its current revision (${viewport})`, async () => {
      const { page, errors } = await open(viewport);
      await signIn(page, reviewer.token);
      await page.getByRole('link', { name: 'Replan the planting week' }).click();
      await page.waitForURL((url) => url.pathname === `/console/proposals/${weekId}`);
      await page.getByRole('heading', { level: 1, name: 'Replan the planting week' }).waitFor();
      expect(await page.locator('section', { has: page.getByRole('heading', { name: 'About this proposal' }) }).innerText()).toMatch(/Proposed by\s+Priya Proposer/);
      expect(await page.getByText('Forge can apply this to the notes as they are now.').count()).toBe(1);

      // The totals come before any diff; a change of two short notes shows both diffs open.
      expect(await page.locator('#change-totals').innerText()).toBe('2 notes: 1 note created, 1 note replaced; 5 lines added, 1 line removed.');
      const week = page.locator('details.change', { hasText: weekPath });
      expect(await week.getAttribute('open')).toBe('');
      expect(await week.locator('.badge').innerText()).toBe('replaced');
      expect(await week.locator('code.rev').first().innerText()).toBe(weekRevision);
      const diff = week.getByLabel(`Diff of ${weekPath}`);
      await diff.waitFor();
      expect(await diff.locator('del').allInnerTexts()).toEqual(['-Tuesday: water.']);
      expect(await diff.locator('ins').allInnerTexts()).toEqual(['+Tuesday: plant the tomatoes.', '+Wednesday: mulch.']);
      expect(await diff.locator('del').first().isVisible()).toBe(true);
      expect(await diff.locator('ins').first().isVisible()).toBe(true);

      const seeds = page.locator('details.change', { hasText: seedsPath });
      expect(await seeds.locator('code.rev').first().innerText()).toBe('none (new note)');
      expect(await seeds.locator('del').count()).toBe(0);
      expect(await seeds.locator('ins').allInnerTexts()).toContain('+Tomatoes, basil.');

      expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(1);
      await screenshot(page, `console-proposal-${viewport}`, { fullPage: true });
      expect(await noHorizontalOverflow(page), 'the proposal page scrolls sideways').toBe(true);
      expect(errors).toEqual([]);
    });
  }

  test('a second reviewer approves with a reason; the page follows it to the receipt, links Temporal, and undoes it', async () => {
    const { page, errors } = await open();
    await signIn(page, secondReviewer.token, `/console/proposals/${weekId}`);
    await page.getByLabel(/^Reason/).fill('Tomatoes go in before the rain.');
    await page.getByRole('button', { name: 'Approve' }).click();
    // Said of the state it is in now: Forge may already have finished when the page renders.
    await page.getByText(/^Approved(\. Forge is applying it now; this page follows it to its receipt\.|, and Forge applied it)/).waitFor();
    await page.waitForURL((url) => url.searchParams.get('done') === 'approve');
    // Set after the redirect: gone if the page reloads while following the proposal.
    await page.evaluate(() => (window.followed = 'in place'));
    const initially = await page.locator('#proposal .meta .badge').innerText();
    expect(['Approved', 'Executing', 'Executed']).toContain(initially);

    const proposal = page.locator('#proposal');
    await proposal.locator('.badge.state-executed').waitFor({ timeout: MOVING_TIMEOUT });
    expect(await page.evaluate(() => window.followed)).toBe('in place');
    // Forge usually is still at work when the page first renders; then the script must have swapped the state in.
    if (initially !== 'Executed') expect(await page.locator('#live-status').innerText()).toMatch(/^Updated at /);
    expect(await stateOf(weekId)).toBe('executed');
    expect(await proposal.locator('dl.facts').first().innerText()).toMatch(/Decided by\s+Sam Second[\s\S]*Reason\s+Tomatoes go in before the rain\./);

    // The receipt: one row per note, with the revisions and the event the knowledge core recorded.
    const receipt = proposal.locator('article.execution', { hasText: 'Applied by Forge' });
    await receipt.getByRole('table').waitFor();
    const rows = await receipt.locator('tbody tr').evaluateAll((trs) =>
      trs.map((tr) => [tr.querySelector('th').innerText, ...[...tr.querySelectorAll('td')].map((td: { innerText: string }) => td.innerText)] as string[]),
    );
    const week = await proposer.api.read(garden.mappingId, weekPath);
    const seeds = await proposer.api.read(garden.mappingId, seedsPath);
    expect(week.data['content']).toBe(weekAfter);
    const events = (await proposer.api.events(garden.mappingId, '&limit=100')).data['events'] as Array<{ id: string; path: string; beforeRevision: string | null; afterRevision: string | null; actor: { type: string } }>;
    const eventOf = (path: string) => events.find((e) => e.path === path && e.actor.type === 'forge')!.id;
    expect(rows).toEqual([
      [weekPath, 'replace', weekRevision, week.data['revision'], eventOf(weekPath)],
      [seedsPath, 'create', '—', seeds.data['revision'], eventOf(seedsPath)],
    ]);

    const link = proposal.getByRole('link', { name: new RegExp(`proposal-review-${weekId}`) });
    expect(await link.getAttribute('href')).toBe(`${TEMPORAL_UI}/namespaces/default/workflows/proposal-review-${weekId}`);
    await screenshot(page, 'console-receipt-laptop', { fullPage: true });

    await page.getByRole('button', { name: 'Undo this change' }).click();
    await page.getByText(/^(Undo requested\. Forge is restoring the notes now|Undone: Forge restored the notes)/).waitFor();
    await proposal.locator('.badge.state-undone').waitFor({ timeout: MOVING_TIMEOUT });
    expect(await stateOf(weekId)).toBe('undone');
    const restored = await proposer.api.read(garden.mappingId, weekPath);
    expect(restored.data).toMatchObject({ content: weekBefore, revision: weekRevision });
    expect((await proposer.api.read(garden.mappingId, seedsPath)).statusCode).toBe(404);
    expect(await proposal.locator('article.execution', { hasText: 'Undone by Forge' }).locator('tbody th').allInnerTexts()).toEqual([weekPath, seedsPath]);
    expect(errors).toEqual([]);
  }, 60_000);
});

describe('reviewing as reviewers do it', () => {
  test('a 100-note transaction: totals first, every diff collapsed, a jump list that opens its note, Expand all', async () => {
    const actions = Array.from({ length: 100 }, (_, i) => ({ type: 'write-note', path: `Bulk/Note ${String(i).padStart(3, '0')}.md`, content: `# Note ${i}\n\n${'A line of text.\n'.repeat(5)}` }));
    const id = await propose(books, 'Import a hundred notes', { kind: 'note.transaction', actions }, 'zapier');
    for (const viewport of viewportNames) {
      const { page, errors } = await open(viewport);
      await signIn(page, reviewer.token, `/console/proposals/${id}`);
      expect(await page.locator('#change-totals').innerText()).toBe('100 notes: 100 notes created; 700 lines added, 0 lines removed.');
      const notes = page.locator('details.change');
      expect(await notes.count()).toBe(100);
      expect(await page.locator('details.change[open]').count()).toBe(0);
      // What it changes comes before the decision.
      const changeTop = (await page.getByRole('heading', { name: 'What approving would change' }).boundingBox())!.y;
      const decisionTop = (await page.getByRole('heading', { name: 'Your decision' }).boundingBox())!.y;
      expect(changeTop).toBeLessThan(decisionTop);
      await screenshot(page, `console-transaction-${viewport}`);
      await page.locator('nav.jump').getByRole('link', { name: 'Bulk/Note 057.md' }).click();
      await page.waitForURL((url) => url.hash === '#c-57');
      expect(await page.locator('#c-57').getAttribute('open')).toBe('');
      expect(await page.locator('#c-57').getByLabel('Diff of Bulk/Note 057.md').isVisible()).toBe(true);
      await page.getByRole('button', { name: 'Expand all' }).click();
      expect(await page.locator('details.change[open]').count()).toBe(100);
      await page.getByRole('button', { name: 'Collapse all' }).click();
      expect(await page.locator('details.change[open]').count()).toBe(0);
      // ] and [ walk the notes, opening each; u goes back to the inbox.
      await page.keyboard.press(']');
      await page.keyboard.press(']');
      expect(await page.evaluate(() => document.activeElement.closest('details').id)).toBe('c-1');
      await page.keyboard.press('[');
      expect(await page.evaluate(() => document.activeElement.closest('details').id)).toBe('c-0');
      expect(await page.locator('details.change[open]').count()).toBe(2);
      expect(await noHorizontalOverflow(page), 'the transaction page scrolls sideways').toBe(true);
      expect(await axeViolations(page)).toEqual([]);
      await page.keyboard.press('u');
      await page.waitForURL((url) => url.pathname === '/console');
      expect(errors).toEqual([]);
    }
  });

  test('three proposals in a row from the keyboard alone: j, Enter, d, the reason, Approve, n', async () => {
    // A reviewer of a workspace of their own, so "next" is exactly these three.
    const solo = await person('Kim Keyboard');
    const ws = await createWorkspace(ctx.db.pool, { name: 'Keyboard club', ownerAccountId: proposer.id });
    await addMember(ctx.db.pool, { workspaceId: ws.id, accountId: solo.id, role: 'reviewer' });
    const { mappingId } = await createMapping(ctx.db.pool, { vaultId: (await createVault(ctx.db.pool, { name: 'Keyboard vault', ownerWorkspaceId: ws.id })).id });
    const club: Space = { id: ws.id, name: 'Keyboard club', mappingId };
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push(await propose(club, `Keyboard ${n}`, { kind: 'note.write', path: `Keys/${n}.md`, content: `# ${n}\n` }, 'generic-webhook'));
    const { page, errors } = await open();
    await signIn(page, solo.token);
    await page.keyboard.press('j');
    // Newest first: the first row is the third proposal, announced with its place in the list.
    expect((await focused(page)).text).toBe('Keyboard 3');
    expect(await page.locator('#row-status').innerText()).toMatch(/^Proposal 1 of 3: Keyboard 3; Waiting for review; by Priya Proposer; waiting /);
    await page.keyboard.press('j');
    await page.keyboard.press('k');
    expect((await focused(page)).text).toBe('Keyboard 3');
    await page.keyboard.press('Enter');
    const decided: string[] = [];
    for (let i = 0; i < 3; i++) {
      await page.waitForURL((url) => /^\/console\/proposals\/[0-9a-f-]+$/.test(url.pathname) && !url.searchParams.get('done'));
      const id = new URL(page.url()).pathname.split('/').pop()!;
      await page.keyboard.press('d');
      expect((await focused(page)).id).toBe('reason');
      // The keys are inert in the field: "d" and "n" here are typed, not obeyed.
      await page.keyboard.type(`Keyboard review ${i + 1}: done`);
      expect(await page.locator('#reason-count').innerText()).toBe(`${'Keyboard review 1: done'.length} of 2,000 characters`);
      await page.keyboard.press('Tab');
      expect((await focused(page)).text).toBe('Approve');
      await page.keyboard.press('Enter');
      await page.waitForURL((url) => url.searchParams.get('done') === 'approve');
      decided.push(id);
      if (i < 2) await page.keyboard.press('n');
    }
    expect([...decided].sort()).toEqual([...ids].sort());
    const reasons = await Promise.all(decided.map(async (id) => (await proposer.api.request('GET', `/api/dev/automation/proposals/${id}`)).data['decisionReason']));
    expect(reasons).toEqual(['Keyboard review 1: done', 'Keyboard review 2: done', 'Keyboard review 3: done']);
    await page.getByText('No other proposal is waiting for you.').waitFor();
    for (const id of ids) await waitForState(id, 'executed');
    expect(errors).toEqual([]);
  }, 60_000);

  test('an ended session is said so on sign-in, and signing in returns to the page', async () => {
    const { page, errors } = await open();
    // The server's own redirect, on a reload: without the live stream, whose heartbeat would
    // otherwise take the page to sign-in by itself (tested above: "a session signed out elsewhere…")
    // and race the reload.
    await page.route('**/console/live', (route) => route.abort());
    await signIn(page, secondReviewer.token, `/console/proposals/${shedId}`);
    await ctx.db.pool.query(sql.unsafe`UPDATE console_sessions SET created_at = now() - interval '9 hours', expires_at = now() - interval '1 hour' WHERE account_id = ${secondReviewer.id} AND ended_at IS NULL`);
    await page.reload();
    await page.waitForURL((url) => url.pathname === '/console/sign-in' && url.searchParams.get('expired') === '1');
    expect(await page.locator('.notice[role=status]').innerText()).toBe('Your session ended: it expired, was signed out elsewhere, or its token was revoked. Sign in again and you are taken back to the page you were on.');
    await page.getByLabel('Personal access token').fill(secondReviewer.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === `/console/proposals/${shedId}`);
    // The refused stream is logged by Chromium as a failed load; nothing else may be.
    expect(errors.filter((e) => !/console\/live|net::ERR_FAILED/.test(e))).toEqual([]);
  });

  test('a reason over the limit is answered in words, and what was typed is still in the form', async () => {
    const { page, errors } = await open();
    await signIn(page, reviewer.token, `/console/proposals/${shedId}`);
    // A browser keeps to maxlength when typing; a pasted or scripted one may not.
    const typed = `${'Long thoughts about the shed. '.repeat(70)}The end.`;
    await page.evaluate((text) => {
      const field = document.getElementById('reason');
      field.removeAttribute('maxlength');
      field.value = text;
    }, typed);
    await page.getByRole('button', { name: 'Approve' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toContain(`Your reason has ${typed.length.toLocaleString('en')} characters; a reason holds at most 2,000. Shorten it, then decide again: nothing was decided.`);
    expect(await page.locator('#reason').inputValue()).toBe(typed);
    expect(await stateOf(shedId)).toBe('pending_review');
    await screenshot(page, 'console-long-reason-laptop');
    expect(errors.filter((e) => !/status of 400/.test(e))).toEqual([]);
  });

  test('on a phone a receipt shows every column, hashes and event ids wrapped, nothing clipped', async () => {
    const { page, errors } = await open('phone');
    await signIn(page, reviewer.token, `/console/proposals/${weekId}`);
    await page.getByRole('heading', { name: 'Receipts' }).waitFor();
    const cells = page.locator('table.receipt tbody tr').first().locator('td[data-label="Event"]');
    const box = (await cells.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    // The event id is there and whole (the label "Event:" is the cell's ::before, not its text).
    const week = (await proposer.api.events(garden.mappingId, '&limit=100')).data['events'] as Array<{ id: string; path: string; actor: { type: string } }>;
    expect(week.map((e) => String(e.id))).toContain(await cells.innerText());
    expect(await cells.isVisible()).toBe(true);
    expect(await noHorizontalOverflow(page), 'the receipt scrolls sideways').toBe(true);
    await screenshot(page, 'console-receipt-phone', { fullPage: true });
    expect(errors).toEqual([]);
  });
});

describe('who may not decide, and posts that are not from the console', () => {
  test('the proposer is told why they cannot decide, sees no buttons, and a forged approval from their own page is refused', async () => {
    const { page, errors } = await open();
    await signIn(page, proposer.token, `/console/proposals/${shedId}`);
    await page.getByRole('heading', { name: 'You cannot decide this proposal' }).waitFor();
    expect(await page.getByText('Another reviewer of the workspace with the automation.review permission decides it.').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Reject' }).count()).toBe(0);

    // Same origin, the session's own CSRF token: only the rule against deciding one's own proposal refuses it.
    const forged = await page.evaluate(async (id) => {
      const csrf = document.querySelector('form.sign-out input[name=csrf]').value as string;
      const res = await fetch(`/console/proposals/${id}/decision`, {
        method: 'POST',
        headers: { accept: 'application/json' },
        body: new URLSearchParams({ csrf, decision: 'approve' }),
      });
      return { status: res.status, body: (await res.json()) as { code: string } };
    }, shedId);
    expect(forged).toMatchObject({ status: 403, body: { code: 'self_approval_forbidden' } });
    expect(await stateOf(shedId)).toBe('pending_review');
    expect(errors.filter((e) => !refusedFetch.test(e))).toEqual([]);
  });

  describe('a page of another site or origin posting a decision form', () => {
    let attacker: Server;
    let port: number;
    beforeAll(async () => {
      // Auto-submits an approval without a csrf field to the console, as a malicious page would.
      attacker = createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(
          `<!doctype html><title>Win a prize</title><form id="f" method="post" action="${ctx.url}/console/proposals/${shedId}/decision">` +
            `<input type="hidden" name="decision" value="approve"></form><script>document.getElementById('f').submit()</script>`,
        );
      });
      await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
      const address = attacker.address();
      port = typeof address === 'object' && address ? address.port : 0;
    });
    afterAll(async () => {
      await new Promise((resolve) => attacker.close(resolve));
    });

    // localhost is another site than 127.0.0.1 (the cookie stays home); 127.0.0.1 on another port is
    // the same site but another origin (the SameSite=Strict cookie goes along; the Origin check refuses).
    for (const [kind, host] of [
      ['another site', 'localhost'],
      ['another origin of the same site', '127.0.0.1'],
    ] as const) {
      test(`is refused (403 csrf_check_failed) while the reviewer is signed in: ${kind}`, async () => {
        const { page, errors } = await open();
        await signIn(page, reviewer.token);
        const refused = page.waitForResponse((response) => response.url() === `${ctx.url}/console/proposals/${shedId}/decision` && response.request().method() === 'POST');
        await page.goto(`http://${host}:${port}/`);
        const response = await refused;
        expect(response.status()).toBe(403);
        await page.waitForURL(`${ctx.url}/console/proposals/${shedId}/decision`);
        expect(await page.locator('main').innerText()).toMatch(/Code\s+csrf_check_failed/);
        expect(await stateOf(shedId)).toBe('pending_review');
        // The reviewer's own session was not disturbed.
        await page.goto(`${ctx.url}/console`);
        expect(new URL(page.url()).pathname).toBe('/console');
        expect(errors.filter((e) => !refusedFetch.test(e))).toEqual([]);
      });
    }
  });
});

describe('signing out', () => {
  test('ends the session: sign-in again, even for a replayed copy of the old cookie', async () => {
    const { page, errors } = await open();
    await signIn(page, reviewer.token);
    const [old] = await page.context().cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.pathname === '/console/sign-in' && url.searchParams.get('signedOut') === '1');
    expect(await page.getByRole('status').filter({ hasText: 'You are signed out' }).count()).toBe(1);
    expect(await page.context().cookies()).toEqual([]);

    await page.goto(`${ctx.url}/console`);
    await page.waitForURL((url) => url.pathname === '/console/sign-in');

    const { page: replay, errors: replayErrors } = await open();
    await replay.context().addCookies([{ name: old!.name, value: old!.value, domain: old!.domain, path: old!.path, httpOnly: true, sameSite: 'Strict' }]);
    await replay.goto(`${ctx.url}/console`);
    await replay.waitForURL((url) => url.pathname === '/console/sign-in' && url.searchParams.get('next') === '/console');
    expect(errors).toEqual([]);
    expect(replayErrors).toEqual([]);
  });
});

describe('accessibility', () => {
  for (const viewport of viewportNames) {
    test(`axe-core finds no violations on the sign-in page, the inbox and proposal pages (${viewport})`, async () => {
      const { page, errors } = await open(viewport);
      const found: Record<string, string[]> = {};
      await page.goto(`${ctx.url}/console/sign-in`);
      found['sign-in'] = await axeViolations(page);
      await signIn(page, reviewer.token);
      found['inbox'] = await axeViolations(page);
      await page.goto(`${ctx.url}/console/proposals/${shedId}`);
      await page.getByRole('heading', { name: 'Your decision' }).waitFor();
      found['pending proposal'] = await axeViolations(page);
      await page.goto(`${ctx.url}/console/proposals/${weekId}`);
      await page.getByRole('heading', { name: 'Receipts' }).waitFor();
      found['undone proposal with receipts'] = await axeViolations(page);
      expect(found, JSON.stringify(found, null, 2)).toEqual({ 'sign-in': [], inbox: [], 'pending proposal': [], 'undone proposal with receipts': [] });
      expect(errors).toEqual([]);
    });
  }

  test('from the top of a page, Tab reaches the skip link first, then the header, then Sign out', async () => {
    const { page, errors } = await open();
    await signIn(page, reviewer.token);
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Tab');
      order.push((await focused(page)).text);
    }
    expect(order).toEqual(['Skip to content', 'Reviewer console', 'Sign out']);
    // The skip link takes focus to the main content.
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    expect((await focused(page)).text).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect((await focused(page)).id).toBe('main');
    expect(errors).toEqual([]);
  });

  for (const key of ['Enter', 'Space'] as const) {
    test(`the reason and Approve are reached by Tab, and ${key} on Approve approves`, async () => {
      const id = await propose(books, `Approved with ${key}`, { kind: 'note.write', path: `Keys/${key}.md`, content: `# ${key}\n` }, 'generic-webhook');
      const { page, errors } = await open();
      await signIn(page, reviewer.token, `/console/proposals/${id}`);
      let steps = 0;
      while ((await focused(page)).id !== 'reason' && steps++ < 30) await page.keyboard.press('Tab');
      expect((await focused(page)).id, 'Tab never reached the reason').toBe('reason');
      await page.keyboard.type(`Fine by keyboard (${key}).`);
      await page.keyboard.press('Tab');
      expect((await focused(page)).text).toBe('Approve');
      await page.keyboard.press(key);
      await page.getByText(/^Approved(\. Forge is applying it now|, and Forge applied it)/).waitFor();
      await waitForState(id, 'executed');
      const decided = await proposer.api.request('GET', `/api/dev/automation/proposals/${id}`);
      expect(decided.data['decisionReason']).toBe(`Fine by keyboard (${key}).`);
      expect(errors).toEqual([]);
    });
  }
});
