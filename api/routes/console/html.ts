// Server-rendered HTML for the reviewer console: a tagged template that escapes every interpolated
// value unless it is already rendered markup (`Html`), and the page frame. Our own ~40 lines rather
// than a template engine: the pages are few and small, and interpolation is the only feature they
// need (decisions.md 65).

/** Markup that is already safe: produced by `html` or `raw`. */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text (or an attribute value in double quotes) made safe for HTML. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => entities[c]!);
}

type Interpolation = Html | string | number | boolean | null | undefined | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** `html\`<p>${text}</p>\``: every value escaped, nested `html` kept, arrays joined, null/undefined/false dropped. */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new Html(out);
}

/** Markup we built ourselves and trust as it is. */
export const raw = (markup: string) => new Html(markup);

export type Frame = {
  title: string;
  /** The signed-in reviewer, for the header (absent on the sign-in page). */
  reviewer?: { displayName: string; csrfToken: string } | undefined;
  assets: { css: string; js: string };
  body: Html;
};

/** The whole document: landmarks, skip link, header with sign-out, a polite live region for updates. */
export function page(frame: Frame): string {
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · Reviewer console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${frame.assets.css}">
<script src="${frame.assets.js}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="bar">
  <a class="brand" href="/console">Reviewer console</a>
  ${
    frame.reviewer
      ? html`<form method="post" action="/console/sign-out" class="sign-out">
    <span class="who">Signed in as <strong>${frame.reviewer.displayName}</strong></span>
    <input type="hidden" name="csrf" value="${frame.reviewer.csrfToken}">
    <button type="submit" class="button secondary">Sign out</button>
  </form>`
      : null
  }
</header>
<main id="main" tabindex="-1">
${frame.body}
</main>
<div id="live-status" class="visually-hidden" role="status" aria-live="polite"></div>
</body>
</html>`}`;
}
