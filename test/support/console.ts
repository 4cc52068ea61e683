// Helpers for the reviewer console's tests (/console): signing in with a personal access token,
// posting its forms, and the proposals its pages show (created and followed through the API).
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { csrfTokenFor, sessionCookieName } from '../../domain/console/sessions.ts';
import type { DevClient, Json } from './dev-client.ts';

/** A signed-in console session: the Cookie header value to send, its secret and the CSRF token its forms carry. */
export type ConsoleSession = { cookie: string; secret: string; csrf: string };

/** The session cookie's value in a response's Set-Cookie, if it set one. */
export function sessionCookieOf(res: LightMyRequestResponse): { value: string; header: string } | undefined {
  const raw = res.headers['set-cookie'];
  const headers = raw === undefined ? [] : Array.isArray(raw) ? raw : [String(raw)];
  const header = headers.find((h) => h.startsWith(`${sessionCookieName}=`));
  if (!header) return undefined;
  return { value: decodeURIComponent(header.slice(sessionCookieName.length + 1).split(';')[0]!), header };
}

/** POSTs the sign-in form; the raw response (303 on success, the sign-in page with a problem otherwise). */
export function postSignIn(app: FastifyInstance, token: string, options: { next?: string; headers?: Record<string, string> } = {}) {
  const form: Record<string, string> = { token };
  if (options.next !== undefined) form['next'] = options.next;
  return app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...options.headers },
    payload: new URLSearchParams(form).toString(),
  });
}

/** Signs a personal access token in and returns the session (throws unless sign-in answered 303 with a cookie). */
export async function consoleSignIn(app: FastifyInstance, token: string, options: { headers?: Record<string, string> } = {}): Promise<ConsoleSession> {
  const res = await postSignIn(app, token, options);
  const cookie = sessionCookieOf(res);
  if (res.statusCode !== 303 || !cookie?.value) throw new Error(`console sign-in answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
  return { cookie: `${sessionCookieName}=${cookie.value}`, secret: cookie.value, csrf: csrfTokenFor(cookie.value) };
}

/** A form body as the console's pages post it. */
export const formBody = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** A GET of a console page with the session (and any other headers), e.g. Accept: application/json. */
export function consoleGet(app: FastifyInstance, session: ConsoleSession | null, url: string, headers: Record<string, string> = {}) {
  return app.inject({ method: 'GET', url, headers: { ...(session ? { cookie: session.cookie } : {}), ...headers } });
}

/** A form POST to the console with the session; `csrf` is added from the session unless the fields name one (or `csrf: null` leaves it out). */
export function consolePost(
  app: FastifyInstance,
  session: ConsoleSession | null,
  url: string,
  fields: Record<string, string | null> = {},
  headers: Record<string, string> = {},
) {
  const form: Record<string, string> = {};
  if (session && !('csrf' in fields)) form['csrf'] = session.csrf;
  for (const [k, v] of Object.entries(fields)) if (v !== null) form[k] = v;
  return app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(session ? { cookie: session.cookie } : {}), ...headers },
    payload: formBody(form),
  });
}

/** Creates a proposal through the automation gateway (the caller needs automation.manage); its id. */
export async function proposeViaApi(
  api: DevClient,
  input: { workspaceId: string; action: Json; bridge?: string; summary?: string },
): Promise<string> {
  const res = await api.request('POST', '/api/dev/automation/proposals', {
    body: { workspaceId: input.workspaceId, bridge: input.bridge ?? 'test-bridge', action: input.action, summary: input.summary ?? 'test proposal' },
    headers: { 'idempotency-key': randomUUID() },
  });
  if (res.statusCode !== 201) throw new Error(`proposing answered ${res.statusCode}: ${res.body}`);
  return res.data.id as string;
}

/** Polls the proposal through the API until it is in one of `states`; its API view then. */
export async function waitForProposalState(api: DevClient, id: string, states: readonly string[], timeoutMs = 15_000): Promise<Json> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await api.request('GET', `/api/dev/automation/proposals/${id}`);
    if (states.includes(res.data.state as string)) return res.data;
    if (Date.now() > until) throw new Error(`proposal ${id} stayed ${String(res.data.state)} (waiting for ${states.join(' | ')})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One Server-Sent Event as the console's live stream writes it. */
export type StreamEvent = { event: string; data: unknown };

/**
 * The console's live stream (GET /console/live) over real HTTP, read as the browser's EventSource
 * would: `next(name)` waits for the next event of that name (and returns the events skipped on the
 * way), `ended` settles when the server ends the response. `status`/`headers` are the response's.
 */
export async function openConsoleStream(baseUrl: string, cookie: string) {
  const aborter = new AbortController();
  const response = await fetch(`${baseUrl}/console/live`, { headers: { cookie, accept: 'text/event-stream' }, signal: aborter.signal });
  const events: StreamEvent[] = [];
  const comments: string[] = [];
  let wake = null as (() => void) | null;
  let done = false;
  const ended = (async () => {
    if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        for (let at = buffer.indexOf('\n\n'); at !== -1; at = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.includes(':')) fields.set(line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trimStart());
          }
          if (fields.has('event')) events.push({ event: fields.get('event')!, data: JSON.parse(fields.get('data') ?? 'null') });
          wake?.();
        }
      }
    } catch {
      // aborted by close()
    } finally {
      done = true;
      wake?.();
    }
  })();
  let read = 0;
  /** The next event named `name` (within `timeoutMs`); the ones passed over on the way are `skipped`. */
  async function next(name: string, timeoutMs = 5_000): Promise<StreamEvent & { skipped: StreamEvent[] }> {
    const until = Date.now() + timeoutMs;
    const skipped: StreamEvent[] = [];
    for (;;) {
      while (read < events.length) {
        const event = events[read++]!;
        if (event.event === name) return { ...event, skipped };
        skipped.push(event);
      }
      if (done) throw new Error(`the stream ended before a ${name} event (seen: ${JSON.stringify(skipped)})`);
      const left = until - Date.now();
      if (left <= 0) throw new Error(`no ${name} event within ${timeoutMs} ms (seen: ${JSON.stringify(skipped)})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          wake = null;
          resolve();
        };
      });
    }
  }
  return {
    status: response.status,
    headers: response.headers,
    problem: async () => (await response.json()) as Json,
    events,
    comments,
    next,
    ended,
    close: () => aborter.abort(),
  };
}
