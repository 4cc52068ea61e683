// Reviewer console: keeps live parts of a page current without a reload. An element with
// data-live-src is refreshed from that URL when the live stream (/console/live, Server-Sent Events
// fed by the database's change notifications) says a proposal it shows changed: data-live-topic
// "inbox" (any proposal, or of data-live-workspace) or "proposal" (data-live-proposal). Where the
// stream cannot be held (no EventSource, refused, a proxy that buffers it: no `ready` within 5 s)
// the part polls instead, every data-live-interval milliseconds while the tab is visible, as
// before. Either way the server answers 304 when nothing changed (ETag) and sends the next poll
// interval in X-Console-Refresh-Ms (0: stop, e.g. once a proposal has settled). A refresh never
// replaces a part that holds focus in a form field someone is typing in. The stream is closed while
// the tab is hidden (a browser holds few connections per site) and opened again when it is shown.
// Also the keyboard (j/k between inbox rows, announced; d, n, u, [ and ] on a proposal), the jump
// list's expand / collapse, and the reason's character count. Every part works without it.
(() => {
  'use strict';
  const status = () => document.getElementById('live-status');
  const signInAgain = () =>
    window.location.assign('/console/sign-in?expired=1&next=' + encodeURIComponent(window.location.pathname + window.location.search));

  function keepCurrent(element) {
    let interval = Number(element.dataset.liveInterval || 0);
    let etag = element.dataset.liveEtag || null;
    let timer = null;
    let streaming = false;
    let inFlight = false;
    let again = false;

    async function refresh() {
      if (timer !== null) window.clearTimeout(timer);
      timer = null;
      if (document.visibilityState !== 'visible') return;
      if (inFlight) {
        again = true; // a change arrived while fetching: fetch once more afterwards
        return;
      }
      if (element.contains(document.activeElement) && document.activeElement !== document.body && document.activeElement.matches('input, textarea, select')) {
        timer = window.setTimeout(refresh, interval || 2000); // deferred, even while streaming: the change is still to be shown
        return;
      }
      inFlight = true;
      try {
        const response = await fetch(element.dataset.liveSrc, {
          headers: { Accept: 'text/html', ...(etag ? { 'If-None-Match': etag } : {}) },
          credentials: 'same-origin',
          cache: 'no-cache',
        });
        if (response.status === 401 || response.redirected) {
          signInAgain();
          return;
        }
        const next = response.headers.get('x-console-refresh-ms');
        if (next !== null) interval = Number(next);
        if (response.status === 200) {
          etag = response.headers.get('etag');
          // What the reviewer wrote (a reason) survives the new content where the same field is in it.
          const written = [...element.querySelectorAll('textarea[id]')].filter((field) => field.value !== '').map((field) => [field.id, field.value]);
          element.innerHTML = await response.text();
          for (const [id, value] of written) {
            const field = document.getElementById(id);
            if (field instanceof HTMLTextAreaElement && element.contains(field) && field.value === '') {
              field.value = value;
              field.dispatchEvent(new Event('input', { bubbles: true }));
            }
          }
          for (const actions of element.querySelectorAll('.jump-actions')) actions.hidden = false;
          const region = status();
          if (region) region.textContent = 'Updated at ' + new Date().toLocaleTimeString();
        } else if (response.status === 304) {
          etag = response.headers.get('etag') || etag;
        }
      } catch {
        // Offline or the server restarting: try again at the next interval.
      } finally {
        inFlight = false;
      }
      if (again) {
        again = false;
        void refresh();
        return;
      }
      schedule(interval);
    }

    function schedule(ms) {
      if (!streaming && ms > 0 && timer === null) timer = window.setTimeout(refresh, ms);
    }

    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && !streaming && interval > 0 && timer === null) void refresh();
    });
    schedule(interval);

    const topic = element.dataset.liveTopic;
    return {
      refresh,
      /** Whether a change the stream announced is one this part shows. */
      wants: (change) =>
        (topic === 'inbox' && (!element.dataset.liveWorkspace || element.dataset.liveWorkspace === change.workspaceId)) ||
        (topic === 'proposal' && element.dataset.liveProposal === change.id),
      followsStream: topic !== undefined,
      /** While the stream is held the part does not poll; without it, it polls at its interval. */
      setStreaming(on) {
        streaming = on;
        element.dataset.liveMode = on ? 'stream' : 'poll';
        if (on && timer !== null) {
          window.clearTimeout(timer);
          timer = null;
        }
        if (!on) schedule(interval);
      },
    };
  }

  /** The live stream for every part that follows it; the parts poll whenever it is not held. */
  function followStream(parts) {
    const listeners = parts.filter((part) => part.followsStream);
    if (listeners.length === 0 || !('EventSource' in window)) return;
    let source = null;
    let readyTimer = null;
    let retryTimer = null;
    const refreshAll = () => listeners.forEach((part) => void part.refresh());
    const setStreaming = (on) => listeners.forEach((part) => part.setStreaming(on));

    function close() {
      if (readyTimer !== null) window.clearTimeout(readyTimer);
      readyTimer = null;
      source?.close();
      source = null;
    }
    function retryLater(ms) {
      if (retryTimer === null) retryTimer = window.setTimeout(() => ((retryTimer = null), open()), ms);
    }
    /** The stream is not to be had now: poll (starting with a refresh, a change may have come meanwhile), try again later. */
    function fallBack(retryMs) {
      close();
      setStreaming(false);
      refreshAll();
      retryLater(retryMs);
    }
    function open() {
      if (source !== null || document.visibilityState !== 'visible') return;
      source = new EventSource('/console/live');
      readyTimer = window.setTimeout(() => fallBack(30_000), 5_000);
      const ready = () => {
        if (readyTimer !== null) window.clearTimeout(readyTimer);
        readyTimer = null;
        setStreaming(true);
        refreshAll(); // a change may have come between the page's rendering and now
      };
      source.addEventListener('ready', ready);
      source.addEventListener('resync', ready);
      source.addEventListener('paused', () => setStreaming(false)); // the server hears nothing until `resync`: poll meanwhile
      source.addEventListener('proposal', (event) => {
        const change = JSON.parse(event.data);
        for (const part of listeners) if (part.wants(change)) void part.refresh();
      });
      source.addEventListener('end', (event) => {
        const { reason } = JSON.parse(event.data);
        if (reason === 'session_ended') {
          close();
          signInAgain();
        } else {
          fallBack(3_000 + Math.random() * 2_000); // the server is going away: poll, and come back to another
        }
      });
      source.addEventListener('error', () => {
        // CONNECTING: the browser reconnects by itself (poll meanwhile); CLOSED: refused (e.g. 401, 503).
        if (source?.readyState === EventSource.CLOSED) fallBack(30_000);
        else setStreaming(false);
      });
    }
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') open();
      else {
        close();
        setStreaming(false);
      }
    });
    open();
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
    followStream([...document.querySelectorAll('[data-live-src]')].map(keepCurrent));
    for (const actions of document.querySelectorAll('.jump-actions')) actions.hidden = false;
    const hash = window.location.hash.slice(1);
    const target = hash && document.getElementById(hash);
    if (target instanceof HTMLDetailsElement) target.open = true;
  });
})();
