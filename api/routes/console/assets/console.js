// Reviewer console: keeps live parts of a page current without a reload. An element with
// data-live-src is refreshed from that URL every data-live-interval milliseconds while the tab is
// visible; the server answers 304 when nothing changed (ETag) and sends the next interval in
// X-Console-Refresh-Ms (0: stop, e.g. once a proposal has settled). A refresh never replaces a part
// that holds focus or a form field someone is typing in.
// Also the keyboard (j/k between inbox rows, announced; d, n, u, [ and ] on a proposal), the jump
// list's expand / collapse, and the reason's character count. Every part works without it.
(() => {
  'use strict';
  const status = () => document.getElementById('live-status');

  function keepCurrent(element) {
    let interval = Number(element.dataset.liveInterval || 0);
    let etag = element.dataset.liveEtag || null;
    let timer = null;

    async function refresh() {
      timer = null;
      if (document.visibilityState !== 'visible') return;
      if (element.contains(document.activeElement) && document.activeElement !== document.body && document.activeElement.matches('input, textarea, select')) {
        schedule();
        return;
      }
      try {
        const response = await fetch(element.dataset.liveSrc, {
          headers: { Accept: 'text/html', ...(etag ? { 'If-None-Match': etag } : {}) },
          credentials: 'same-origin',
          cache: 'no-cache',
        });
        if (response.status === 401 || response.redirected) {
          window.location.assign('/console/sign-in?expired=1&next=' + encodeURIComponent(window.location.pathname + window.location.search));
          return;
        }
        const next = response.headers.get('x-console-refresh-ms');
        if (next !== null) interval = Number(next);
        if (response.status === 200) {
          etag = response.headers.get('etag');
          element.innerHTML = await response.text();
          for (const actions of element.querySelectorAll('.jump-actions')) actions.hidden = false;
          const region = status();
          if (region) region.textContent = 'Updated at ' + new Date().toLocaleTimeString();
        } else if (response.status === 304) {
          etag = response.headers.get('etag') || etag;
        }
      } catch {
        // Offline or the server restarting: try again at the next interval.
      }
      schedule();
    }

    function schedule() {
      if (interval > 0 && timer === null) timer = window.setTimeout(refresh, interval);
    }

    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && interval > 0 && timer === null) void refresh();
    });
    schedule();
  }

  const typing = (target) => target instanceof Element && (target.matches('input, textarea, select, [contenteditable]') || target.closest('[contenteditable]'));

  function announce(text) {
    const region = document.getElementById('row-status');
    if (region) region.textContent = text;
  }

  /** j / k (and the arrow keys on a row): the next or previous proposal of the inbox, focused and announced. */
  function moveRow(step) {
    const links = [...document.querySelectorAll('a.row-link')];
    if (links.length === 0) return false;
    const at = links.indexOf(document.activeElement);
    const next = links[at === -1 ? (step > 0 ? 0 : links.length - 1) : Math.min(links.length - 1, Math.max(0, at + step))];
    next.focus();
    next.closest('tr')?.scrollIntoView({ block: 'nearest' });
    announce(next.dataset.announce || next.textContent);
    return true;
  }

  /** [ and ]: the previous or next note of a change, opened and focused. */
  function moveNote(step) {
    const notes = [...document.querySelectorAll('details.change')];
    if (notes.length === 0) return false;
    const at = notes.findIndex((d) => d.contains(document.activeElement));
    const target = notes[at === -1 ? (step > 0 ? 0 : notes.length - 1) : Math.min(notes.length - 1, Math.max(0, at + step))];
    target.open = true;
    target.querySelector('summary')?.focus();
    return true;
  }

  function toDecision() {
    const field = document.getElementById('reason') || document.querySelector('#decide button, #decide a');
    if (!field) {
      announce('There is no decision to make on this proposal.');
      return false;
    }
    field.focus();
    field.scrollIntoView({ block: 'center' });
    return true;
  }

  const keys = {
    j: () => moveRow(1),
    k: () => moveRow(-1),
    d: toDecision,
    '[': () => moveNote(-1),
    ']': () => moveNote(1),
    n: () => follow('[data-key="n"]'),
    u: () => follow('[data-key="u"]'),
  };

  function follow(selector) {
    const link = document.querySelector(selector);
    if (!link) return false;
    link.click();
    return true;
  }

  document.addEventListener('keydown', (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) return;
    const onRow = event.target instanceof Element && event.target.matches('a.row-link');
    const key = onRow && event.key === 'ArrowDown' ? 'j' : onRow && event.key === 'ArrowUp' ? 'k' : event.key;
    const action = keys[key];
    if (action && action() !== false) event.preventDefault();
  });

  // A jump-list link opens the note it points at; "Expand all" / "Collapse all" open or close every diff.
  document.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target : null;
    const jump = target?.closest('a[href^="#c-"]');
    if (jump) {
      const details = document.getElementById(jump.getAttribute('href').slice(1));
      if (details instanceof HTMLDetailsElement) details.open = true;
    }
    const all = target?.closest('[data-diffs]');
    if (all) for (const details of document.querySelectorAll('details.change')) details.open = all.dataset.diffs === 'open';
  });

  // The reason's length as it is typed, against its limit.
  document.addEventListener('input', (event) => {
    const field = event.target;
    if (!(field instanceof HTMLTextAreaElement) || !field.dataset.counter) return;
    const counter = document.getElementById(field.dataset.counter);
    if (counter) counter.textContent = field.value.length.toLocaleString('en') + ' of ' + field.maxLength.toLocaleString('en') + ' characters';
  });

  document.addEventListener('DOMContentLoaded', () => {
    for (const element of document.querySelectorAll('[data-live-src]')) keepCurrent(element);
    for (const actions of document.querySelectorAll('.jump-actions')) actions.hidden = false;
    const hash = window.location.hash.slice(1);
    const target = hash && document.getElementById(hash);
    if (target instanceof HTMLDetailsElement) target.open = true;
  });
})();
