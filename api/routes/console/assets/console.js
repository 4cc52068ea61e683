// Reviewer console: keeps live parts of a page current without a reload. An element with
// data-live-src is refreshed from that URL every data-live-interval milliseconds while the tab is
// visible; the server answers 304 when nothing changed (ETag) and sends the next interval in
// X-Console-Refresh-Ms (0: stop, e.g. once a proposal has settled). A refresh never replaces a part
// that holds focus or a form field someone is typing in.
(() => {
  'use strict';
  const status = () => document.getElementById('live-status');

  function follow(element) {
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
          window.location.assign('/console/sign-in?next=' + encodeURIComponent(window.location.pathname + window.location.search));
          return;
        }
        const next = response.headers.get('x-console-refresh-ms');
        if (next !== null) interval = Number(next);
        if (response.status === 200) {
          etag = response.headers.get('etag');
          element.innerHTML = await response.text();
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

  document.addEventListener('DOMContentLoaded', () => {
    for (const element of document.querySelectorAll('[data-live-src]')) follow(element);
  });
})();
