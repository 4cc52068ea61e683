// The console's rendering, without a server: everything a proposer controls (summary, bridge-free
// text, paths, note content, reasons, history details) reaches the page escaped; markup built by
// the template itself is kept; the sign-in redirect target cannot leave the console.
import { describe, expect, it } from 'vitest';
import { escapeHtml, html, page, raw } from '../api/routes/console/html.ts';
import { safeNext } from '../api/routes/console/index.ts';
import { inboxList } from '../api/routes/console/inbox-page.ts';
import { proposalFragment, refreshIntervalOf } from '../api/routes/console/proposal-view.ts';
import type { Inbox } from '../domain/console/inbox.ts';
import type { ProposalPage } from '../domain/console/proposal-page.ts';

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
  return {
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
    workflows: [{ workflowId: proposal.workflowId, purpose: 'review' }],
    ...overrides,
  };
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

  it('follows only proposals a worker is moving', () => {
    expect(refreshIntervalOf(view())).toBe(0);
    for (const state of ['approved', 'executing', 'undoing', 'proposed'] as const) expect(refreshIntervalOf(view({ proposal: { ...proposal, state } }))).toBeGreaterThan(0);
    for (const state of ['executed', 'rejected', 'undone', 'failed', 'expired'] as const) expect(refreshIntervalOf(view({ proposal: { ...proposal, state } }))).toBe(0);
  });
});

describe('the inbox list', () => {
  it('escapes what proposers wrote and says why a proposal is view-only', () => {
    const inbox: Inbox = {
      filters: { workspaceId: null, state: 'pending_review', bridge: null },
      workspaces: [{ id: ids.ws, name: hostile, role: 'reviewer', permissions: ['automation.view'] }],
      bridges: ['zapier'],
      proposals: [{ ...proposal, workspaceName: hostile, standing: { canDecide: false, refusal: { code: 'permission_denied', message: 'Deciding needs automation.review.' } } }],
      nextCursor: 'abc',
    };
    const markup = inboxList(inbox, false).value;
    expect(markup).not.toContain('<script>');
    expect(markup).toContain('View only: Deciding needs automation.review.');
    expect(markup).toContain('href="/console?cursor=abc"');
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
