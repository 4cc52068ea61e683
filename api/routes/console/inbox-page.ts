// The inbox page: filters (workspace, state, bridge), the list of proposals newest first with what
// this reviewer may do with each, and paging. The list is also served alone (`?fragment=list`) for
// the page's script to refresh it in place (assets/console.js).
import { proposalStates } from '../../../domain/automation/proposal-states.ts';
import type { Inbox, InboxItem } from '../../../domain/console/inbox.ts';
import { stateBadge, stateLabel, time } from './fragments.ts';
import { html } from './html.ts';
import type { Html } from './html.ts';

/** How often an open inbox asks for changes (only while the tab is visible). */
export const inboxRefreshMs = 10_000;

/** The inbox's query string for these filters (and a cursor), as links and the refresher use it. */
export function inboxHref(filters: Inbox['filters'], extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  if (filters.workspaceId) params.set('workspaceId', filters.workspaceId);
  if (filters.state !== 'pending_review') params.set('state', filters.state);
  if (filters.bridge) params.set('bridge', filters.bridge);
  for (const [k, v] of Object.entries(extra)) params.set(k, v);
  const query = params.toString();
  return `/console${query ? `?${query}` : ''}`;
}

export function inboxBody(inbox: Inbox, paged: boolean, listEtag: string): Html {
  const { filters } = inbox;
  return html`<h1>Proposals</h1>
<form method="get" action="/console" class="filters" aria-label="Filter proposals">
  <div class="field">
    <label for="f-workspace">Workspace</label>
    <select id="f-workspace" name="workspaceId">
      <option value="">All my workspaces (${inbox.workspaces.length})</option>
      ${inbox.workspaces.map((w) => html`<option value="${w.id}"${filters.workspaceId === w.id ? html` selected` : null}>${w.name}</option>`)}
    </select>
  </div>
  <div class="field">
    <label for="f-state">State</label>
    <select id="f-state" name="state">
      ${proposalStates.map((s) => html`<option value="${s}"${filters.state === s ? html` selected` : null}>${stateLabel(s)}</option>`)}
      <option value="any"${filters.state === 'any' ? html` selected` : null}>Any state</option>
    </select>
  </div>
  <div class="field">
    <label for="f-bridge">Bridge</label>
    <select id="f-bridge" name="bridge">
      <option value="">Any bridge</option>
      ${inbox.bridges.map((b) => html`<option value="${b}"${filters.bridge === b ? html` selected` : null}>${b}</option>`)}
    </select>
  </div>
  <button type="submit" class="button secondary">Apply filters</button>
</form>
<section id="inbox-list" aria-labelledby="list-title" data-live-src="${inboxHref(filters, { fragment: 'list' })}" data-live-interval="${paged ? 0 : inboxRefreshMs}" data-live-etag="${listEtag}">
${inboxList(inbox, paged)}
</section>`;
}

/** The list alone: what the refresher swaps in. On a later page it does not refresh (rows would shift under the reader). */
export function inboxList(inbox: Inbox, paged: boolean): Html {
  const count = inbox.proposals.length;
  return html`<h2 id="list-title" class="list-title">${count === 0 ? 'Nothing here' : `${count}${inbox.nextCursor ? '+' : ''} proposal${count === 1 ? '' : 's'}`}
  <span class="subtle">${inbox.filters.state === 'any' ? 'in any state' : stateLabel(inbox.filters.state).toLowerCase()}, newest first</span></h2>
${
  count === 0
    ? html`<p class="empty">${inbox.workspaces.length === 0 ? 'You are not a member of any workspace whose proposals you may see (automation.view).' : 'No proposals match these filters.'}</p>`
    : html`<ol class="proposals">${inbox.proposals.map(row)}</ol>`
}
<nav class="pager" aria-label="Pages">
  ${paged ? html`<a href="${inboxHref(inbox.filters)}">Newest</a>` : null}
  ${inbox.nextCursor ? html`<a href="${inboxHref(inbox.filters, { cursor: inbox.nextCursor })}" rel="next">Older proposals</a>` : null}
</nav>`;
}

function row(item: InboxItem): Html {
  const action = item.action as { path?: string; actions?: unknown[] };
  const what = item.actionKind === 'note.write' ? action.path : item.actionKind === 'note.transaction' ? `${action.actions?.length ?? 0} notes` : item.actionKind;
  return html`<li class="proposal-row">
  <article aria-labelledby="p-${item.id}">
    <h3 id="p-${item.id}"><a href="/console/proposals/${item.id}">${item.summary || `${item.actionKind} from ${item.bridge}`}</a></h3>
    <p class="meta">${stateBadge(item.state)} <span>${item.actionKind}: <code>${what ?? ''}</code></span></p>
    <dl class="facts inline">
      <dt>Workspace</dt><dd>${item.workspaceName}</dd>
      <dt>Bridge</dt><dd>${item.bridge}</dd>
      <dt>Proposed</dt><dd>${time(item.createdAt)}</dd>
      ${item.state === 'pending_review' ? html`<dt>Expires</dt><dd>${time(item.expiresAt)}</dd>` : null}
    </dl>
    ${item.standing.canDecide ? null : html`<p class="why-not">${item.standing.refusal?.code === 'self_approval_forbidden' ? 'Yours to wait on: ' : 'View only: '}${item.standing.refusal?.message ?? ''}</p>`}
  </article>
</li>`;
}
