// Small pieces every console page uses: times, state badges, people, the sign-in and error pages.
import { createHash } from 'node:crypto';
import type { AppError } from '../../../domain/errors.ts';
import { errorCatalog } from '../../../domain/errors.ts';
import type { ProposalState } from '../../../domain/automation/proposal-states.ts';
import { html } from './html.ts';
import type { Html } from './html.ts';

/** A timestamp as a <time> element: machine-readable, shown in UTC to the minute. */
export function time(iso: string, options: { volatile?: boolean } = {}): Html {
  const shown = `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
  return options.volatile ? html`<time data-volatile datetime="${iso}">${shown}</time>` : html`<time datetime="${iso}">${shown}</time>`;
}

/** A time that changes on every rendering (when a preview was computed): not a change of the page, so left out of its ETag. */
const VOLATILE_TIME = /<time data-volatile [^>]*>[^<]*<\/time>/g;

/** The ETag of a page's live part: what it shows, less its volatile times. */
export const etagOf = (markup: Html) => `"${createHash('sha256').update(markup.value.replace(VOLATILE_TIME, '')).digest('base64url').slice(0, 22)}"`;

const stateLabels: Record<ProposalState, string> = {
  proposed: 'Proposed',
  pending_review: 'Waiting for review',
  approved: 'Approved',
  rejected: 'Rejected',
  expired: 'Expired',
  executing: 'Executing',
  executed: 'Executed',
  failed: 'Failed',
  undoing: 'Undoing',
  undone: 'Undone',
};
export const stateLabel = (state: ProposalState) => stateLabels[state];

/** The state as a badge: the label is text, colour only repeats it. */
export const stateBadge = (state: ProposalState) => html`<span class="badge state-${state}">${stateLabels[state]}</span>`;

/** A person by display name, or their id when they are not a member of the workspace any more. */
export function person(people: Record<string, string>, id: string | null, fallback = 'nobody'): Html | string {
  if (!id) return fallback;
  const name = people[id];
  return name ? html`<span class="person" title="${id}">${name}</span>` : html`<span class="person unknown">account ${id}</span>`;
}

/** Why a token was not taken, in one plain sentence (the catalog's title is the API's wording). */
function signInProblemText(problem: AppError, connecting: boolean): string {
  switch (problem.code) {
    case 'invalid_token':
      return 'That token was not accepted: it is not a token of this platform, or it expired, was rotated or was revoked. Check that you pasted all of it (it starts with hnp_pat_).';
    case 'entitlement_required':
      return connecting
        ? "Your account's plan does not include MCP, so it cannot connect an application."
        : "Your account's plan does not include the reviewer console (the automation gateway needs the Developer or Team plan).";
    case 'account_inactive':
      return 'Your account is suspended, so it cannot sign in.';
    case 'rate_limited':
      return `Too many requests for your account just now: ${problem.message}`;
    default:
      return problem.message || errorCatalog[problem.code].title;
  }
}

export function signInBody(input: { next: string; problem?: AppError | undefined; signedOut?: boolean; expired?: boolean; connecting?: boolean }): Html {
  return html`<section class="card narrow" aria-labelledby="sign-in-title">
  <h1 id="sign-in-title">Sign in to review</h1>
  ${input.signedOut ? html`<p class="notice" role="status">You are signed out.</p>` : null}
  ${input.expired && !input.problem ? html`<p class="notice" role="status">Your session ended: it expired, was signed out elsewhere, or its token was revoked. Sign in again and you are taken back to the page you were on.</p>` : null}
  ${input.problem ? html`<div class="alert" role="alert"><p>${signInProblemText(input.problem, input.connecting ?? false)}</p><p class="code">Code: <code>${input.problem.code}</code></p></div>` : null}
  <p>Paste a personal access token of your account. It is exchanged for a session that lasts up to eight hours; the token itself is not kept by your browser.</p>
  <form method="post" action="/console/sign-in" class="stack">
    <input type="hidden" name="next" value="${input.next}">
    <label for="token">Personal access token</label>
    <input id="token" name="token" type="password" autocomplete="off" spellcheck="false" required maxlength="200" placeholder="hnp_pat_…" aria-describedby="token-help">
    <p id="token-help" class="help">An operator creates one with <code>npm run ops -- token create --account &lt;accountId&gt; --name console</code>. ${
      input.connecting
        ? 'To connect an application, your plan must include MCP (Premium, Professional, Developer & Agent or Team).'
        : 'Your plan must include the automation gateway (Developer or Team).'
    }</p>
    <button type="submit" class="button primary">Sign in</button>
  </form>
</section>`;
}

export function errorBody(error: AppError, requestId: string): Html {
  return html`<section class="card" aria-labelledby="error-title">
  <h1 id="error-title">${errorCatalog[error.code].title}</h1>
  <div class="alert" role="alert"><p>${error.message}</p></div>
  <dl class="facts">
    <dt>Status</dt><dd>${error.status}</dd>
    <dt>Code</dt><dd><code>${error.code}</code></dd>
    <dt>Request id</dt><dd><code>${requestId}</code></dd>
  </dl>
  <p><a href="/console">Back to the inbox</a></p>
</section>`;
}
