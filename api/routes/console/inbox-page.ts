// The inbox page: filters (workspace, state, bridge) and the order, then a dense table of proposals
// (a card per proposal on a phone): what it is, who proposed it, what it touches, how big it is, how
// long it has waited and when it expires, and what this reviewer may do with it; paging. The list is
// also served alone (`?fragment=list`) for the page's script to refresh it in place
// (assets/console.js), which also moves between rows with the keyboard.
import { proposalStates } from '../../../domain/automation/proposal-states.ts';
import type { ProposalOrder } from '../../../domain/automation/proposals.ts';
import type { Inbox, InboxItem } from '../../../domain/console/inbox.ts';
import { stateBadge, stateLabel, time } from './fragments.ts';
import { html } from './html.ts';
import type { Html } from './html.ts';

/** How often an open inbox asks for changes when it cannot hold the live stream (only while the tab is visible). */
export const inboxRefreshMs = 10_000;

/** The inbox's query string for these filters (and a cursor), as links and the refresher use it. */
export function inboxHref(filters: Inbox['filters'], extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  if (filters.workspaceId) params.set('workspaceId', filters.workspaceId);
  if (filters.state !== 'pending_review') params.set('state', filters.state);
  if (filters.bridge) params.set('bridge', filters.bridge);
  if (filters.sort !== 'newest') params.set('sort', filters.sort);
  for (const [k, v] of Object.entries(extra)) params.set(k, v);
  const query = params.toString();
  return `/console${query ? `?${query}` : ''}`;
}

const orderLabels: Record<ProposalOrder, string> = { newest: 'Newest first', oldest: 'Waiting longest first', expiring: 'Expiring soonest first' };

export function inboxBody(inbox: Inbox, paged: boolean, listEtag: string, now = Date.now()): Html {
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
  <div class="field">
    <label for="f-sort">Order</label>
    <select id="f-sort" name="sort">
      ${(Object.keys(orderLabels) as ProposalOrder[]).map((o) => html`<option value="${o}"${filters.sort === o ? html` selected` : null}>${orderLabels[o]}</option>`)}
    </select>
  </div>
  <button type="submit" class="button secondary">Apply filters</button>
</form>
<section id="inbox-list" aria-labelledby="list-title" data-live-src="${inboxHref(filters, { fragment: 'list' })}" data-live-interval="${paged ? 0 : inboxRefreshMs}" data-live-etag="${listEtag}"${paged ? null : html` data-live-topic="inbox"${filters.workspaceId ? html` data-live-workspace="${filters.workspaceId}"` : null}`}>
${inboxList(inbox, paged, now)}
</section>
<p class="visually-hidden" id="row-status" role="status" aria-live="polite"></p>
<details class="shortcuts"><summary>Keyboard shortcuts</summary>
  <dl class="facts">
    <dt><kbd>j</kbd> / <kbd>k</kbd></dt><dd>Next / previous proposal in the list</dd>
    <dt><kbd>Enter</kbd></dt><dd>Open it (then <kbd>d</kbd> goes to the decision, <kbd>n</kbd> to the next one waiting)</dd>
  </dl>
</details>`;
}

/** The list alone: what the refresher swaps in. On a later page it does not refresh (rows would shift under the reader). */
export function inboxList(inbox: Inbox, paged: boolean, now = Date.now()): Html {
  const count = inbox.proposals.length;
  const { sort } = inbox.filters;
  return html`<h2 id="list-title" class="list-title">${count === 0 ? 'Nothing here' : `${count}${inbox.nextCursor ? '+' : ''} proposal${count === 1 ? '' : 's'}`}
  <span class="subtle">${inbox.filters.state === 'any' ? 'in any state' : stateLabel(inbox.filters.state).toLowerCase()}, ${orderLabels[sort].toLowerCase()}</span></h2>
${
  count === 0
    ? html`<p class="empty">${inbox.workspaces.length === 0 ? 'You are not a member of any workspace whose proposals you may see (automation.view).' : 'No proposals match these filters.'}</p>`
    : html`<div class="table-wrap inbox-wrap">
<table class="inbox" aria-labelledby="list-title">
  <thead><tr>
    <th scope="col">Proposal</th>
    <th scope="col">Proposed by</th>
    <th scope="col">Touches</th>
    <th scope="col">Size</th>
    <th scope="col"${sort === 'newest' ? html` aria-sort="ascending"` : sort === 'oldest' ? html` aria-sort="descending"` : null}><a href="${inboxHref({ ...inbox.filters, sort: sort === 'oldest' ? 'newest' : 'oldest' })}">Waiting<span class="visually-hidden"> (sort ${sort === 'oldest' ? 'newest first' : 'longest waiting first'})</span></a></th>
    <th scope="col"${sort === 'expiring' ? html` aria-sort="ascending"` : null}><a href="${inboxHref({ ...inbox.filters, sort: 'expiring' })}">Expires<span class="visually-hidden"> (sort soonest first)</span></a></th>
    <th scope="col">Workspace · bridge</th>
  </tr></thead>
  <tbody>${inbox.proposals.map((item, i) => row(item, i, count, now))}</tbody>
</table>
</div>`
}
<nav class="pager" aria-label="Pages">
  ${paged ? html`<a href="${inboxHref(inbox.filters)}">First page</a>` : null}
  ${inbox.nextCursor ? html`<a href="${inboxHref(inbox.filters, { cursor: inbox.nextCursor })}" rel="next">Next page</a>` : null}
</nav>`;
}

/** A duration as people say it: "4 min", "3 h", "2 d". */
export function spoken(ms: number): string {
  const minutes = Math.floor(Math.abs(ms) / 60_000);
  if (minutes < 1) return 'under a minute';
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.floor(hours / 24)} d`;
}

const bytes = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);

function row(item: InboxItem, index: number, count: number, now: number): Html {
  const title = item.summary || `${item.actionKind} from ${item.bridge}`;
  const waited = spoken(now - Date.parse(item.createdAt));
  const expiresIn = Date.parse(item.expiresAt) - now;
  const open = item.state === 'pending_review' || item.state === 'proposed';
  const target = item.actionKind === 'memory.promote' ? 'shared memory' : item.scope.firstTarget;
  // What a screen reader hears when the keyboard lands on the row (assets/console.js announces it).
  const spokenRow = `Proposal ${index + 1} of ${count}: ${title}; ${stateLabel(item.state)}; by ${item.proposerName ?? 'a product'}; waiting ${waited}`;
  return html`<tr class="proposal-row${item.standing.canDecide ? '' : ' view-only'}">
  <td data-label="Proposal"><a class="row-link" href="/console/proposals/${item.id}" data-announce="${spokenRow}">${title}</a>
    <span class="row-meta">${stateBadge(item.state)} <code>${item.actionKind}</code></span>
    ${item.standing.canDecide ? null : html`<span class="why-not">${item.standing.refusal?.code === 'self_approval_forbidden' ? 'Yours to wait on: ' : 'View only: '}${item.standing.refusal?.message ?? ''}</span>`}</td>
  <td data-label="Proposed by">${item.proposerName ?? (item.proposerPrincipalId ? 'a Product Runtime installation' : 'a former member')}</td>
  <td data-label="Touches">${target ? html`<code>${target}</code>` : '—'}${item.scope.moreTargets ? html` <span class="more">and ${item.scope.moreTargets} more</span>` : null}</td>
  <td data-label="Size">${item.scope.notes ? `${item.scope.notes} note${item.scope.notes === 1 ? '' : 's'}, ` : ''}${bytes(item.scope.bytes)}</td>
  <td data-label="Waiting"><span title="Proposed ${item.createdAt}">${waited}</span></td>
  <td data-label="Expires">${open ? (expiresIn > 0 ? html`in ${spoken(expiresIn)} ${time(item.expiresAt)}` : 'now') : html`<span class="subtle">${stateLabel(item.state).toLowerCase()}</span>`}</td>
  <td data-label="Workspace · bridge">${item.workspaceName} · ${item.bridge}</td>
</tr>`;
}
