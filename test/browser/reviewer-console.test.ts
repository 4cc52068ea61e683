// The reviewer console in a real Chromium (Debian's, through playwright-core) against the real app,
// Postgres, Temporal and the platform worker: sign in with a token, the inbox across workspaces
// with its filters and live updates, a proposal with its diff, approval by a second reviewer, the
// receipt and the Temporal UI link, undo; the proposer's page explains why it cannot decide and a
// forged POST is refused; a cross-site form post is refused; sign-out ends the session; axe-core
// finds no accessibility violation at a laptop or a phone width. Screenshots of the inbox and a
// proposal page are written to .data/artifacts/screenshots/.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, issueAccessToken } from '../../domain/identity/accounts.ts';
import { createMapping, createVault } from '../../domain/identity/vaults.ts';
import { addMember, createWorkspace } from '../../domain/identity/workspaces.ts';
import { applyTransaction } from '../../domain/notes/knowledge.ts';
import { findNote } from '../../domain/notes/store.ts';
import { consoleErrors, screenshot, useBrowser } from '../support/browser.ts';
import type { ViewportName } from '../support/browser.ts';
import { devClient } from '../support/dev-client.ts';
import { useTestAppWithWorker } from '../support/harness.ts';

// The callbacks given to page.evaluate run in Chromium. The program is typed without the DOM library
// (adding it would retype Node's fetch for everything), so this file declares the little it touches.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: any;
declare const document: any;
declare const localStorage: any;
declare const sessionStorage: any;
type HTMLInputElement = { value: string };
/* eslint-enable @typescript-eslint/no-explicit-any */

const TEMPORAL_UI = 'http://127.0.0.1:8233';
const ctx = useTestAppWithWorker({ name: 'reviewer-console', listen: true, overrides: { temporalUiUrl: TEMPORAL_UI } });
const chromium = useBrowser();
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

type Person = { id: string; token: string };
let proposer: Person;
let reviewer: Person;
let secondReviewer: Person;
let teamWs: { id: string; vaultId: string; mappingId: string };
let labWs: { id: string; vaultId: string; mappingId: string };
const planPath = 'Plans/Week.md';
const planBefore = '# Week\n\nMonday: planning.\nTuesday: writing.\n';
const planAfter = '# Week\n\nMonday: planning.\nTuesday: reviewing drafts.\nWednesday: shipping.\n';
let planProposalId: string;

async function person(displayName: string): Promise<Person> {
  const account = await createAccount(ctx.db.pool, { email: `${randomUUID()}@example.test`, displayName, plan: 'developer_agent' });
  return { id: account.id, token: (await issueAccessToken(ctx.db.pool, { accountId: account.id, name: 'console' })).token };
}

async function workspace(name: string) {
  const ws = await createWorkspace(ctx.db.pool, { name, ownerAccountId: proposer.id });
  for (const member of [reviewer, secondReviewer]) await addMember(ctx.db.pool, { workspaceId: ws.id, accountId: member.id, role: 'reviewer' });
  const vault = await createVault(ctx.db.pool, { name: `${name} vault`, ownerWorkspaceId: ws.id });
  const { mappingId } = await createMapping(ctx.db.pool, { vaultId: vault.id });
  return { id: ws.id, vaultId: vault.id, mappingId };
}

async function propose(ws: { id: string; mappingId: string }, summary: string, action: Record<string, unknown>, bridge = 'generic-webhook'): Promise<string> {
  const res = await devClient(ctx.app, proposer.token).request('POST', '/api/dev/automation/proposals', {
    body: { workspaceId: ws.id, bridge, summary, action: { mappingId: ws.mappingId, ...action } },
    headers: { 'idempotency-key': randomUUID() },
  });
  expect(res.statusCode, res.body).toBe(201);
  await stateOf(res.data['id'] as string, ['pending_review']);
  return res.data['id'] as string;
}

/** Waits (via the API, as the proposer) until the proposal is in one of `states`. */
async function stateOf(id: string, states: string[], timeoutMs = 20_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await devClient(ctx.app, proposer.token).request('GET', `/api/dev/automation/proposals/${id}`);
    const state = res.data['state'] as string;
    if (states.includes(state) || Date.now() > until) return state;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function signIn(page: Page, token: string, path = '/console'): Promise<void> {
  await page.goto(`${ctx.url}${path}`);
  await page.waitForURL(/\/console\/sign-in\?next=/);
  await page.getByLabel('Personal access token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === path).catch(async (error: unknown) => {
    throw new Error(`${String(error)}\n${page.url()}\n${(await page.content()).slice(0, 3000)}`);
  });
}

/** axe-core's violations on the page as it is (WCAG 2.1 A/AA and best practices). Evaluated over CDP, so the page's CSP does not stand in the way. */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: unknown, options: object) => Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
  });
  return violations;
}

const noHorizontalScroll = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

beforeAll(async () => {
  proposer = await person('Priya Proposer');
  reviewer = await person('Rui Reviewer');
  secondReviewer = await person('Sam Second');
  teamWs = await workspace('Team notes');
  labWs = await workspace('Research lab');
  await applyTransaction(
    ctx.db.pool,
    { vaultId: teamWs.vaultId, mappingId: teamWs.mappingId },
    [{ type: 'write-note', path: planPath, content: planBefore }],
    { actor: { type: 'account', id: proposer.id }, source: 'ops', requestId: null, idempotencyKey: 'seed' },
    { accountId: proposer.id, route: 'test:seed', scope: teamWs.mappingId, key: 'seed', fingerprint: 'seed' },
  );
  const current = await findNote(ctx.db.pool, teamWs.vaultId, planPath);
  planProposalId = await propose(teamWs, 'Replan the week', { kind: 'note.write', path: planPath, content: planAfter, expectedHash: current!.revision });
  await propose(labWs, 'File the lab results', { kind: 'note.write', path: 'Results/Run 12.md', content: '# Run 12\n\nAll green.\n' }, 'zapier');
});

describe('signing in and the inbox', () => {
  test('a token is exchanged for an HttpOnly session cookie; the token stays out of the browser', async () => {
    const page = await chromium.newPage();
    const errors = consoleErrors(page);
    await signIn(page, reviewer.token);
    const cookies = await page.context().cookies();
    expect(cookies.map((c) => ({ name: c.name, httpOnly: c.httpOnly, sameSite: c.sameSite, path: c.path }))).toEqual([
      { name: 'hnp_console_session', httpOnly: true, sameSite: 'Strict', path: '/console' },
    ]);
    expect(cookies[0]!.value).toMatch(/^hnp_ses_/);
    const storage = await page.evaluate(() => ({ cookie: document.cookie, local: JSON.stringify(localStorage), session: JSON.stringify(sessionStorage) }));
    expect(storage).toEqual({ cookie: '', local: '{}', session: '{}' });
    expect(await page.content()).not.toContain(reviewer.token);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Proposals');
    expect(errors).toEqual([]);
  });

  for (const viewport of ['laptop', 'phone'] as const satisfies readonly ViewportName[]) {
    test(`lists the proposals waiting across the reviewer's workspaces, and filters them (${viewport})`, async () => {
      const page = await chromium.newPage({ viewport });
      const errors = consoleErrors(page);
      await signIn(page, reviewer.token);
      const list = page.locator('#inbox-list');
      await expect.poll(() => list.getByRole('link').allInnerTexts()).toEqual(expect.arrayContaining(['Replan the week', 'File the lab results']));
      expect(await list.getByText('Research lab').count()).toBeGreaterThan(0);
      await screenshot(page, `console-inbox-${viewport}`, { fullPage: true });
      expect(await noHorizontalScroll(page)).toBe(true);

      await page.getByLabel('Workspace').selectOption({ label: 'Research lab' });
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.waitForURL(new RegExp(`workspaceId=${labWs.id}`));
      expect(await list.getByRole('heading', { level: 3 }).allInnerTexts()).toEqual(['File the lab results']);

      await page.getByLabel('Workspace').selectOption({ label: 'All my workspaces (2)' });
      await page.getByLabel('Bridge').selectOption('generic-webhook');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.waitForURL(/bridge=generic-webhook/);
      expect(await list.getByRole('heading', { level: 3 }).allInnerTexts()).toEqual(['Replan the week']);

      await page.getByLabel('Bridge').selectOption('');
      await page.getByLabel('State').selectOption('executed');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.waitForURL(/state=executed/);
      await list.getByText('No proposals match these filters.').waitFor();
      expect(errors).toEqual([]);
    });
  }

  test('shows a proposal that arrives while the inbox is open, without a reload', async () => {
    const page = await chromium.newPage();
    await signIn(page, reviewer.token);
    // A reload would lose this marker.
    await page.evaluate(() => ((window as unknown as { marker: string }).marker = 'still here'));
    await propose(labWs, 'A late arrival', { kind: 'note.write', path: 'Inbox/Late.md', content: '# Late\n' });
    // The list refreshes every 10 s while the tab is visible.
    await page.locator('#inbox-list').getByRole('link', { name: 'A late arrival' }).waitFor({ timeout: 25_000 });
    expect(await page.evaluate(() => (window as unknown as { marker?: string }).marker)).toBe('still here');
    expect(await page.locator('#live-status').innerText()).toMatch(/^Updated at /);
  });
});

describe('a proposal, its decision, receipt and undo', () => {
  for (const viewport of ['laptop', 'phone'] as const satisfies readonly ViewportName[]) {
    test(`shows who proposed what, and the diff against the current revision of the note (${viewport})`, async () => {
      const page = await chromium.newPage({ viewport });
      const errors = consoleErrors(page);
      await signIn(page, reviewer.token);
      await page.getByRole('link', { name: 'Replan the week' }).click();
      await page.getByRole('heading', { level: 1, name: 'Replan the week' }).waitFor();
      const about = page.locator('section', { has: page.getByRole('heading', { name: 'About this proposal' }) });
      expect(await about.innerText()).toContain('Priya Proposer');
      const current = await findNote(ctx.db.pool, teamWs.vaultId, planPath);
      const change = page.locator('article.change');
      expect(await change.locator('code.rev').first().innerText()).toBe(current!.revision);
      expect(await change.locator('del').allInnerTexts()).toEqual(['-Tuesday: writing.']);
      expect(await change.locator('ins').allInnerTexts()).toEqual(['+Tuesday: reviewing drafts.', '+Wednesday: shipping.']);
      expect(await page.getByText('Forge can apply this to the notes as they are now.').count()).toBe(1);
      await screenshot(page, `console-proposal-${viewport}`, { fullPage: true });
      expect(await noHorizontalScroll(page)).toBe(true);
      expect(errors).toEqual([]);
    });
  }

  test('a second reviewer approves with a reason, follows it to the receipt without a reload, then undoes it', async () => {
    const page = await chromium.newPage();
    const errors = consoleErrors(page);
    await signIn(page, secondReviewer.token, `/console/proposals/${planProposalId}`);
    const before = await findNote(ctx.db.pool, teamWs.vaultId, planPath);
    await page.getByLabel(/^Reason/).fill('Matches what we agreed on Monday.');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Approved. Forge applies it now').waitFor();

    // The page follows the proposal while the worker moves it.
    const proposal = page.locator('#proposal');
    await proposal.locator('.badge.state-executed').waitFor({ timeout: 30_000 });
    const after = await findNote(ctx.db.pool, teamWs.vaultId, planPath);
    expect(after!.content).toBe(planAfter);
    const receipt = proposal.locator('article.execution', { hasText: 'Applied by Forge' });
    const row = receipt.locator('tbody tr');
    expect(await row.locator('th').innerText()).toBe(planPath);
    const cells = await row.locator('td').allInnerTexts();
    expect(cells.slice(0, 3)).toEqual(['replace', before!.revision, after!.revision]);
    expect(cells[3]).toMatch(/^\d+$/);
    expect(await proposal.getByText('Matches what we agreed on Monday.').count()).toBe(1);
    expect(await proposal.getByText('Sam Second').count()).toBeGreaterThan(0);
    const link = proposal.getByRole('link', { name: new RegExp(`proposal-review-${planProposalId}`) });
    expect(await link.getAttribute('href')).toBe(`${TEMPORAL_UI}/namespaces/default/workflows/proposal-review-${planProposalId}`);
    await screenshot(page, 'console-receipt-laptop', { fullPage: true });

    await page.getByRole('button', { name: 'Undo this change' }).click();
    await page.getByText('Undo requested.').waitFor();
    await proposal.locator('.badge.state-undone').waitFor({ timeout: 30_000 });
    expect((await findNote(ctx.db.pool, teamWs.vaultId, planPath))!.content).toBe(planBefore);
    expect(await proposal.locator('article.execution', { hasText: 'Undone by Forge' }).locator('tbody tr td').first().innerText()).toBe('replace');
    expect(await proposal.getByRole('link', { name: new RegExp(`forge-undo-${planProposalId}-1`) }).count()).toBe(1);
    expect(await stateOf(planProposalId, ['undone'])).toBe('undone');
    expect(errors).toEqual([]);
  });
});

describe("who may not decide, and requests that are not the console's own", () => {
  let pendingId: string;
  beforeAll(async () => {
    pendingId = await propose(teamWs, 'Rename the roadmap', { kind: 'note.write', path: 'Projects/Roadmap.md', content: '# Roadmap\n' });
  });

  test('the proposer sees why they cannot decide instead of buttons, and a forged POST is refused', async () => {
    const page = await chromium.newPage();
    const errors = consoleErrors(page);
    await signIn(page, proposer.token, `/console/proposals/${pendingId}`);
    await page.getByRole('heading', { name: 'You cannot decide this proposal' }).waitFor();
    expect(await page.getByText('The proposer, or anyone acting for or on behalf of them, cannot decide on this proposal.').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Reject' }).count()).toBe(0);
    expect(errors).toEqual([]);

    // With the session's own CSRF token, from the console's own page: the domain rule still refuses.
    const forged = await page.evaluate(async (id) => {
      const csrf = (document.querySelector('input[name=csrf]') as HTMLInputElement).value;
      const res = await fetch(`/console/proposals/${id}/decision`, {
        method: 'POST',
        headers: { accept: 'application/json' },
        body: new URLSearchParams({ csrf, decision: 'approve' }),
      });
      return { status: res.status, body: (await res.json()) as { code: string } };
    }, pendingId);
    expect(forged).toMatchObject({ status: 403, body: { code: 'self_approval_forbidden' } });
    expect(await stateOf(pendingId, ['pending_review'], 0)).toBe('pending_review');
  });

  test('a POST from the console without the session CSRF token is refused', async () => {
    const page = await chromium.newPage();
    await signIn(page, reviewer.token, `/console/proposals/${pendingId}`);
    const status = await page.evaluate(async (id) => {
      const res = await fetch(`/console/proposals/${id}/decision`, { method: 'POST', headers: { accept: 'application/json' }, body: new URLSearchParams({ decision: 'approve' }) });
      return { status: res.status, code: ((await res.json()) as { code: string }).code };
    }, pendingId);
    expect(status).toEqual({ status: 403, code: 'csrf_check_failed' });
    expect(await stateOf(pendingId, ['pending_review'], 0)).toBe('pending_review');
  });

  describe('another site', () => {
    let attacker: Server;
    let attackerUrl: string;
    beforeAll(async () => {
      // Another origin (localhost is another site than 127.0.0.1) whose page posts a decision form to the console.
      attacker = createServer((request, response) => {
        const target = `${ctx.url}/console/proposals/${pendingId}/decision`;
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end(`<!doctype html><form id="f" method="post" action="${target}"><input name="decision" value="approve"></form><script>document.getElementById('f').submit()</script>`);
      });
      await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
      const address = attacker.address();
      attackerUrl = `http://localhost:${typeof address === 'object' && address ? address.port : 0}/`;
    });
    afterAll(async () => {
      await new Promise((resolve) => attacker.close(resolve));
    });

    test('cannot make a signed-in reviewer decide with a cross-site form post', async () => {
      const page = await chromium.newPage();
      await signIn(page, reviewer.token);
      const refused = page.waitForResponse((response) => response.url().endsWith(`/console/proposals/${pendingId}/decision`));
      await page.goto(attackerUrl);
      const response = await refused;
      expect(response.status()).toBe(403);
      await page.getByText('csrf_check_failed').waitFor();
      expect(await stateOf(pendingId, ['pending_review'], 0)).toBe('pending_review');
    });
  });
});

describe('signing out', () => {
  test('ends the session: the console asks to sign in again, even with the old cookie', async () => {
    const page = await chromium.newPage();
    await signIn(page, reviewer.token);
    const [cookie] = await page.context().cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    expect(await page.context().cookies()).toEqual([]);
    await page.goto(`${ctx.url}/console`);
    await page.waitForURL(/\/console\/sign-in\?next=/);

    const replay = await chromium.newPage();
    await replay.context().addCookies([{ ...cookie!, sameSite: 'Strict' }]);
    await replay.goto(`${ctx.url}/console`);
    await replay.waitForURL(/\/console\/sign-in\?next=/);
  });
});

describe('accessibility', () => {
  for (const viewport of ['laptop', 'phone'] as const satisfies readonly ViewportName[]) {
    test(`axe-core finds no violations on the sign-in page, the inbox and a proposal page (${viewport})`, async () => {
      const page = await chromium.newPage({ viewport });
      await page.goto(`${ctx.url}/console/sign-in`);
      expect(await axeViolations(page), 'sign-in').toEqual([]);
      await signIn(page, reviewer.token);
      expect(await axeViolations(page), 'inbox').toEqual([]);
      await page.goto(`${ctx.url}/console/proposals/${planProposalId}`);
      expect(await axeViolations(page), 'an undone proposal').toEqual([]);
      await page.goto(`${ctx.url}/console?state=any`);
      await page.getByRole('link', { name: 'Rename the roadmap' }).click();
      await page.getByRole('heading', { name: 'Your decision' }).waitFor();
      expect(await axeViolations(page), 'a pending proposal').toEqual([]);
    });
  }

  test('works from the keyboard: skip link first, then the decision by Tab and Enter', async () => {
    const page = await chromium.newPage();
    await page.goto(`${ctx.url}/console/sign-in`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('token');
    await page.keyboard.type(reviewer.token);
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/console');

    const id = await propose(labWs, 'Decided from the keyboard', { kind: 'note.write', path: 'Inbox/Keyboard.md', content: '# Keys\n' });
    await page.goto(`${ctx.url}/console/proposals/${id}`);
    // Tab until the reason field has focus, type, then Tab to Reject and press Enter.
    for (let i = 0; i < 40 && (await page.evaluate(() => document.activeElement?.id)) !== 'reason'; i++) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('reason');
    await page.keyboard.type('Not this week.');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Approve');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Reject');
    await page.keyboard.press('Enter');
    await page.getByText('Rejected. It will never be executed.').waitFor();
    expect(await stateOf(id, ['rejected'])).toBe('rejected');
  });
});
