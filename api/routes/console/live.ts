// The console's live stream (GET /console/live, Server-Sent Events; decision 98): an open inbox or
// proposal page hears that a proposal changed the moment its transaction commits, instead of
// polling. The request is admitted like any page (one request charged, when the stream opens);
// what flows afterwards is not charged: heartbeats, and events that name a proposal and its
// workspace only. The page then fetches its live part through the ordinary, charged and
// authorized fragment routes, so no rule of what a reviewer may see is written twice.
//
// Events: `ready` (listening: refresh once, a change may have come before), `proposal`
// ({id, workspaceId}, only for workspaces where the reviewer has automation.view), `paused` (the
// database connection was lost: nothing will come until `resync`, so the page polls meanwhile),
// `resync` (it is back: refresh, a change may have been missed), `end`
// ({reason: session_ended | shutdown}; the page stops or reconnects accordingly). A comment line
// every heartbeat keeps proxies from closing an idle stream; each heartbeat also re-checks the
// session (uncharged) and the reviewer's workspaces, so a revoked token or a removed member stops
// hearing at once.
//
// Our own framing rather than @fastify/sse (0.x at the time): the stream must be admitted by the
// console's hooks before anything is written, and every open stream must end on close (Ctrl-C,
// SIGTERM) so the process is not held open by a browser; both are a few lines here.
import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { NotificationListener } from '../../../db/notification-listener.ts';
import { liveAudience, parseProposalChange } from '../../../domain/console/live.ts';
import { AppError } from '../../../domain/errors.ts';
import { admitSession } from './session.ts';
import type { SessionDeps } from './session.ts';

export type LiveOptions = {
  /** The process's listener on the proposal channel; null: no live updates (pages poll). */
  listener: NotificationListener | null;
  /** How often a heartbeat is written and the session re-checked. */
  heartbeatMs: number;
  /** Streams this process holds at most; past it a page polls instead (503 live_updates_unavailable). */
  maxStreams: number;
};

export const defaultLiveOptions = { heartbeatMs: 20_000, maxStreams: 1_000 } as const;

/** What a stream may hold unread before the browser is cut off (events are ~100 bytes). */
const MAX_BACKLOG_BYTES = 256 * 1024;

/** How long a browser waits before reconnecting a dropped stream (EventSource's `retry`). */
const RECONNECT_MS = 3_000;

type OpenStream = { end: (reason: 'session_ended' | 'shutdown') => void };

/** The streams this process holds, so that closing the app ends them (and so that their number is bounded). */
export class LiveStreams {
  readonly #open = new Set<OpenStream>();
  get size(): number {
    return this.#open.size;
  }
  add(stream: OpenStream): () => void {
    this.#open.add(stream);
    return () => this.#open.delete(stream);
  }
  endAll(): void {
    for (const stream of [...this.#open]) stream.end('shutdown');
  }
}

const frame = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** Opens the stream for an admitted console request; returns once the response is under way. */
export async function openLiveStream(request: FastifyRequest, reply: FastifyReply, deps: { sessionDeps: SessionDeps; live: LiveOptions; streams: LiveStreams }): Promise<FastifyReply> {
  const { listener, heartbeatMs, maxStreams } = deps.live;
  if (!listener) throw new AppError('live_updates_unavailable', 'This process serves no live updates (its console is configured without them); the page polls instead.');
  if (deps.streams.size >= maxStreams) throw new AppError('live_updates_unavailable', undefined, { headers: { 'retry-after': '30' } });
  const body = new PassThrough();
  let ended = false;
  let heartbeat: NodeJS.Timeout | null = null;
  let unsubscribe = () => {};
  function cleanUp() {
    ended = true;
    if (heartbeat) clearInterval(heartbeat);
    unsubscribe();
    forget();
  }
  function write(chunk: string) {
    if (ended) return;
    // A browser that stopped reading (a frozen tab, a stalled proxy) is cut off rather than buffered
    // for: EventSource reconnects by itself and the page refreshes on `ready`.
    if (body.writableLength > MAX_BACKLOG_BYTES) {
      cleanUp();
      reply.raw.destroy();
      return;
    }
    body.write(chunk);
  }
  function end(reason: 'session_ended' | 'shutdown') {
    if (ended) return;
    write(frame('end', { reason }));
    cleanUp();
    body.end();
  }
  // Counted before anything is awaited, so concurrent opens cannot pass the bound together.
  const forget = deps.streams.add({ end });
  const accountId = request.principal!.account.id;
  let audience: ReadonlySet<string>;
  try {
    audience = await liveAudience(deps.sessionDeps.db, accountId);
  } catch (error) {
    forget();
    throw error;
  }
  // The browser went away: stop listening and let go of the body.
  reply.raw.on('close', () => {
    cleanUp();
    body.end();
  });

  write(`retry: ${RECONNECT_MS}\n\n`);
  if (!ended) {
    let heard = false;
    unsubscribe = listener.subscribe({
      notify: (payload) => {
        const change = parseProposalChange(payload);
        if (change && audience.has(change.workspaceId)) write(frame('proposal', change));
      },
      listening: () => {
        write(frame(heard ? 'resync' : 'ready', {}));
        heard = true;
      },
      lost: () => write(frame('paused', {})),
    });
    let checking = false;
    heartbeat = setInterval(() => {
      // One check at a time: a slow database must not pile them up.
      if (checking) return;
      checking = true;
      void (async () => {
        try {
          // Uncharged: the stream was charged when it opened. A dead session ends it.
          await admitSession(request, reply, deps.sessionDeps, { charge: false });
          audience = await liveAudience(deps.sessionDeps.db, accountId);
          write(': heartbeat\n\n');
        } catch (error) {
          if (error instanceof AppError && ['session_invalid', 'account_inactive', 'entitlement_required'].includes(error.code)) end('session_ended');
          else write(': heartbeat (the session could not be checked just now)\n\n');
        } finally {
          checking = false;
        }
      })();
    }, heartbeatMs);
    heartbeat.unref();
  }
  // One stream per connection: Connection: close lets the socket go with the stream, so ending
  // every stream is all a shutdown has to do.
  return reply
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('connection', 'close')
    .header('x-accel-buffering', 'no')
    .send(body);
}
