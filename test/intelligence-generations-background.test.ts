// Background generations and cancel (issue 48, step 2; the pump still in the API process), over real
// HTTP against a scripted provider: Prefer: respond-async answers 202 with Location and
// Preference-Applied and the generation runs with no connection holding it; the same key answers the
// same generation; a reader that leaves cancels nothing; POST …/cancel closes the upstream request,
// keeps the text so far, charges what the docs say, and is idempotent; one model call and one
// settlement per generation throughout.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp } from './support/app.ts';
import { createHostedRuntime, RuntimeUnavailableError } from '@hosted-notes/runtime-sdk';
import type { GenerateInput } from '@hosted-notes/runtime-sdk';
import { createLocalRuntime } from '@hosted-notes/runtime-sdk/local';
import { useTestAppWithWorker } from './support/harness.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';
import { generateBody, orgLedger, reservations, setBudget } from './support/intelligence.ts';
import { useScriptedProvider } from './support/use-scripted-provider.ts';
import { readNdjson as readNdjsonOf } from './support/ndjson.ts';

const provider = useScriptedProvider();
const ctx = useTestAppWithWorker({ name: 'intelligence-generations-bg', listen: true, overrides: () => ({ intelligence: provider.intelligence() }) });

let chain: RuntimeChain;
let sibling: RuntimeChain;
beforeAll(async () => {
  chain = await buildRuntimeChain(ctx.db.pool);
  sibling = await buildRuntimeChain(ctx.db.pool, { organization: { id: chain.organizationId, workspaceId: chain.workspaceId } });
  await setBudget(ctx.db.pool, chain.organizationId, 10_000_000, 50);
});
beforeEach(() => provider.reset());

type Event = { type: string; seq: number; text?: string; generation?: Record<string, unknown> | null; error?: { code: string } | null; receipt?: Record<string, unknown> };
type View = { generationId: string; status: string; lastSeq: number; cancelRequestedAt: string | null; error: { code: string } | null; receipt: Record<string, unknown> | null; result: Record<string, unknown> | null; eventsUrl: string };

const headersOf = (secret: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${secret}`, 'x-service-runtime-version': '1', ...extra });
const api = (path: string) => `${ctx.url}${path.startsWith('/api/') ? '' : '/api/product/v1'}${path}`;

const generate = (headers: Record<string, string>, key = randomUUID()) =>
  fetch(api('/intelligence/education/generate'), {
    method: 'POST',
    headers: headersOf(chain.secret, { 'content-type': 'application/json', 'idempotency-key': key, ...headers }),
    body: JSON.stringify(generateBody()),
  });

async function startBackground(key = randomUUID(), prefer = 'respond-async') {
  const res = await generate({ prefer }, key);
  expect(res.status).toBe(202);
  const body = (await res.json()) as { kind: string; data: View };
  return { res, body, view: body.data };
}

const view = async (id: string, secret = chain.secret) => {
  const res = await fetch(api(`/intelligence/generations/${id}`), { headers: headersOf(secret) });
  return { status: res.status, body: (await res.json()) as { data: View; code?: string } };
};

const cancel = (id: string, secret = chain.secret) => fetch(api(`/intelligence/generations/${id}/cancel`), { method: 'POST', headers: headersOf(secret) });

const readNdjson = (response: Response, onEvent?: (event: Event) => void | Promise<void>) => readNdjsonOf<Event>(response, onEvent);

const events = (id: string, after = 0, signal?: AbortSignal) => fetch(api(`/intelligence/generations/${id}/events?after=${after}`), { headers: headersOf(chain.secret), ...(signal ? { signal } : {}) });

/** A gate a scripted provider waits on. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('Prefer: respond-async', () => {
  it('answers 202 with Location, Preference-Applied and the generation; it runs to the end with nobody connected; one call, one settlement', async () => {
    const chunks = ['Sort ', 'the ', 'fraction ', 'cards.'];
    provider.script({ kind: 'chat', chunks });
    const { res, body, view: started } = await startBackground();
    const id = started.generationId;
    expect(res.headers.get('location')).toBe(`/api/product/v1/intelligence/generations/${id}`);
    expect(res.headers.get('preference-applied')).toBe('respond-async');
    expect(body.kind).toBe('service.intelligence-generation');
    expect(['queued', 'running']).toContain(started.status);
    expect(started.eventsUrl).toBe(`/api/product/v1/intelligence/generations/${id}/events`);

    const logged = await readNdjson(await fetch(api(started.eventsUrl), { headers: headersOf(chain.secret) }));
    expect(logged.map((e) => e.type)).toEqual(['ready', 'delta', 'delta', 'delta', 'delta', 'done']);
    expect(logged.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(logged.filter((e) => e.type === 'delta').map((e) => e.text).join('')).toBe(chunks.join(''));
    const done = (await view(id)).body.data;
    expect(done).toMatchObject({ status: 'completed', result: { content: chunks.join('') }, receipt: { outcome: 'settled' }, error: null });
    expect(provider.calls).toHaveLength(1);
    const rows = (await reservations(ctx.db.pool, chain.installationId)).filter((r) => r.id === id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.state).toBe('settled');
  });

  it('the same key answers the same generation, while it runs and after it completed, with no second call', async () => {
    const held = gate();
    provider.script({ kind: 'chat', chunks: ['One.'], holdUntil: held.opened });
    const key = randomUUID();
    const first = (await startBackground(key)).view;
    await provider.waitForCalls(1);
    const again = await startBackground(key);
    expect(again.view.generationId).toBe(first.generationId);
    expect(again.res.headers.get('location')).toBe(`/api/product/v1/intelligence/generations/${first.generationId}`);
    held.open();
    await readNdjson(await events(first.generationId));
    const after = await startBackground(key);
    expect(after.view).toMatchObject({ generationId: first.generationId, status: 'completed', receipt: { outcome: 'settled' } });
    // Other preferences beside it, any case: still background.
    const mixed = await startBackground(key, 'wait=5, Respond-Async');
    expect(mixed.view.generationId).toBe(first.generationId);
    expect(provider.calls).toHaveLength(1);
    // Another body under the same key is refused as before.
    const other = await fetch(api('/intelligence/education/generate'), {
      method: 'POST',
      headers: headersOf(chain.secret, { 'content-type': 'application/json', 'idempotency-key': key, prefer: 'respond-async' }),
      body: JSON.stringify(generateBody('Something else entirely.')),
    });
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ code: 'idempotency_key_reused' });
  });

  it('a preference that is not respond-async is not applied: the plain JSON answer', async () => {
    const res = await generate({ prefer: 'respond-asynchronously, return=minimal' });
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBeNull();
    expect(((await res.json()) as { kind: string }).kind).toBe('service.generation');
  });

  it('a reader that leaves cancels nothing: the generation completes and the provider saw no abort', async () => {
    const resume = gate();
    const chunks = Array.from({ length: 6 }, (_, i) => `step ${i} `);
    provider.script({ kind: 'chat', chunks, beforeChunk: (i) => (i < 2 ? Promise.resolve() : resume.opened) });
    const { view: started } = await startBackground();
    const reader = new AbortController();
    const partial = await readNdjson(await events(started.generationId, 0, reader.signal), (event) => {
      if (event.type === 'delta' && event.seq === 3) reader.abort();
    }).catch(() => 'aborted');
    expect(partial).toBe('aborted');
    resume.open();
    const rest = await readNdjson(await events(started.generationId, 3));
    expect(rest.map((e) => e.seq)).toEqual([4, 5, 6, 7, 8]);
    expect(rest.at(-1)).toMatchObject({ type: 'done', error: null, generation: { content: chunks.join('') } });
    expect(provider.aborts).toHaveLength(0);
    expect((await view(started.generationId)).body.data.status).toBe('completed');
  });
});

describe('cancel', () => {
  it('closes the upstream request mid-stream, keeps the text so far, charges the bound (no usage was reported), and is idempotent', async () => {
    const before = await orgLedger(ctx.db.pool, chain.organizationId);
    provider.script({ kind: 'stall', chunks: ['Kept ', 'so ', 'far.'] });
    const { view: started } = await startBackground();
    const id = started.generationId;
    // Follow until the three deltas are logged, then cancel.
    const seen: Event[] = [];
    const following = readNdjson(await events(id), (event) => {
      seen.push(event);
    });
    while (seen.filter((e) => e.type === 'delta').length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    const sentAt = performance.now();
    const answer = await cancel(id);
    expect(answer.status).toBe(200);
    const asked = ((await answer.json()) as { data: View }).data;
    expect(asked.cancelRequestedAt).not.toBeNull();
    await provider.waitForAborts(1);
    // The upstream request closed after the cancel was sent (an order, not a timing).
    expect(provider.aborts[0]!.at).toBeGreaterThanOrEqual(sentAt);
    const logged = await following;
    expect(logged.map((e) => e.type)).toEqual(['ready', 'delta', 'delta', 'delta', 'done']);
    expect(logged.filter((e) => e.type === 'delta').map((e) => e.text).join('')).toBe('Kept so far.');
    const done = logged.at(-1)!;
    expect(done).toMatchObject({ generation: null, error: { code: 'generation_cancelled' }, receipt: { outcome: 'billable_failure', outcomeCode: 'generation_cancelled' } });
    expect(done.receipt!['costMicrodollars']).toBe(done.receipt!['reservedMicrodollars']);

    const final = (await view(id)).body.data;
    expect(final).toMatchObject({ status: 'cancelled', error: { code: 'generation_cancelled' }, result: null, receipt: { outcome: 'billable_failure' } });
    // Again: the same answer, nothing moves, the first ask's time stands.
    const repeat = await cancel(id);
    expect(repeat.status).toBe(200);
    expect(((await repeat.json()) as { data: View }).data).toMatchObject({ status: 'cancelled', cancelRequestedAt: asked.cancelRequestedAt, lastSeq: final.lastSeq });
    expect(provider.calls).toHaveLength(1);
    const row = (await reservations(ctx.db.pool, chain.installationId)).find((r) => r.id === id)!;
    expect(row).toMatchObject({ state: 'billable_failure', outcomeCode: 'generation_cancelled' });
    expect(row.charged).toBe(row.reserved);
    expect(await orgLedger(ctx.db.pool, chain.organizationId)).toEqual({ committed: before.committed + row.reserved, inFlight: 0 });
  });

  it('before the provider accepted: released, nothing charged, no events; the events answer 204', async () => {
    const never = gate();
    provider.script({ kind: 'chat', chunks: ['never'], holdUntil: never.opened });
    const { view: started } = await startBackground();
    await provider.waitForCalls(1);
    expect((await cancel(started.generationId)).status).toBe(200);
    await provider.waitForAborts(1);
    let final = (await view(started.generationId)).body.data;
    while (final.status === 'queued' || final.status === 'running') {
      await new Promise((resolve) => setTimeout(resolve, 10));
      final = (await view(started.generationId)).body.data;
    }
    expect(final).toMatchObject({ status: 'cancelled', lastSeq: 0, error: { code: 'generation_cancelled' }, receipt: null, result: null });
    const row = (await reservations(ctx.db.pool, chain.installationId)).find((r) => r.id === started.generationId)!;
    expect(row).toMatchObject({ state: 'released', outcomeCode: 'generation_cancelled', charged: 0 });
    expect((await events(started.generationId)).status).toBe(204);
    never.open();
  });

  it('cancels a plain stream too: its reader gets done with generation_cancelled', async () => {
    provider.script({ kind: 'stall', chunks: ['Half '] });
    const res = await generate({ accept: 'application/x-ndjson' });
    let generationId = '';
    const streamed = await readNdjson(res, async (event) => {
      if (event.type === 'ready') generationId = (event as Event & { generationId: string }).generationId;
      if (event.type === 'delta') expect((await cancel(generationId)).status).toBe(200);
    });
    expect(streamed.map((e) => e.type)).toEqual(['ready', 'delta', 'done']);
    expect(streamed.at(-1)).toMatchObject({ error: { code: 'generation_cancelled' }, receipt: { outcome: 'billable_failure' } });
  });

  it("another installation's generation answers like a missing one and is not cancelled; a finished one stays as it is", async () => {
    provider.script({ kind: 'chat', chunks: ['Done.'] });
    const { view: started } = await startBackground();
    await readNdjson(await events(started.generationId));
    const missing = await cancel(randomUUID());
    const foreign = await cancel(started.generationId, sibling.secret);
    expect(missing.status).toBe(404);
    const missingBody = (await missing.json()) as Record<string, unknown>;
    const foreignBody = (await foreign.json()) as Record<string, unknown>;
    expect(foreign.status).toBe(404);
    expect({ code: foreignBody['code'], title: foreignBody['title'], detail: foreignBody['detail'] }).toEqual({ code: missingBody['code'], title: missingBody['title'], detail: missingBody['detail'] });
    expect(missingBody['code']).toBe('generation_not_found');
    const finished = await cancel(started.generationId);
    expect(finished.status).toBe(200);
    expect(((await finished.json()) as { data: View }).data).toMatchObject({ status: 'completed', cancelRequestedAt: null, receipt: { outcome: 'settled' } });
  });
});

describe('through the SDK', () => {
  it('getGeneration, streamGeneration from an offset and cancelGeneration parse what the service answers; the local adapter has none', async () => {
    const chunks = ['Count ', 'by ', 'quarters.'];
    provider.script({ kind: 'chat', chunks });
    const runtime = createHostedRuntime({ baseUrl: ctx.url, credential: chain.secret });
    const { view: started } = await startBackground();
    const all = [];
    for await (const event of runtime.streamGeneration(started.generationId)) all.push(event);
    expect(all.map((e) => [e.type, e.seq])).toEqual([['ready', 1], ['delta', 2], ['delta', 3], ['delta', 4], ['done', 5]]);
    const rest = [];
    for await (const event of runtime.streamGeneration(started.generationId, { after: 3 })) rest.push(event);
    expect(rest).toEqual(all.slice(3));
    const none = [];
    for await (const event of runtime.streamGeneration(started.generationId, { after: 5 })) none.push(event);
    expect(none).toEqual([]);
    const got = await runtime.getGeneration(started.generationId);
    expect(got.data).toMatchObject({ status: 'completed', result: { content: chunks.join('') }, receipt: { outcome: 'settled' } });
    const cancelled = await runtime.cancelGeneration(started.generationId);
    expect(cancelled.data).toMatchObject({ status: 'completed', cancelRequestedAt: null });
    await expect(runtime.getGeneration(randomUUID())).rejects.toMatchObject({ code: 'generation_not_found', status: 404 });

    // startGeneration: background mode through the SDK; the same key answers the same generation.
    provider.script({ kind: 'chat', chunks: ['Started.'] });
    const key = randomUUID();
    const bg = await runtime.startGeneration(generateBody() as GenerateInput, { idempotencyKey: key });
    expect(bg.data).toMatchObject({ status: expect.stringMatching(/^(queued|running)$/), background: true });
    const bgEvents = [];
    for await (const event of runtime.streamGeneration(bg.data!.generationId)) bgEvents.push(event);
    expect(bgEvents.at(-1)).toMatchObject({ type: 'done', error: null });
    expect((await runtime.startGeneration(generateBody() as GenerateInput, { idempotencyKey: key })).data).toMatchObject({ generationId: bg.data!.generationId, status: 'completed' });

    const local = createLocalRuntime({ root: '/nonexistent-vault-for-generations' });
    expect((await local.startGeneration(generateBody() as GenerateInput)).status).toBe('unavailable');
    expect((await local.getGeneration(started.generationId)).status).toBe('unavailable');
    expect((await local.cancelGeneration(started.generationId)).status).toBe('unavailable');
    await expect(local.streamGeneration(started.generationId).next()).rejects.toBeInstanceOf(RuntimeUnavailableError);
  });
});

describe('streamGeneration over a connection that breaks', () => {
  it('reads again from the last seq it saw: the caller sees one unbroken sequence, the generation is not touched', async () => {
    const resume = gate();
    const chunks = ['a ', 'b ', 'c ', 'd ', 'e.'];
    provider.script({ kind: 'chat', chunks, beforeChunk: (i) => (i < 2 ? Promise.resolve() : resume.opened) });
    const { view: started } = await startBackground();
    // The first read of the events is cut after its third line (ready and two deltas), as a network break would.
    const requested: string[] = [];
    let cut = false;
    const runtime = createHostedRuntime({
      baseUrl: ctx.url,
      credential: chain.secret,
      fetch: async (input, init) => {
        const url = String(input);
        requested.push(new URL(url).search);
        const response = await fetch(input, init);
        if (cut || !url.includes('/events') || !response.body) return response;
        cut = true;
        const reader = response.body.getReader();
        let lines = 0;
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            const { done, value } = await reader.read();
            if (done) return controller.close();
            controller.enqueue(value);
            lines += new TextDecoder().decode(value).split('\n').length - 1;
            if (lines >= 3) {
              await reader.cancel();
              controller.error(new TypeError('terminated'));
              resume.open();
            }
          },
        });
        return new Response(body, { status: response.status, headers: response.headers });
      },
    });
    const events = [];
    for await (const event of runtime.streamGeneration(started.generationId)) events.push(event);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(events.flatMap((e) => (e.type === 'delta' ? [e.text] : [])).join('')).toBe(chunks.join(''));
    expect(requested.filter((q) => q !== '')).toEqual(['?after=3']);
    expect(provider.calls).toHaveLength(1);
    expect(provider.aborts).toHaveLength(0);
  });
});

describe('two API processes', () => {
  // A second app on the same database and task queue: another API process as far as Postgres and
  // Temporal can tell (its own pool of listeners, its own pumps).
  let other: FastifyInstance;
  let otherUrl = '';
  beforeAll(async () => {
    other = await buildTestApp(ctx.db.pool, { temporal: { connection: ctx.temporal, namespace: 'default', taskQueue: ctx.taskQueue }, intelligence: provider.intelligence() });
    await other.listen({ host: '127.0.0.1', port: 0 });
    const address = other.server.address();
    otherUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await other?.close();
  });

  it('a generation pumped by one API is followed live through the other, each chunk sent only after that reader saw the last', async () => {
    let seen = 0;
    const waiters: (() => void)[] = [];
    const sawDelta = (n: number) => new Promise<void>((resolve) => (seen >= n ? resolve() : waiters.push(resolve)));
    const chunks = Array.from({ length: 8 }, (_, i) => `line ${i}\n`);
    provider.script({ kind: 'chat', chunks, beforeChunk: (i) => sawDelta(i) });
    const { view: started } = await startBackground();
    const res = await fetch(`${otherUrl}${started.eventsUrl}`, { headers: headersOf(chain.secret) });
    const logged = await readNdjson(res, (event) => {
      if (event.type === 'delta') {
        seen += 1;
        waiters.splice(0).forEach((w) => w());
      }
    });
    expect(logged.map((e) => e.seq)).toEqual(Array.from({ length: chunks.length + 2 }, (_, i) => i + 1));
    expect(logged.filter((e) => e.type === 'delta').map((e) => e.text).join('')).toBe(chunks.join(''));
    expect(logged.at(-1)).toMatchObject({ type: 'done', error: null });
    expect(provider.calls).toHaveLength(1);
  });

  it('a cancel sent to the other API reaches the pump through the announcement and closes the upstream request', async () => {
    provider.script({ kind: 'stall', chunks: ['Elsewhere '] });
    const { view: started } = await startBackground();
    const id = started.generationId;
    const seen: Event[] = [];
    const following = readNdjson(await events(id), (event) => {
      seen.push(event);
    });
    while (!seen.some((e) => e.type === 'delta')) await new Promise((resolve) => setTimeout(resolve, 10));
    const sentAt = performance.now();
    const answer = await fetch(`${otherUrl}/api/product/v1/intelligence/generations/${id}/cancel`, { method: 'POST', headers: headersOf(chain.secret) });
    expect(answer.status).toBe(200);
    await provider.waitForAborts(1);
    expect(provider.aborts[0]!.at).toBeGreaterThanOrEqual(sentAt);
    const logged = await following;
    // Cancelled, not the provider deadline (10 s in these settings) ending the stall.
    expect(logged.at(-1)).toMatchObject({ type: 'done', error: { code: 'generation_cancelled' }, receipt: { outcomeCode: 'generation_cancelled' } });
    expect((await view(id)).body.data.status).toBe('cancelled');
  });
});

describe('closing an API', () => {
  it('waits for the background generations it pumps: they complete rather than being cut', async () => {
    const app = await buildTestApp(ctx.db.pool, { temporal: { connection: ctx.temporal, namespace: 'default', taskQueue: ctx.taskQueue }, intelligence: provider.intelligence() });
    const resume = gate();
    provider.script({ kind: 'chat', chunks: ['Before ', 'close, ', 'after close.'], beforeChunk: (i) => (i < 1 ? Promise.resolve() : resume.opened) });
    const started = await app.inject({
      method: 'POST',
      url: '/api/product/v1/intelligence/education/generate',
      headers: headersOf(chain.secret, { 'content-type': 'application/json', 'idempotency-key': randomUUID(), prefer: 'respond-async' }),
      payload: generateBody(),
    });
    expect(started.statusCode).toBe(202);
    const id = (JSON.parse(started.body) as { data: View }).data.generationId;
    await provider.waitForCalls(1);
    let closed = false;
    const closing = app.close().then(() => {
      closed = true;
    });
    // The close is held by the generation (it cannot finish before the provider is let go).
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    resume.open();
    await closing;
    const final = (await view(id)).body.data;
    expect(final).toMatchObject({ status: 'completed', result: { content: 'Before close, after close.' } });
    expect(provider.aborts).toHaveLength(0);
  });
});
