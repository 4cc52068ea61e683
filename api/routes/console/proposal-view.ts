// The proposal page: who proposed what for whom, the preview's diff against the current notes, the
// decision form (or why this reviewer cannot decide), receipts, undo, the workflows in the Temporal
// UI, and the history. While a worker is moving the proposal (approved → executing → executed, an
// undo) the page's script refreshes this part in place (`?fragment=proposal`).
import type { ProposalPage } from '../../../domain/console/proposal-page.ts';
import { movingStates } from '../../../domain/console/proposal-page.ts';
import type { ProposalPreview } from '../../../domain/automation/preview.ts';
import { errorCatalog, isErrorCode } from '../../../domain/errors.ts';
import { person, stateBadge, stateLabel, time } from './fragments.ts';
import { html } from './html.ts';
import type { Html } from './html.ts';

/** How often a page follows a proposal a worker is moving. */
export const movingRefreshMs = 2_000;

export const refreshIntervalOf = (view: ProposalPage) => (movingStates.includes(view.proposal.state) ? movingRefreshMs : 0);

export type ProposalViewContext = { csrfToken: string; temporalUi: { baseUrl: string; namespace: string } | null; done?: string | undefined };

const doneNotices: Record<string, string> = {
  approve: 'Approved. Forge applies it now; this page follows it to its receipt.',
  reject: 'Rejected. It will never be executed.',
  undo: 'Undo requested. Forge restores the notes now; this page follows it.',
};

export function proposalBody(view: ProposalPage, context: ProposalViewContext, fragmentEtag: string): Html {
  const notice = context.done ? doneNotices[context.done] : undefined;
  return html`<p class="crumbs"><a href="/console">← Inbox</a></p>
${notice ? html`<p class="notice" role="status">${notice}</p>` : null}
<div id="proposal" data-live-src="/console/proposals/${view.proposal.id}?fragment=proposal" data-live-interval="${refreshIntervalOf(view)}" data-live-etag="${fragmentEtag}">
${proposalFragment(view, context)}
</div>`;
}

export function proposalFragment(view: ProposalPage, context: ProposalViewContext): Html {
  const p = view.proposal;
  return html`<h1>${p.summary || `${p.actionKind} from ${p.bridge}`}</h1>
<p class="meta">${stateBadge(p.state)} ${movingStates.includes(p.state) ? html`<span class="subtle">updating…</span>` : null}</p>
<section class="card" aria-labelledby="about-title">
  <h2 id="about-title">About this proposal</h2>
  <dl class="facts">
    <dt>Workspace</dt><dd>${view.workspaceName}</dd>
    <dt>Bridge</dt><dd>${p.bridge}</dd>
    <dt>Action</dt><dd><code>${p.actionKind}</code></dd>
    <dt>Proposed by</dt><dd>${p.proposerAccountId ? person(view.people, p.proposerAccountId) : html`a Product Runtime installation (service principal <code>${p.proposerPrincipalId ?? ''}</code>)`}</dd>
    <dt>On behalf of</dt><dd>${person(view.people, p.actingForAccountId, 'nobody else')}</dd>
    <dt>Proposed</dt><dd>${time(p.createdAt)}</dd>
    <dt>${p.state === 'pending_review' || p.state === 'proposed' ? 'Expires' : 'Would have expired'}</dt><dd>${time(p.expiresAt)}</dd>
    ${p.reviewerAccountId ? html`<dt>Decided by</dt><dd>${person(view.people, p.reviewerAccountId)}</dd>` : null}
    ${p.decisionReason ? html`<dt>Reason</dt><dd class="reason">${p.decisionReason}</dd>` : null}
    <dt>Proposal id</dt><dd><code>${p.id}</code></dd>
  </dl>
</section>
${decisionPanel(view, context)}
${previewSection(view)}
${receiptsSection(view, context)}
${workflowsSection(view, context)}
${historySection(view)}`;
}

function decisionPanel(view: ProposalPage, context: ProposalViewContext): Html | null {
  const p = view.proposal;
  if (p.state !== 'pending_review') return null;
  if (!view.standing.canDecide) {
    return html`<section class="card why-not-card" aria-labelledby="decide-title">
  <h2 id="decide-title">You cannot decide this proposal</h2>
  <p>${view.standing.refusal?.message ?? ''}</p>
  <p class="help">${view.standing.refusal?.code === 'self_approval_forbidden' ? 'Another reviewer of the workspace with the automation.review permission decides it.' : 'Ask a workspace owner for a role with automation.review.'}</p>
</section>`;
  }
  return html`<section class="card" aria-labelledby="decide-title">
  <h2 id="decide-title">Your decision</h2>
  <form method="post" action="/console/proposals/${p.id}/decision" class="stack">
    <input type="hidden" name="csrf" value="${context.csrfToken}">
    <label for="reason">Reason <span class="subtle">(optional, kept in the history; at most 2,000 characters)</span></label>
    <textarea id="reason" name="reason" rows="3" maxlength="2000"></textarea>
    <div class="actions">
      <button type="submit" name="decision" value="approve" class="button primary">Approve</button>
      <button type="submit" name="decision" value="reject" class="button danger">Reject</button>
    </div>
    <p class="help">Approving starts Forge at once. Expires ${time(p.expiresAt)} if nobody decides.</p>
  </form>
</section>`;
}

function previewSection(view: ProposalPage): Html {
  const p = view.proposal;
  const action = p.action as Record<string, unknown>;
  if (p.actionKind === 'memory.promote') {
    return html`<section class="card" aria-labelledby="change-title">
  <h2 id="change-title">Shared memory to promote</h2>
  <blockquote class="memory">${String(action['content'] ?? '')}</blockquote>
  <p><strong>Rationale:</strong> ${String(action['rationale'] ?? '')}</p>
</section>`;
  }
  if (!view.preview) {
    return html`<section class="card" aria-labelledby="change-title">
  <h2 id="change-title">Changes</h2>
  <p>${view.previewWithheld === 'needs_vault_read' ? 'Your role cannot read this vault (vault.read), so the diff against its notes is not shown.' : `The proposal is ${stateLabel(p.state).toLowerCase()}: the receipt below says what Forge changed.`}</p>
</section>`;
  }
  return html`<section class="card" aria-labelledby="change-title">
  <h2 id="change-title">What approving would change</h2>
  <p class="help">Computed ${time(view.preview.computedAt)} against the current revision of every target note (the automation API's preview).</p>
  ${verdict(view.preview)}
  ${view.preview.transaction?.results.map(
    (r) => html`<article class="change" aria-labelledby="c-${r.index}">
    <h3 id="c-${r.index}"><code>${r.path}</code> <span class="badge op-${r.operation}">${r.operation}</span></h3>
    <dl class="facts inline">
      <dt>Current revision</dt><dd><code class="rev">${r.beforeRevision ?? 'none (new note)'}</code></dd>
      <dt>After</dt><dd><code class="rev">${r.afterRevision}</code></dd>
    </dl>
    ${diff(r.diff, r.path)}
    ${r.diffTruncated ? html`<p class="help">The diff is truncated; the whole content is in the proposal's action.</p>` : null}
  </article>`,
  )}
</section>`;
}

function verdict(preview: ProposalPreview): Html {
  if (preview.verdict === 'applies') return html`<p class="ok-line">Forge can apply this to the notes as they are now.</p>`;
  const problem = preview.problem;
  const title = problem && isErrorCode(problem.code) ? errorCatalog[problem.code].title : 'It cannot apply as it stands.';
  return html`<div class="alert" role="note"><p><strong>Approving this would fail:</strong> ${title}</p>
  ${problem ? html`<p>${problem.detail} <span class="code">(<code>${problem.code}</code>)</span></p>` : null}
  ${problem?.errors.length ? html`<ul>${problem.errors.map((e) => html`<li><code>${e.pointer}</code>: ${e.message}</li>`)}</ul>` : null}
</div>`;
}

/** A unified diff, line by line: removed lines as <del>, added as <ins>, so the meaning is not in colour alone. */
function diff(text: string, path: string): Html {
  if (!text) return html`<p class="help">No change: the content is identical.</p>`;
  // The diff library's '=====' rule says nothing a reader needs. Each line is a block of its own, so no newline text between them.
  const lines = text.replace(/\n$/, '').split('\n').filter((line) => !/^=+$/.test(line));
  return html`<pre class="diff" aria-label="Diff of ${path}" tabindex="0"><code>${lines.map((line) => {
    if (line.startsWith('+++') || line.startsWith('---')) return html`<span class="d-file">${line}</span>`;
    if (line.startsWith('@@')) return html`<span class="d-hunk">${line}</span>`;
    if (line.startsWith('+')) return html`<ins>${line}</ins>`;
    if (line.startsWith('-')) return html`<del>${line}</del>`;
    return html`<span>${line || ' '}</span>`;
  })}</code></pre>`;
}

function receiptsSection(view: ProposalPage, context: ProposalViewContext): Html | null {
  const p = view.proposal;
  if (view.executions.length === 0 && p.state !== 'executed') return null;
  return html`<section class="card" aria-labelledby="receipts-title">
  <h2 id="receipts-title">Receipts</h2>
  ${view.executions.map(
    (e) => html`<article class="execution" aria-label="${e.kind === 'apply' ? 'Apply' : 'Undo'} execution">
    <h3>${e.kind === 'apply' ? 'Applied by Forge' : 'Undone by Forge'} <span class="badge exec-${e.state}">${e.state}</span></h3>
    <p class="help">Started ${time(e.startedAt)}${e.finishedAt ? html`, finished ${time(e.finishedAt)}` : null}; ${e.attempts} attempt${e.attempts === 1 ? '' : 's'}.</p>
    ${e.error ? html`<div class="alert" role="note"><p>${errorText(e.error)}</p></div>` : null}
    ${
      e.receipt
        ? html`${e.receipt.transactionId ? html`<p>Knowledge transaction <code>${e.receipt.transactionId}</code></p>` : null}
    <div class="table-wrap" tabindex="0" role="region" aria-label="${e.kind} changes">
    <table>
      <caption class="visually-hidden">What ${e.kind === 'apply' ? 'the execution' : 'the undo'} changed</caption>
      <thead><tr><th scope="col">Note</th><th scope="col">Operation</th><th scope="col">Before</th><th scope="col">After</th><th scope="col">Event</th></tr></thead>
      <tbody>${e.receipt.changes.map(
        (c) => html`<tr><th scope="row"><code>${c.path}</code></th><td>${c.operation}</td><td><code class="rev">${c.beforeRevision ?? '—'}</code></td><td><code class="rev">${c.afterRevision ?? '—'}</code></td><td><code>${c.eventId ?? '—'}</code></td></tr>`,
      )}</tbody>
    </table>
    </div>`
        : null
    }
  </article>`,
  )}
  ${undoControl(view, context)}
</section>`;
}

function undoControl(view: ProposalPage, context: ProposalViewContext): Html | null {
  const p = view.proposal;
  if (p.state !== 'executed') return null;
  if (!view.canUndo) return html`<p class="why-not">You cannot undo it: ${view.standing.refusal?.message ?? ''}</p>`;
  return html`<form method="post" action="/console/proposals/${p.id}/undo" class="stack">
    <input type="hidden" name="csrf" value="${context.csrfToken}">
    <p class="help">Undo restores every note to the revision before Forge acted, as a new compensating change, if nobody has edited them since.</p>
    <button type="submit" class="button danger">Undo this change</button>
  </form>`;
}

function errorText(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error) return String((error as { message: unknown }).message);
  return JSON.stringify(error);
}

function workflowsSection(view: ProposalPage, context: ProposalViewContext): Html {
  const ui = context.temporalUi;
  return html`<section class="card" aria-labelledby="wf-title">
  <h2 id="wf-title">Workflows</h2>
  <ul class="plain">${view.workflows.map(
    (w) => html`<li>${w.purpose === 'review' ? 'Review and Forge apply' : 'Forge undo'}: ${
      ui
        ? html`<a href="${`${ui.baseUrl}/namespaces/${encodeURIComponent(ui.namespace)}/workflows/${encodeURIComponent(w.workflowId)}`}" target="_blank" rel="noopener noreferrer">${w.workflowId} <span class="visually-hidden">(opens the Temporal UI in a new tab)</span></a>`
        : html`<code>${w.workflowId}</code>`
    }</li>`,
  )}</ul>
  ${ui ? null : html`<p class="help">Set <code>TEMPORAL_UI_URL</code> to link these to the Temporal UI.</p>`}
</section>`;
}

function historySection(view: ProposalPage): Html {
  return html`<section class="card" aria-labelledby="history-title">
  <h2 id="history-title">History</h2>
  <ol class="history">${view.history.map(
    (h) => html`<li><strong>${h.state.replaceAll('_', ' ')}</strong> ${time(h.occurredAt)}${h.actorAccountId ? html` by ${person(view.people, h.actorAccountId)}` : null}
      ${Object.keys(h.detail).length ? html`<span class="detail">${Object.entries(h.detail).map(([k, v]) => html`<span>${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}</span> `)}</span>` : null}</li>`,
  )}</ol>
</section>`;
}
