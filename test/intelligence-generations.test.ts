// A generation's event log and its readers (issue 48, step 1), over real HTTP against a scripted
// provider: the plain NDJSON stream writes the log as it streams; readers of
// GET …/generations/{id}/events get exactly the events after their offset, live until done, in
// NDJSON or SSE; past retention 410; another installation's or organization's generation answers
// exactly like a missing one; every malformed offset or Accept is refused with its code.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHostedRuntime } from '@hosted-notes/runtime-sdk';
import type { GenerateInput } from '@hosted-notes/runtime-sdk';
import { GenerationLogWriter, GenerationWakes, sweepExpiredEvents } from '../domain/intelligence/generation-log.ts';
import { createDatabasePool } from '../db/pool.ts';
import type { DatabasePool } from '../db/pool.ts';
import { TcpProxy } from './support/tcp-proxy.ts';
import { AppError } from '../domain/errors.ts';
import { useTestAppWithWorker } from './support/harness.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';
import { generateBody, setBudget } from './support/intelligence.ts';
import { useScriptedProvider } from './support/use-scripted-provider.ts';
import { readNdjson as readNdjsonOf } from './support/ndjson.ts';

const provider = useScriptedProvider();
const ctx = useTestAppWithWorker({ name: 'intelligence-generations', listen: true, overrides: () => ({ intelligence: provider.intelligence() }) });

let chain: RuntimeChain;
let sibling: RuntimeChain; // another installation of the same organization
let stranger: RuntimeChain; // another organization
beforeAll(async () => {
  chain = await buildRuntimeChain(ctx.db.pool);
  sibling = await buildRuntimeChain(ctx.db.pool, { organization: { id: chain.organizationId, workspaceId: chain.workspaceId } });
  stranger = await buildRuntimeChain(ctx.db.pool);
  await setBudget(ctx.db.pool, chain.organizationId, 10_000_000, 50);
  await setBudget(ctx.db.pool, stranger.organizationId, 10_000_000, 50);
});
beforeEach(() => provider.reset());

type Event = { type: string; seq: number; text?: string; eventsUrl?: string; generationId?: string; generation?: Record<string, unknown> | null; error?: { code: string } | null; receipt?: Record<string, unknown> };

const headersOf = (secret: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${secret}`, 'x-service-runtime-version': '1', ...extra });

const startStream = (secret = chain.secret, signal?: AbortSignal) =>
  fetch(`${ctx.url}/api/product/v1/intelligence/education/generate`, {
    method: 'POST',
    headers: headersOf(secret, { 'content-type': 'application/json', 'idempotency-key': randomUUID(), accept: 'application/x-ndjson' }),
    body: JSON.stringify(generateBody()),
    ...(signal ? { signal } : {}),
  });

const getGeneration = (id: string, secret = chain.secret) => fetch(`${ctx.url}/api/product/v1/intelligence/generations/${id}`, { headers: headersOf(secret) });

const getEvents = (id: string, options: { query?: string; headers?: Record<string, string>; secret?: string } = {}) =>
  fetch(`${ctx.url}/api/product/v1/intelligence/generations/${id}/events${options.query ?? ''}`, { headers: headersOf(options.secret ?? chain.secret, options.headers) });

const readNdjson = (response: Response, onEvent?: (event: Event) => void | Promise<void>) => readNdjsonOf<Event>(response, onEvent);

/** Reads a text/event-stream to its end: each message's id, event name and parsed data. */
async function readSse(response: Response): Promise<{ id: string; event: string; data: Event }[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '' && !block.startsWith(':'))
    .map((block) => {
      const fields = Object.fromEntries(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]));
      return { id: fields['id']!, event: fields['event']!, data: JSON.parse(fields['data']!) as Event };
    });
}

/** A generation streamed to its end through the plain stream: its id and the events the stream carried. */
async function finishedGeneration(chunks = ['Fold ', 'the ', 'strip ', 'in ', 'halves.']) {
  provider.script({ kind: 'chat', chunks });
  const events = await readNdjson(await startStream());
  const generationId = events[0]!.generationId!;
  // The log is written behind the plain stream: read it once it is closed.
  for (;;) {
    const body = (await (await getGeneration(generationId)).json()) as { data: { status: string } };
    if (body.data.status !== 'running' && body.data.status !== 'queued') break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { generationId, streamed: events };
}

describe('the log of a streamed generation', () => {
  it('two readers following live get exactly the stream: seq 1… in order, the same text, one provider call', async () => {
    // The provider sends chunk i only once both log readers have seen delta i-1: readers that were
    // not woken by each append (or a log written only at the end) would never finish.
    const seen = [0, 0];
    const waiters: (() => void)[] = [];
    const bothSaw = (n: number) => new Promise<void>((resolve) => (seen.every((s) => s >= n) ? resolve() : waiters.push(resolve)));
    const chunks = Array.from({ length: 12 }, (_, i) => `part ${i} `);
    let generationId = '';
    const started = new Promise<void>((resolve) => {
      provider.script({ kind: 'chat', chunks, beforeChunk: (i) => (i === 0 ? Promise.resolve(resolve()) : bothSaw(i)) });
    });
    const plain = startStream();
    const plainEvents = readNdjson(await plain, (event) => {
      if (event.type === 'ready') generationId = event.generationId!;
    });
    await started;
    while (!generationId) await new Promise((resolve) => setTimeout(resolve, 5));
    const readers = [0, 1].map(async (r) => {
      const res = await getEvents(generationId, { headers: { accept: 'application/x-ndjson' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
      return readNdjson(res, (event) => {
        if (event.type === 'delta') {
          seen[r] = (seen[r] ?? 0) + 1;
          waiters.splice(0).forEach((w) => w());
        }
      });
    });
    const [a, b] = await Promise.all(readers);
    const streamed = await plainEvents;
    expect(a).toEqual(b);
    expect(a!.map((e) => e.seq)).toEqual(a!.map((_, i) => i + 1));
    expect(a!.map((e) => e.type)).toEqual(['ready', ...chunks.map(() => 'delta'), 'done']);
    expect(a![0]).toMatchObject({ type: 'ready', generationId, eventsUrl: `/api/product/v1/intelligence/generations/${generationId}/events` });
    expect(a!.filter((e) => e.type === 'delta').map((e) => e.text).join('')).toBe(chunks.join(''));
    // The same events as the plain stream carried, seq and eventsUrl included: a client of the plain
    // stream resumes here from the last seq it saw.
    expect(a).toEqual(streamed);
    expect(a!.at(-1)).toMatchObject({ type: 'done', error: null, generation: { content: chunks.join('') }, receipt: { outcome: 'settled' } });
    expect(provider.calls).toHaveLength(1);

    const view = (await (await getGeneration(generationId)).json()) as { kind: string; data: Record<string, unknown> };
    expect(view.kind).toBe('service.intelligence-generation');
    expect(view.data).toMatchObject({
      generationId,
      operation: 'generate',
      status: 'completed',
      lastSeq: chunks.length + 2,
      eventsUrl: `/api/product/v1/intelligence/generations/${generationId}/events`,
      result: { content: chunks.join(''), generationId },
      error: null,
      receipt: { id: generationId, outcome: 'settled' },
    });
  });

  it('after=N and Last-Event-ID: N answer exactly the events after N, at once once it ended; after the last, 204', async () => {
    const { generationId } = await finishedGeneration();
    const all = await readNdjson(await getEvents(generationId));
    expect(all.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (let n = 0; n < all.length; n += 1) {
      const byQuery = await readNdjson(await getEvents(generationId, { query: `?after=${n}` }));
      const byHeader = await readNdjson(await getEvents(generationId, { headers: { 'last-event-id': String(n) } }));
      const both = await readNdjson(await getEvents(generationId, { query: `?after=${n}`, headers: { 'last-event-id': String(n) } }));
      expect(byQuery).toEqual(all.slice(n));
      expect(byHeader).toEqual(all.slice(n));
      expect(both).toEqual(all.slice(n));
    }
    const end = await getEvents(generationId, { query: `?after=${all.length}` });
    expect(end.status).toBe(204);
    expect(await end.text()).toBe('');
  });

  it('text/event-stream: id is the seq, event the type, data the event; EventSource reconnects with Last-Event-ID', async () => {
    const { generationId } = await finishedGeneration();
    const all = await readNdjson(await getEvents(generationId));
    const res = await getEvents(generationId, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const messages = await readSse(res);
    expect(messages.map((m) => m.data)).toEqual(all);
    expect(messages.map((m) => m.id)).toEqual(all.map((e) => String(e.seq)));
    expect(messages.map((m) => m.event)).toEqual(all.map((e) => e.type));
    const resumed = await readSse(await getEvents(generationId, { headers: { accept: 'text/event-stream', 'last-event-id': '4' } }));
    expect(resumed.map((m) => m.data)).toEqual(all.slice(4));
    // After done, an EventSource's reconnect is told to stop (204).
    expect((await getEvents(generationId, { headers: { accept: 'text/event-stream', 'last-event-id': String(all.length) } })).status).toBe(204);
  });

  it('a provider stream that breaks off ends the log with its done (the error and the billable receipt); the generation failed', async () => {
    provider.script({ kind: 'drop', chunks: ['half '] });
    const streamed = await readNdjson(await startStream());
    const generationId = streamed[0]!.generationId!;
    const logged = await readNdjson(await getEvents(generationId));
    expect(logged.map((e) => e.type)).toEqual(['ready', 'delta', 'done']);
    expect(logged[2]).toMatchObject({ seq: 3, generation: null, error: { code: 'intelligence_interrupted' }, receipt: { outcome: 'billable_failure' } });
    const view = ((await (await getGeneration(generationId)).json()) as { data: Record<string, unknown> }).data;
    expect(view).toMatchObject({ status: 'failed', error: { code: 'intelligence_interrupted' }, result: null, receipt: { outcome: 'billable_failure' } });
  });

  it('past retention the events answer 410 generation_expired; the generation keeps its status and receipt; the sweep gives the rows back', async () => {
    const { generationId } = await finishedGeneration();
    await ctx.db.pool.query(sql.type(z.object({}))`UPDATE intelligence_generations SET events_expire_at = now() - interval '1 second' WHERE generation_id = ${generationId}`);
    for (const headers of [{}, { accept: 'text/event-stream' }, { 'last-event-id': '3' }] as Record<string, string>[]) {
      const res = await getEvents(generationId, { headers });
      expect(res.status).toBe(410);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await res.json()).toMatchObject({ status: 410, code: 'generation_expired' });
    }
    const view = await getGeneration(generationId);
    expect(view.status).toBe(200);
    expect(((await view.json()) as { data: Record<string, unknown> }).data).toMatchObject({ status: 'completed', receipt: { outcome: 'settled' } });
    const count = sql.type(z.object({ n: z.number() }))`SELECT count(*)::integer AS n FROM intelligence_generation_events WHERE generation_id = ${generationId}`;
    expect((await ctx.db.pool.one(count)).n).toBe(7);
    expect(await sweepExpiredEvents(ctx.db.pool)).toBeGreaterThanOrEqual(7);
    expect((await ctx.db.pool.one(count)).n).toBe(0);
  });
});

describe('the plain stream through the SDK', () => {
  it("generateStream's events carry seq and ready names eventsUrl; reading there after the SDK's last seq answers nothing more", async () => {
    provider.script({ kind: 'chat', chunks: ['A ', 'B.'] });
    const runtime = createHostedRuntime({ baseUrl: ctx.url, credential: chain.secret });
    const events = [];
    for await (const event of runtime.generateStream(generateBody() as GenerateInput)) events.push(event);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    const ready = events[0]!;
    if (ready.type !== 'ready') throw new Error('the stream starts with ready');
    expect(ready.eventsUrl).toBe(`/api/product/v1/intelligence/generations/${ready.generationId}/events`);
    // The log is closed behind the stream: once it is, after the last seq there is nothing (204).
    const { generationId } = ready;
    for (;;) {
      const body = (await (await getGeneration(generationId)).json()) as { data: { status: string } };
      if (body.data.status === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await getEvents(generationId, { headers: { 'last-event-id': '4' } })).status).toBe(204);
    expect(await readNdjson(await getEvents(generationId, { headers: { 'last-event-id': '2' } }))).toEqual(events.slice(2));
  });
});

describe('who may read a generation', () => {
  it("another installation's and another organization's generation answer exactly like a missing one", async () => {
    const { generationId } = await finishedGeneration();
    const missing = randomUUID();
    const shape = async (res: Response) => {
      const body = (await res.json()) as Record<string, unknown>;
      return { status: res.status, type: body['type'], title: body['title'], code: body['code'], detail: body['detail'] };
    };
    const expected = await shape(await getGeneration(missing));
    expect(expected).toMatchObject({ status: 404, code: 'generation_not_found' });
    for (const secret of [sibling.secret, stranger.secret]) {
      expect(await shape(await getGeneration(generationId, secret))).toEqual(expected);
      expect(await shape(await getEvents(generationId, { secret }))).toEqual(await shape(await getEvents(missing, { secret })));
      expect(await shape(await getEvents(generationId, { secret }))).toEqual({ ...expected });
    }
    // Not a UUID: missing too, not a validation error.
    expect(await shape(await getGeneration('not-a-generation'))).toEqual(expected);
    // The owner still reads it.
    expect((await getGeneration(generationId)).status).toBe(200);
  });

  it('without the credential the answer is 401 before anything about the generation is said', async () => {
    const res = await fetch(`${ctx.url}/api/product/v1/intelligence/generations/${randomUUID()}/events`, { headers: { 'x-service-runtime-version': '1' } });
    expect(res.status).toBe(401);
  });
});

describe('malformed requests', () => {
  it.each([
    ['?after=-1', {}],
    ['?after=abc', {}],
    ['?after=1.5', {}],
    ['?after=01', {}],
    ['?after=+1', {}],
    ['?after=', {}],
    ['?after=99999999999', {}],
    ['?after=2147483648', {}],
    ['?after=1&after=2', {}],
    ['', { 'last-event-id': 'garbage' }],
    ['', { 'last-event-id': '-3' }],
    ['', { 'last-event-id': '3, 4' }],
    ['?after=2', { 'last-event-id': '3' }],
  ])('%s %j is 400 generation_position_invalid', async (query, headers) => {
    const { generationId } = await finishedGeneration(['x']);
    const res = await getEvents(generationId, { query, headers });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'generation_position_invalid' });
  });

  it('an offset past the end of a finished generation is 400; an unknown query parameter is 400 invalid_request', async () => {
    const { generationId } = await finishedGeneration(['x']);
    const past = await getEvents(generationId, { query: '?after=4' });
    expect(past.status).toBe(400);
    expect(await past.json()).toMatchObject({ code: 'generation_position_invalid' });
    const unknown = await getEvents(generationId, { query: '?from=1' });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ code: 'invalid_request' });
  });

  it.each(['text/html', 'application/json', 'image/png, text/plain', 'application/x-ndjson;q=0'])('Accept: %s is 406 generation_events_not_acceptable', async (accept) => {
    const res = await getEvents(randomUUID(), { headers: { accept } });
    expect(res.status).toBe(406);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ code: 'generation_events_not_acceptable' });
  });

  it('Accept: */*, application/* or none is NDJSON; text/* is SSE', async () => {
    const { generationId } = await finishedGeneration(['x']);
    for (const accept of ['*/*', 'application/*', 'text/html;q=0.9, */*;q=0.1']) {
      expect((await getEvents(generationId, { headers: { accept } })).headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    }
    expect((await getEvents(generationId, { headers: { accept: 'text/*' } })).headers.get('content-type')).toMatch(/^text\/event-stream/);
  });
});

describe('the bound on event streams', () => {
  it('a process serves at most its maximum of event streams at once; the next is 503 generation_readers_exhausted with Retry-After; an ended one frees its place', () => {
    const wakes = new GenerationWakes(null, 2);
    const first = wakes.admitReader();
    const second = wakes.admitReader();
    expect(wakes.readers).toBe(2);
    let refused: unknown;
    try {
      wakes.admitReader();
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'generation_readers_exhausted', status: 503, headers: { 'retry-after': '5' } });
    first();
    first(); // released twice: one place only
    expect(wakes.readers).toBe(1);
    const third = wakes.admitReader();
    expect(wakes.readers).toBe(2);
    second();
    third();
    expect(wakes.readers).toBe(0);
  });
});

describe('a database outage while the log is written', () => {
  it('a write that finds Postgres unreachable is retried: the events land in order with no gap, and the log closes', async () => {
    const { generationId } = await finishedGeneration(['x']);
    const target = new URL(ctx.db.url);
    const proxy = new TcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    await proxy.start();
    const pool = await createDatabasePool(proxy.urlThrough(ctx.db.url), { maxPoolSize: 2, connectionTimeoutMs: 1_000 });
    // The writer's statements, observed: the test restarts Postgres's proxy only after one failed.
    let failed!: () => void;
    const aWriteFailed = new Promise<void>((resolve) => (failed = resolve));
    const observed = new Proxy(pool, {
      get(target_, property, receiver) {
        if (property !== 'query') return Reflect.get(target_, property, receiver) as unknown;
        return (...args: Parameters<DatabasePool['query']>) => {
          const result = target_.query(...args);
          result.catch(() => failed());
          return result;
        };
      },
    });
    try {
      const writer = await GenerationLogWriter.open(observed, { generationId, organizationId: chain.organizationId, installationId: chain.installationId, background: true }, { warn: () => undefined });
      writer.running();
      writer.append({ type: 'ready', generationId, reservedMicrodollars: 1, replayed: false });
      await writer.flushed();
      await proxy.stop();
      for (const text of ['one ', 'two ', 'three ']) writer.append({ type: 'delta', text });
      await aWriteFailed;
      await proxy.start();
      writer.append({ type: 'delta', text: 'four' });
      await writer.finish('completed', { type: 'done', generation: null, error: null, receipt: null });
      const logged = await readNdjson(await getEvents(generationId));
      expect(logged.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(logged.filter((e) => e.type === 'delta').map((e) => e.text).join('')).toBe('one two three four');
      expect(((await (await getGeneration(generationId)).json()) as { data: { status: string; lastSeq: number } }).data).toMatchObject({ lastSeq: 6 });
    } finally {
      await pool.end();
      await proxy.close();
    }
  });
});
