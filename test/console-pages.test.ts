// The console's rendering, without a server: everything a proposer controls (summary, bridge-free
// text, paths, note content, reasons, history details) reaches the page escaped; markup built by
// the template itself is kept; the sign-in redirect target cannot leave the console.
import { describe, expect, it } from 'vitest';
import { escapeHtml, html, page, raw } from '../api/routes/console/html.ts';
import { safeNext } from '../api/routes/console/index.ts';
import { etagOf } from '../api/routes/console/fragments.ts';
import { inboxList } from '../api/routes/console/inbox-page.ts';
import { proposalFragment, refreshIntervalOf } from '../api/routes/console/proposal-view.ts';
import type { Inbox, InboxItem } from '../domain/console/inbox.ts';
import { changeScope } from '../domain/console/inbox.ts';
import type { ProposalPage } from '../domain/console/proposal-page.ts';
import { diffLineCounts, summarizeChange } from '../domain/console/proposal-page.ts';

const hostile = `<script>alert("x")</script>&'`;
const ids = { proposal: '0b0f4c55-9d5e-4b55-9a53-2f1e1c3a8d11', ws: '5f1d7e0a-3c2b-4a19-8f6e-7d4c3b2a1908', proposer: '9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d' };
const at = '2026-11-23T12:00:00.000Z';

const proposal = {
  id: ids.proposal,
  workspaceId: ids.ws,
  proposerAccountId: ids.proposer,
  proposerPrincipalId: null,
  actingForAccountId: null,
  bridge: 'zapier',
  actionKind: 'note.write',
  action: { kind: 'note.write', mappingId: ids.ws, path: `Inbox/${hostile}.md`, content: hostile },
  summary: hostile,
  state: 'pending_review' as const,
  reviewerAccountId: null,
  decisionReason: hostile,
  expiresAt: at,
  workflowId: `proposal-review-${ids.proposal}`,
  createdAt: at,
  updatedAt: at,
};

function view(overrides: Partial<ProposalPage> = {}): ProposalPage {
  const base: ProposalPage = {
    proposal,
    workspaceName: hostile,
    people: { [ids.proposer]: hostile },
    history: [{ state: 'proposed', occurredAt: at, actorAccountId: ids.proposer, detail: { bridge: hostile } }],
    executions: [],
    preview: {
      proposalId: ids.proposal,
      actionKind: 'note.write',
      computedAt: at,
      verdict: 'applies',
      transaction: {
        applied: false,
        dryRun: true,
        mappingId: ids.ws,
        transactionId: null,
        results: [
          {
            index: 0,
            operation: 'replace',
            mappingId: ids.ws,
            path: `Inbox/${hostile}.md`,
            title: hostile,
            beforeRevision: 'sha256:aa',
            afterRevision: 'sha256:bb',
            size: 10,
            revisionRequired: false,
            diff: `--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old ${hostile}\n+new ${hostile}\n`,
            diffTruncated: false,
          },
        ],
      },
      problem: null,
    },
    previewWithheld: null,
    standing: { canDecide: true, refusal: null },
    canUndo: false,
    workflows: [{ workflowId: proposal.workflowId, purpose: 'review' as const }],
    change: null,
    next: null,
    ...overrides,
  };
  // The totals are the preview's, unless a case states its own.
  return 'change' in overrides ? base : { ...base, change: summarizeChange(base.preview) };
}

const context = { csrfToken: 'hnp_csrf_token', temporalUi: { baseUrl: 'http://ui.example', namespace: 'default' } };

describe('the html template', () => {
  it('escapes the five significant characters in text and attributes', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(html`<p title="${hostile}">${hostile}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>',
    );
  });

  it('keeps nested markup, joins arrays and drops null, undefined and false', () => {
    const items = ['a<', 'b'].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}${raw('<hr>')}`.value).toBe('<ul><li>a&lt;</li><li>b</li></ul>0<hr>');
  });

  it('frames a page with a viewport, the assets and, when signed in, the sign-out form carrying the CSRF token', () => {
    const doc = page({ title: hostile, assets: { css: '/c.css', js: '/c.js' }, reviewer: { displayName: hostile, csrfToken: 'hnp_csrf_abc' }, body: html`<p>hi</p>` });
    expect(doc.startsWith('<!doctype html><html lang="en">')).toBe(true);
    expect(doc).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(doc).toContain('<input type="hidden" name="csrf" value="hnp_csrf_abc">');
    expect(doc).not.toContain('<script>alert');
    expect(page({ title: 't', assets: { css: '/c.css', js: '/c.js' }, body: html`` })).not.toContain('sign-out');
  });
});

describe('the proposal page', () => {
  it('never lets proposer-controlled text become markup: summary, path, diff, names, reason, history', () => {
    const markup = proposalFragment(view({ proposal: { ...proposal, reviewerAccountId: ids.proposer } }), context).value;
    expect(markup).not.toContain('<script>');
    expect(markup.split('&lt;script&gt;').length - 1).toBeGreaterThanOrEqual(7);
  });

  it('renders removed lines as <del> and added lines as <ins>', () => {
    const markup = proposalFragment(view(), context).value;
    expect(markup).toContain('<del>-old &lt;script&gt;');
    expect(markup).toContain('<ins>+new &lt;script&gt;');
  });

  it('offers the decision form only to someone who may decide, and says why to anyone else', () => {
    expect(proposalFragment(view(), context).value).toContain('value="approve"');
    const refused = view({ standing: { canDecide: false, refusal: { code: 'self_approval_forbidden', message: 'The proposer cannot decide.' } } });
    const markup = proposalFragment(refused, context).value;
    expect(markup).not.toContain('value="approve"');
    expect(markup).not.toContain('/decision');
    expect(markup).toContain('You cannot decide this proposal');
    expect(markup).toContain('The proposer cannot decide.');
  });

  it('links workflows into the Temporal UI when configured and shows their ids otherwise', () => {
    expect(proposalFragment(view(), context).value).toContain(`href="http://ui.example/namespaces/default/workflows/proposal-review-${ids.proposal}"`);
    const plain = proposalFragment(view(), { ...context, temporalUi: null }).value;
    expect(plain).not.toContain('http://ui.example');
    expect(plain).toContain(`<code>proposal-review-${ids.proposal}</code>`);
  });

  it('reads as a review: what it is, what it changes, then the decision, then what happened', () => {
    const markup = proposalFragment(view(), context).value;
    const at = (needle: string) => {
      const i = markup.indexOf(needle);
      expect(i, needle).toBeGreaterThan(-1);
      return i;
    };
    const order = [at('id="about-title"'), at('id="change-title"'), at('id="change-totals"'), at('id="decide-title"'), at('id="wf-title"'), at('id="history-title"')];
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('sums a transaction up before its diffs: totals, a jump list, and diffs collapsed past a size', () => {
    const results = Array.from({ length: 100 }, (_, i) => ({
      index: i,
      operation: i % 4 === 0 ? ('replace' as const) : ('create' as const),
      mappingId: ids.ws,
      path: `Plans/Note ${i}.md`,
      title: `Note ${i}`,
      beforeRevision: i % 4 === 0 ? 'sha256:aa' : null,
      afterRevision: 'sha256:bb',
      size: 10,
      revisionRequired: false,
      diff: i % 4 === 0 ? '--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n-a\n+b\n+c\n d\n' : '--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+new\n',
      diffTruncated: false,
    }));
    const preview = { ...view().preview!, actionKind: 'note.transaction', transaction: { ...view().preview!.transaction!, results } };
    const big = view({ preview, change: summarizeChange(preview) });
    expect(big.change).toMatchObject({ notes: 100, created: 75, replaced: 25, unchanged: 0, linesAdded: 75 + 50, linesRemoved: 25 });
    const markup = proposalFragment(big, context).value;
    expect(markup).toContain('<strong>100 notes</strong>: 75 notes created, 25 notes replaced');
    expect(markup).toContain('125 lines added');
    expect(markup.match(/<li><a href="#c-\d+">/g)).toHaveLength(100);
    // More notes than openDiffLimits.notes: every diff starts collapsed, each a <details> of its own.
    expect(markup.match(/<details class="change" id="c-\d+">/g)).toHaveLength(100);
    expect(markup).not.toMatch(/<details class="change" id="c-\d+" open>/);
    // A short change opens its diffs.
    expect(proposalFragment(view(), context).value).toContain('<details class="change" id="c-0" open>');
  });

  it('counts the lines a unified diff adds and removes, not its file headers', () => {
    expect(diffLineCounts('--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-one\n+uno\n two\n+three\n')).toEqual({ linesAdded: 2, linesRemoved: 1 });
    expect(diffLineCounts('')).toEqual({ linesAdded: 0, linesRemoved: 0 });
    // Inside a hunk a removed "-- note" reads "--- note": a line, not a header.
    expect(diffLineCounts('--- a/x\n+++ b/x\n@@ -1 +1 @@\n--- note\n+++ note\n')).toEqual({ linesAdded: 1, linesRemoved: 1 });
  });

  it('says what the reviewer did of the state the proposal is in now', () => {
    const notice = (state: ProposalPage['proposal']['state'], done: 'approve' | 'reject' | 'undo') =>
      /<p class="notice" role="status">([^<]*)<\/p>/.exec(proposalFragment(view({ proposal: { ...proposal, state } }), { ...context, done }).value)?.[1];
    expect(notice('executing', 'approve')).toMatch(/Forge is applying it now/);
    expect(notice('executed', 'approve')).toBe('Approved, and Forge applied it: the receipt is below.');
    expect(notice('failed', 'approve')).toMatch(/could not apply it/);
    expect(notice('rejected', 'reject')).toBe('Rejected. It will never be executed.');
    expect(notice('undone', 'undo')).toMatch(/^Undone/);
  });

  it('speaks of a receipt only where there is one', () => {
    const decided = (state: ProposalPage['proposal']['state']) => proposalFragment(view({ proposal: { ...proposal, state }, preview: null, change: null, previewWithheld: 'decided' }), context).value;
    expect(decided('rejected')).toContain('It was rejected, so nothing was changed.');
    expect(decided('rejected')).not.toContain('receipt');
    expect(decided('expired')).not.toContain('receipt');
    expect(decided('executed')).toContain('the receipt below');
  });

  it('keeps a refused decision\'s reason in the form, escaped, with the refusal in words', () => {
    const markup = proposalFragment(view(), { ...context, refused: { message: 'Your reason has 2,001 characters.', code: 'invalid_request', reason: `${hostile}\nsecond line` } }).value;
    expect(markup).toContain('<div class="alert" role="alert" id="decision-problem"><p>Your reason has 2,001 characters.</p><p class="code">Code: <code>invalid_request</code></p></div>');
    expect(markup).toContain(`>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;\nsecond line</textarea>`);
  });

  it('links the next proposal waiting for this reviewer, or says none is left', () => {
    expect(proposalFragment(view(), context).value).toContain('No other proposal is waiting for you.');
    const next = proposalFragment(view({ next: { id: ids.ws, summary: hostile, actionKind: 'note.write', bridge: 'zapier' } }), context).value;
    expect(next).toContain(`href="/console/proposals/${ids.ws}" data-key="n" rel="next">Next waiting: &lt;script&gt;`);
  });

  it('its ETag ignores when the preview was computed (every rendering) and follows everything else', () => {
    const once = view();
    const later = view({ preview: { ...once.preview!, computedAt: '2026-11-23T12:07:31.123Z' } });
    expect(proposalFragment(later, context).value).not.toBe(proposalFragment(once, context).value);
    expect(etagOf(proposalFragment(later, context))).toBe(etagOf(proposalFragment(once, context)));
    expect(etagOf(proposalFragment(view({ proposal: { ...proposal, state: 'approved' } }), context))).not.toBe(etagOf(proposalFragment(once, context)));
    expect(etagOf(proposalFragment(view({ preview: { ...once.preview!, verdict: 'would_fail' } }), context))).not.toBe(etagOf(proposalFragment(once, context)));
  });

  it('follows only proposals a worker is moving', () => {
    expect(refreshIntervalOf(view())).toBe(0);
    for (const state of ['approved', 'executing', 'undoing', 'proposed'] as const) expect(refreshIntervalOf(view({ proposal: { ...proposal, state } }))).toBeGreaterThan(0);
    for (const state of ['executed', 'rejected', 'undone', 'failed', 'expired'] as const) expect(refreshIntervalOf(view({ proposal: { ...proposal, state } }))).toBe(0);
  });
});

describe('the inbox list', () => {
  const now = Date.parse(at);
  const item = (overrides: Partial<InboxItem> = {}): InboxItem => ({
    ...proposal,
    workspaceName: hostile,
    proposerName: hostile,
    scope: changeScope(proposal),
    standing: { canDecide: true, refusal: null },
    ...overrides,
  });
  const inbox = (items: InboxItem[], filters: Partial<Inbox['filters']> = {}): Inbox => ({
    filters: { workspaceId: null, state: 'pending_review', bridge: null, sort: 'newest', ...filters },
    workspaces: [{ id: ids.ws, name: hostile, role: 'reviewer', permissions: ['automation.view'] }],
    bridges: ['zapier'],
    proposals: items,
    nextCursor: 'abc',
  });

  it('escapes what proposers wrote and says why a proposal is view-only', () => {
    const markup = inboxList(inbox([item({ standing: { canDecide: false, refusal: { code: 'permission_denied', message: 'Deciding needs automation.review.' } } })]), false, now).value;
    expect(markup).not.toContain('<script>');
    expect(markup).toContain('View only: Deciding needs automation.review.');
    expect(markup).toContain('href="/console?cursor=abc"');
  });

  it('is a table of who proposed what, what it touches, how big, how long it waited and when it expires', () => {
    const transaction = {
      kind: 'note.transaction',
      mappingId: ids.ws,
      actions: [
        { type: 'write-note', path: 'Plans/A.md', content: 'ab' },
        { type: 'write-note', path: 'Plans/B.md', content: 'ü' },
        { type: 'write-note', path: 'Plans/C.md', content: '' },
      ],
    };
    const rows = [
      item({ createdAt: new Date(now - 3 * 3_600_000).toISOString(), expiresAt: new Date(now + 2 * 86_400_000).toISOString() }),
      item({ id: ids.ws, actionKind: 'note.transaction', action: transaction, scope: changeScope({ action: transaction }), proposerName: 'Ada', summary: 'Three plans' }),
    ];
    const markup = inboxList(inbox(rows), false, now).value;
    for (const column of ['Proposal', 'Proposed by', 'Touches', 'Size', 'Waiting', 'Expires', 'Workspace · bridge']) expect(markup).toContain(`>${column}`);
    expect(markup.match(/<tr class="proposal-row/g)).toHaveLength(2);
    expect(markup).toContain('<code>Plans/A.md</code> <span class="more">and 2 more</span>');
    expect(markup).toContain('3 notes, 4 B');
    expect(markup).toContain('>3 h</span>');
    expect(markup).toContain('in 2 d <time');
    expect(markup).toContain('>Ada</td>');
    expect(markup).toContain('data-announce="Proposal 2 of 2: Three plans; Waiting for review; by Ada; waiting under a minute"');
  });

  it('sorts by the waiting time or the expiry, saying which in aria-sort, keeping the filters', () => {
    const newest = inboxList(inbox([item()], { bridge: 'zapier' }), false, now).value;
    expect(newest).toContain('aria-sort="ascending"><a href="/console?bridge=zapier&amp;sort=oldest">Waiting');
    const expiring = inboxList(inbox([item()], { sort: 'expiring' }), false, now).value;
    expect(expiring).toContain('aria-sort="ascending"><a href="/console?sort=expiring">Expires');
    expect(expiring).toContain('href="/console?sort=expiring&amp;cursor=abc"');
  });
});

describe('where sign-in may send the reviewer', () => {
  it.each([
    [undefined, '/console'],
    ['', '/console'],
    ['/console', '/console'],
    ['/console/proposals/abc?fragment=proposal', '/console/proposals/abc?fragment=proposal'],
    ['/console?state=any', '/console?state=any'],
    ['//evil.example/console', '/console'],
    ['https://evil.example/console', '/console'],
    ['/\\evil.example', '/console'],
    ['/api/dev/workspaces', '/console'],
    ['/consoleX', '/console'],
    ['javascript:alert(1)', '/console'],
  ])('%s → %s', (next, expected) => {
    expect(safeNext(next)).toBe(expected);
  });
});
