// The proposal page, read top to bottom as a review: what it is, what approving would change (the
// totals, a jump list, then each note's diff, collapsible), then the decision (or why this reviewer
// cannot decide), then what happened: receipts, undo, the workflows in the Temporal UI, the
// history. While a worker is moving the proposal (approved → executing → executed, an undo) the
// page's script refreshes this part in place (`?fragment=proposal`).
import type { ChangeSummary, ProposalPage } from '../../../domain/console/proposal-page.ts';
import { movingStates } from '../../../domain/console/proposal-page.ts';
import type { ProposalPreview } from '../../../domain/automation/preview.ts';
import type { ProposalState } from '../../../domain/automation/proposal-states.ts';
import { errorCatalog, isErrorCode } from '../../../domain/errors.ts';
import type { AppError } from '../../../domain/errors.ts';
import { decisionReasonMaxChars } from '../../../domain/automation/review-rules.ts';
import { person, stateBadge, time } from './fragments.ts';
import { html } from './html.ts';
import type { Html } from './html.ts';

/** How often a page follows a proposal a worker is moving. */
export const movingRefreshMs = 2_000;

export const refreshIntervalOf = (view: ProposalPage) => (movingStates.includes(view.proposal.state) ? movingRefreshMs : 0);

/** What the reviewer just did (`?done=`), and a decision the server refused, with what they typed. */
export type ProposalViewContext = {
  csrfToken: string;
  temporalUi: { baseUrl: string; namespace: string } | null;
  done?: 'approve' | 'reject' | 'undo' | undefined;
  refused?: { message: string; code: string; reason: string } | undefined;
};

/** Diffs open by default: a change of a few notes, each short enough to read at once; the rest are one click away. */
export const openDiffLimits = { notes: 5, lines: 200 };

/** The notice after a reviewer's action, said of the state the proposal is in now (the page follows it). */
function doneNotice(done: ProposalViewContext['done'], state: ProposalState): string | null {
  if (done === 'approve') {
    if (state === 'executed') return 'Approved, and Forge applied it: the receipt is below.';
    if (state === 'failed') return 'Approved, but Forge could not apply it: the execution below says why.';
    if (state === 'undoing' || state === 'undone') return null;
    return 'Approved. Forge is applying it now; this page follows it to its receipt.';
  }
  if (done === 'reject') return 'Rejected. It will never be executed.';
  if (done === 'undo') {
    if (state === 'undone') return 'Undone: Forge restored the notes (the undo receipt is below).';
    if (state === 'executed') return 'The undo could not be applied, so the change stays: the undo execution below says why.';
    return 'Undo requested. Forge is restoring the notes now; this page follows it.';
  }
  return null;
}

const fragmentSrc = (view: ProposalPage, done: ProposalViewContext['done']) => `/console/proposals/${view.proposal.id}?fragment=proposal${done ? `&done=${done}` : ''}`;

export function proposalBody(view: ProposalPage, context: ProposalViewContext, fragmentEtag: string): Html {
  return html`<p class="crumbs"><a href="/console" data-key="u">← Inbox</a></p>
<div id="proposal" data-live-src="${fragmentSrc(view, context.done)}" data-live-interval="${refreshIntervalOf(view)}" data-live-etag="${fragmentEtag}" data-live-topic="proposal" data-live-proposal="${view.proposal.id}">
${proposalFragment(view, context)}
</div>
${shortcutsHelp()}`;
}

export function proposalFragment(view: ProposalPage, context: ProposalViewContext): Html {
  const p = view.proposal;
  const notice = doneNotice(context.done, p.state);
  return html`<h1>${p.summary || `${p.actionKind} from ${p.bridge}`}</h1>
<p class="meta">${stateBadge(p.state)} ${movingStates.includes(p.state) ? html`<span class="subtle">updating…</span>` : null}
  ${view.next ? html`<a class="next-link" href="/console/proposals/${view.next.id}" data-key="n" rel="next">Next waiting: ${view.next.summary || view.next.actionKind} →</a>` : html`<span class="subtle">No other proposal is waiting for you.</span>`}</p>
${notice ? html`<p class="notice" role="status">${notice}</p>` : null}
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
${previewSection(view)}
${decisionPanel(view, context)}
${receiptsSection(view, context)}
${workflowsSection(view, context)}
${historySection(view)}`;
}

/** The page's keys, listed where a reviewer finds them (assets/console.js binds them). */
function shortcutsHelp(): Html {
  return html`<details class="shortcuts"><summary>Keyboard shortcuts</summary>
  <dl class="facts">
    <dt><kbd>d</kbd></dt><dd>Go to the decision (the reason, then Approve and Reject)</dd>
    <dt><kbd>n</kbd></dt><dd>Next proposal waiting for you</dd>
    <dt><kbd>u</kbd></dt><dd>Back to the inbox</dd>
    <dt><kbd>[</kbd> <kbd>]</kbd></dt><dd>Previous / next note of the change</dd>
  </dl>
</details>`;
}

function decisionPanel(view: ProposalPage, context: ProposalViewContext): Html | null {
  const p = view.proposal;
  const refusedAlert = context.refused
    ? html`<div class="alert" role="alert" id="decision-problem"><p>${context.refused.message}</p><p class="code">Code: <code>${context.refused.code}</code></p></div>`
    : null;
  if (p.state !== 'pending_review') {
    // Decided meanwhile: the refusal still says what became of this reviewer's decision.
    return refusedAlert ? html`<section class="card" id="decide" aria-labelledby="decide-title"><h2 id="decide-title">Your decision was not taken</h2>${refusedAlert}</section>` : null;
  }
  if (!view.standing.canDecide) {
    return html`<section class="card why-not-card" aria-labelledby="decide-title">
  <h2 id="decide-title">You cannot decide this proposal</h2>
  ${refusedAlert}
  <p>${view.standing.refusal?.message ?? ''}</p>
  <p class="help">${view.standing.refusal?.code === 'self_approval_forbidden' ? 'Another reviewer of the workspace with the automation.review permission decides it.' : 'Ask a workspace owner for a role with automation.review.'}</p>
</section>`;
  }
  const refused = context.refused;
  return html`<section class="card" id="decide" aria-labelledby="decide-title">
  <h2 id="decide-title">Your decision</h2>
  ${refusedAlert}
  <form method="post" action="/console/proposals/${p.id}/decision" class="stack">
    <input type="hidden" name="csrf" value="${context.csrfToken}">
    <label for="reason">Reason <span class="subtle">(optional, kept in the history; at most ${decisionReasonMaxChars.toLocaleString('en')} characters)</span></label>
    <textarea id="reason" name="reason" rows="3" maxlength="${decisionReasonMaxChars}" data-counter="reason-count"${refused ? html` aria-describedby="decision-problem"` : null}>${refused?.reason ?? ''}</textarea>
    <p class="help" id="reason-count" aria-live="polite"></p>
    <div class="actions">
      <button type="submit" name="decision" value="approve" class="button primary">Approve</button>
      <button type="submit" name="decision" value="reject" class="button danger">Reject</button>
    </div>
    <p class="help">Approving starts Forge at once. Expires ${time(p.expiresAt)} if nobody decides.</p>
  </form>
</section>`;
}

/** What a decided proposal's page says instead of a diff: where to read what happened. */
const decidedTexts: Partial<Record<ProposalState, string>> = {
  rejected: 'It was rejected, so nothing was changed.',
  expired: 'It expired before anyone decided, so nothing was changed.',
  executing: 'Forge is applying it now; its receipt will say what changed.',
  executed: 'Forge applied it: the receipt below says what changed.',
  failed: 'Forge could not apply it: the execution below says why. Nothing was changed.',
  undoing: 'Forge is undoing it now: the receipts below say what changed and what is being restored.',
  undone: 'It was applied and then undone: the receipts below say what changed and what was restored.',
};

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
  <p>${view.previewWithheld === 'needs_vault_read' ? 'Your role cannot read this vault (vault.read), so the diff against its notes is not shown.' : (decidedTexts[p.state] ?? 'It is decided: the history below says what happened.')}</p>
</section>`;
  }
  const change = view.change;
  const results = view.preview.transaction?.results ?? [];
  const openByDefault = results.length <= openDiffLimits.notes;
  return html`<section class="card" id="change" aria-labelledby="change-title">
  <h2 id="change-title">What approving would change</h2>
  <p class="help">Computed ${time(view.preview.computedAt, { volatile: true })} against the current revision of every target note (the automation API's preview).</p>
  ${verdict(view.preview)}
  ${change ? changeTotals(change) : null}
  ${change && change.notes > 1 ? jumpList(change) : null}
  ${results.map((r) => {
    const counts = change?.perNote.find((n) => n.index === r.index);
    const lines = (counts?.linesAdded ?? 0) + (counts?.linesRemoved ?? 0);
    const open = openByDefault && lines <= openDiffLimits.lines;
    return html`<details class="change" id="c-${r.index}"${open ? html` open` : null}>
    <summary><span class="change-title"><code>${r.path}</code> <span class="badge op-${r.operation}">${operationLabel(r.operation)}</span>
      ${counts ? lineCounts(counts) : null}${open ? null : html` <span class="subtle">(${lines > openDiffLimits.lines ? 'large: ' : ''}select to show the diff)</span>`}</span></summary>
    <dl class="facts inline">
      <dt>Current revision</dt><dd><code class="rev">${r.beforeRevision ?? 'none (new note)'}</code></dd>
      <dt>After</dt><dd><code class="rev">${r.afterRevision}</code></dd>
    </dl>
    ${diff(r.diff, r.path)}
    ${r.diffTruncated ? html`<p class="help">The diff is truncated; the whole content is in the proposal's action.</p>` : null}
  </details>`;
  })}
</section>`;
}

const operationLabel = (operation: string) => (operation === 'create' ? 'new note' : operation === 'replace' ? 'replaced' : operation === 'noop' ? 'unchanged' : operation);

function lineCounts(counts: { linesAdded: number; linesRemoved: number }): Html {
  return html`<span class="lines"><span class="added">+${counts.linesAdded}</span> <span class="removed">−${counts.linesRemoved}</span><span class="visually-hidden"> (${counts.linesAdded} lines added, ${counts.linesRemoved} removed)</span></span>`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

/** The totals, first: how much this is before any diff. */
function changeTotals(change: ChangeSummary): Html {
  const parts = [change.created ? `${plural(change.created, 'note')} created` : null, change.replaced ? `${plural(change.replaced, 'note')} replaced` : null, change.unchanged ? `${plural(change.unchanged, 'note')} unchanged` : null].filter(Boolean);
  return html`<p class="totals" id="change-totals"><strong>${plural(change.notes, 'note')}</strong>: ${parts.join(', ') || 'nothing'}; <span class="added">${plural(change.linesAdded, 'line')} added</span>, <span class="removed">${plural(change.linesRemoved, 'line')} removed</span>.</p>`;
}

/** Every note of a transaction, linked to its diff (which the script opens when it is collapsed). */
function jumpList(change: ChangeSummary): Html {
  return html`<nav class="jump" aria-labelledby="jump-title">
  <h3 id="jump-title">Notes in this change</h3>
  <p class="jump-actions" hidden><button type="button" class="button secondary small" data-diffs="open">Expand all</button> <button type="button" class="button secondary small" data-diffs="close">Collapse all</button></p>
  <ol class="jump-list">${change.perNote.map(
    (n) => html`<li><a href="#c-${n.index}"><code>${n.path}</code></a> <span class="subtle">${operationLabel(n.operation)}</span> ${lineCounts(n)}</li>`,
  )}</ol>
</nav>`;
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
    <table class="receipt">
      <caption class="visually-hidden">What ${e.kind === 'apply' ? 'the execution' : 'the undo'} changed</caption>
      <thead><tr><th scope="col">Note</th><th scope="col">Operation</th><th scope="col">Before</th><th scope="col">After</th><th scope="col">Event</th></tr></thead>
      <tbody>${e.receipt.changes.map(
        (c) =>
          html`<tr><th scope="row" data-label="Note"><code>${c.path}</code></th><td data-label="Operation">${c.operation}</td><td data-label="Before"><code class="rev">${c.beforeRevision ?? '—'}</code></td><td data-label="After"><code class="rev">${c.afterRevision ?? '—'}</code></td><td data-label="Event"><code class="rev">${c.eventId ?? '—'}</code></td></tr>`,
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

/** A refused decision in words, for the reviewer who made it (the form keeps their reason). */
export function decisionRefusalText(problem: AppError, decision: 'approve' | 'reject'): string {
  const verb = decision === 'approve' ? 'approve' : 'reject';
  switch (problem.code) {
    case 'proposal_not_pending':
      return `It could not ${verb} this proposal: it was decided or closed in the meantime (${problem.message}). The page below shows it as it is now.`;
    case 'workflow_service_unavailable':
      return `The review service did not answer in time, so nothing was decided. Try again in a few seconds: your reason is kept below.`;
    case 'self_approval_forbidden':
    case 'permission_denied':
      return `You cannot decide this proposal: ${problem.message}`;
    default:
      return problem.message;
  }
}
