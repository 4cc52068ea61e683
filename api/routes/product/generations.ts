// A generation's status, its events and its cancel (issue 48, docs/intelligence.md "Long
// generations"): GET the generation, GET its events from an offset (NDJSON, or SSE for a browser's
// EventSource) live until its done, POST its cancel; and the 202 of background mode (Prefer:
// respond-async) the metered routes answer. Authorized exactly like media: the caller's organization
// and installation; anything else answers as missing. The rules live in domain/intelligence/generation-log.ts; this is the HTTP edge.
//
import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DatabasePool } from 'slonik';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { envelope, NDJSON_CONTENT_TYPE } from '@hosted-notes/runtime-sdk';
import { AppError } from '../../../domain/errors.ts';
import { followGeneration, generationOf, requestCancel } from '../../../domain/intelligence/generation-log.ts';
import type { GenerationRow, GenerationWakes, LoggedEvent } from '../../../domain/intelligence/generation-log.ts';
import { generationView } from '../../../domain/intelligence/generation.ts';
import { RUNTIME_MOUNT, runtimeCaller } from './kit.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import { operationRoute } from './operation-route.ts';
import { generationDocs, generationExamples } from './generations-docs.ts';

export type GenerationRouteDeps = RuntimeRouteDeps & { wakes: GenerationWakes };

/** Where a generation and its events are read (Location of a 202, eventsUrl of ready). */
export const generationUrl = (generationId: string) => `${RUNTIME_MOUNT}/intelligence/generations/${generationId}`;
export const generationEventsUrl = (generationId: string) => `${generationUrl(generationId)}/events`;

const SSE_CONTENT_TYPE = 'text/event-stream';
/** A line that carries nothing, so proxies that close idle connections (60 s is common) see bytes. */
const HEARTBEAT_MS = 15_000;
/** The largest seq: Postgres `integer`. */
const MAX_SEQ = 2_147_483_647;

/** The `service.intelligence-generation` answer of an authorized generation: its view and where it is read. */
export async function generationAnswer(db: DatabasePool, generation: GenerationRow) {
  const view = await generationView(db, generation);
  return envelope('service.intelligence-generation', { ...view, url: generationUrl(generation.generationId), eventsUrl: generationEventsUrl(generation.generationId) });
}

/** Whether the request asks for background mode: `Prefer: respond-async` (RFC 7240; any case, among other preferences, with or without parameters). */
export function prefersAsync(request: FastifyRequest): boolean {
  const prefer = request.headers.prefer;
  if (prefer === undefined) return false;
  return (Array.isArray(prefer) ? prefer : [prefer]).some((header) =>
    header.split(',').some((preference) => preference.split(';')[0]!.split('=')[0]!.trim().toLowerCase() === 'respond-async'),
  );
}

/** The 202 of a generation started (or found again) in background mode: Location, Preference-Applied and its answer. */
export async function acceptedInBackground(db: DatabasePool, reply: FastifyReply, generation: GenerationRow) {
  reply.code(202).header('location', generationUrl(generation.generationId)).header('preference-applied', 'respond-async').header('vary', 'Prefer');
  return generationAnswer(db, generation);
}

const params = z.strictObject({ generationId: z.string().min(1).max(100).describe('The generation id (the generationId of ready, the receipt id).') });
// A repeated or malformed `after` is refused with its own code (generation_position_invalid), not as a schema mismatch.
const eventsQuery = z.strictObject({
  after: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('The seq of the last event seen (a non-negative integer); the answer starts after it. Last-Event-ID says the same.'),
});
const generationProblems = ['generation_not_found'] as const;

/** A seq as a client sends it: one non-negative integer, no sign, no leading zero, no spaces. */
function positionOf(raw: unknown): number | null {
  if (raw === undefined) return null;
  if (typeof raw !== 'string' || !/^(0|[1-9][0-9]{0,9})$/.test(raw)) throw new AppError('generation_position_invalid');
  const seq = Number(raw);
  if (seq > MAX_SEQ) throw new AppError('generation_position_invalid');
  return seq;
}

/** `?after=N` and `Last-Event-ID: N` (EventSource's reconnect): either, or both when they agree; none is 0. */
function afterOf(request: FastifyRequest): number {
  const query = request.query as Record<string, unknown>;
  const fromQuery = positionOf(query['after']);
  const fromHeader = positionOf(request.headers['last-event-id']);
  if (fromQuery !== null && fromHeader !== null && fromQuery !== fromHeader) throw new AppError('generation_position_invalid', 'after and Last-Event-ID name different events.');
  return fromQuery ?? fromHeader ?? 0;
}

/** The format asked for: NDJSON (also for no Accept, any type, or any application type) or SSE; anything else is 406. */
function formatOf(request: FastifyRequest): 'ndjson' | 'sse' {
  const accept = request.headers.accept;
  if (accept === undefined || accept.trim() === '') return 'ndjson';
  for (const range of accept.split(',')) {
    const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = parameters.find((p) => p.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) continue;
    if (type === NDJSON_CONTENT_TYPE || type === '*/*' || type === 'application/*') return 'ndjson';
    if (type === SSE_CONTENT_TYPE || type === 'text/*') return 'sse';
  }
  throw new AppError('generation_events_not_acceptable');
}

/** An event as the wire carries it: its type, its seq, then the rest; ready names where the events are read. */
function wireEvent(event: LoggedEvent, generationId: string): Record<string, unknown> {
  const { type, seq, ...rest } = event;
  return type === 'ready' ? { type, seq, ...rest, eventsUrl: generationEventsUrl(generationId) } : { type, seq, ...rest };
}

export const generationRoutes: FastifyPluginAsyncZod<GenerationRouteDeps> = async (app, deps) => {
  const { db, wakes } = deps;

  app.route({
    ...operationRoute('getGeneration'),
    schema: {
      description:
        "The generation's status (queued, running, completed, failed, cancelled), its result (once completed), error code (once failed or cancelled) and " +
        "usage receipt (once charged), and where its events are read. Another installation's or organization's generation answers exactly like a missing one.",
      params,
      problems: [...generationProblems],
      docs: generationDocs.getGeneration,
      examples: generationExamples.getGeneration,
    },
    handler: async (request) => generationAnswer(db, await generationOf(db, runtimeCaller(request), request.params.generationId)),
  });

  app.route({
    ...operationRoute('cancelGeneration'),
    schema: {
      description:
        'Stops the generation: its upstream request is closed (by whichever API pumps it), the text so far stays in its events, and it is charged as ' +
        'docs/intelligence.md states for a cancel (released before the provider accepted; after, the reported usage or the reserved bound, never more). ' +
        'Idempotent; a finished generation is left as it is. Answers the generation as it stands after the ask.',
      params,
      problems: [...generationProblems],
      docs: generationDocs.cancelGeneration,
      examples: generationExamples.cancelGeneration,
    },
    handler: async (request) => {
      const caller = runtimeCaller(request);
      const generation = await generationOf(db, caller, request.params.generationId);
      // The pump of this process, if it is the one, is aborted now; then the ask is recorded and
      // announced to every process (the one pumping it aborts its upstream request).
      wakes.cancelHere(generation.generationId);
      await requestCancel(db, generation.generationId);
      return generationAnswer(db, await generationOf(db, caller, generation.generationId));
    },
  });

  app.route({
    ...operationRoute('streamGeneration'),
    schema: {
      description:
        'The events after ?after=N or Last-Event-ID: N (default 0), each with its seq, then live until done: application/x-ndjson (also for */*), or ' +
        'text/event-stream for EventSource (id: is the seq). After the end of an ended generation: 204. Past retention: 410 generation_expired.',
      params,
      querystring: eventsQuery,
      problems: [...generationProblems, 'generation_expired', 'generation_position_invalid', 'generation_events_not_acceptable', 'generation_readers_exhausted'],
      docs: generationDocs.streamGeneration,
      examples: generationExamples.streamGeneration,
    },
    handler: async (request, reply) => {
      // The request's own faults (406, 400), then what the caller may see.
      const caller = runtimeCaller(request);
      const format = formatOf(request);
      const after = afterOf(request);
      const generation = await generationOf(db, caller, request.params.generationId);
      if (generation.eventsExpired) throw new AppError('generation_expired');
      const finished = generation.status !== 'queued' && generation.status !== 'running';
      if (finished && after > generation.lastSeq) throw new AppError('generation_position_invalid', `This generation's last event is ${generation.lastSeq}.`);
      // Nothing after the end: 204, which also tells an EventSource not to reconnect.
      if (finished && after === generation.lastSeq) return reply.code(204).header('cache-control', 'no-store').send();

      const release = wakes.admitReader();
      const closed = new AbortController();
      reply.raw.once('close', () => closed.abort());
      const out = new PassThrough();
      const write = (text: string) => {
        if (!out.destroyed && !out.writableEnded) out.write(text);
      };
      const heartbeat = setInterval(() => write(format === 'sse' ? ': keep-alive\n\n' : '\n'), HEARTBEAT_MS);
      const send = (event: LoggedEvent) => {
        const json = JSON.stringify(wireEvent(event, generation.generationId));
        write(format === 'sse' ? `id: ${event.seq}\nevent: ${event.type}\ndata: ${json}\n\n` : `${json}\n`);
      };
      // The status line goes out now (a reader of a queued generation waits with its headers); expiry
      // was checked above, so what can still go wrong mid-stream only ends it, and the reader resumes.
      void (async () => {
        try {
          for await (const event of followGeneration(db, wakes, generation, after, closed.signal)) send(event);
        } catch (error) {
          request.log.warn({ err: error, generationId: generation.generationId }, 'reading a generation log failed mid-stream');
        } finally {
          release();
          clearInterval(heartbeat);
          out.end();
        }
      })();
      return reply
        .header('content-type', `${format === 'sse' ? SSE_CONTENT_TYPE : NDJSON_CONTENT_TYPE}; charset=utf-8`)
        .header('cache-control', 'no-store')
        .header('x-accel-buffering', 'no')
        .send(out);
    },
  });
};
