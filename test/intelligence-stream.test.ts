// Streaming generation over real HTTP (the app listening on loopback, fetch as the client):
// ready → delta… → done, each flushed as it happens; a client that leaves aborts the upstream
// request and the request is recorded as a billable failure; refusals before acceptance are
// still problem+json; generate-image answers checked bytes.
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { useTestAppWithWorker } from './support/harness.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';
import { SCRIPTED_API_KEY, tinyImages } from './support/scripted-provider.ts';
import { generateBody, imageBody, orgLedger, reservations, setBudget } from './support/intelligence.ts';
import { useScriptedProvider } from './support/use-scripted-provider.ts';

const provider = useScriptedProvider();
const ctx = useTestAppWithWorker({ name: 'intelligence-stream', listen: true, overrides: () => ({ intelligence: provider.intelligence() }) });

let chain: RuntimeChain;
beforeAll(async () => {
  chain = await buildRuntimeChain(ctx.db.pool);
  await setBudget(ctx.db.pool, chain.organizationId, 10_000_000, 50);
});
beforeEach(() => provider.reset());

const post = (path: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(`${ctx.url}/api/product/v1${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${chain.secret}`,
      'x-service-runtime-version': '1',
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
      ...headers,
    },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });

type Event = { type: string; text?: string; generation?: Record<string, unknown> | null; error?: { code: string } | null; receipt?: Record<string, unknown> };

/** Reads NDJSON lines as they arrive, calling `onEvent` for each before reading on. */
async function readEvents(response: Response, onEvent: (event: Event) => void | Promise<void> = () => undefined): Promise<Event[]> {
  const events: Event[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let newline;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const event = JSON.parse(buffered.slice(0, newline)) as Event;
      buffered = buffered.slice(newline + 1);
      events.push(event);
      await onEvent(event);
    }
  }
  return events;
}

describe('NDJSON stream', () => {
  it('sends ready, each delta as the provider produces it, and done with the generation, model and receipt', async () => {
    // The provider sends chunk i+1 only after the client has seen delta i: a buffered stream would never finish.
    const seen: string[] = [];
    const waiters: (() => void)[] = [];
    const sawDelta = (n: number) => new Promise<void>((resolve) => (seen.length >= n ? resolve() : waiters.push(resolve)));
    provider.script({ kind: 'chat', chunks: ['One ', 'two ', 'three.'], beforeChunk: (i) => (i === 0 ? Promise.resolve() : sawDelta(i)) });
    const res = await post('/intelligence/education/generate', generateBody(), { accept: 'application/x-ndjson' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-service-runtime-version')).toBe('1');
    const events = await readEvents(res, (event) => {
      if (event.type === 'delta') {
        seen.push(event.text!);
        waiters.splice(0).forEach((w) => w());
      }
    });
    expect(events.map((e) => e.type)).toEqual(['ready', 'delta', 'delta', 'delta', 'done']);
    expect(seen).toEqual(['One ', 'two ', 'three.']);
    const done = events.at(-1)!;
    expect(done.error).toBeNull();
    expect(done.generation).toMatchObject({ content: 'One two three.', model: { provider: 'openai-compatible' }, replayed: false });
    expect(done.receipt).toMatchObject({ outcome: 'settled', operation: 'generate' });
    expect(events[0]).toMatchObject({ type: 'ready', generationId: (done.receipt as { id: string }).id, replayed: false });
  });

  it('a client that disconnects mid-stream aborts the upstream request; the request is a billable failure, nothing stays held', async () => {
    provider.script({ kind: 'chat', chunks: Array.from({ length: 50 }, (_, i) => `part ${i} `), chunkDelayMs: 100 });
    const before = await orgLedger(ctx.db.pool, chain.organizationId);
    const controller = new AbortController();
    const res = await post('/intelligence/education/generate', generateBody(), { accept: 'application/x-ndjson' }, controller.signal);
    await readEvents(res, (event) => {
      if (event.type === 'delta') controller.abort();
    }).catch(() => undefined);
    await provider.waitForAborts(1);
    expect(provider.aborts[0]!.path).toBe('/v1/chat/completions');
    const row = await settledRow(chain.installationId);
    expect(row).toMatchObject({ state: 'billable_failure', outcomeCode: 'client_disconnected' });
    // Without reported usage the request was ambiguous: charged at its bound, not released.
    expect(row.charged).toBe(row.reserved);
    expect(await orgLedger(ctx.db.pool, chain.organizationId)).toEqual({ committed: before.committed + row.reserved, inFlight: 0 });
    expect(provider.calls).toHaveLength(1);
  });

  it('a provider stream that breaks off ends with done carrying the error and the billable receipt', async () => {
    provider.script({ kind: 'drop', chunks: ['half '] });
    const res = await post('/intelligence/education/generate', generateBody(), { accept: 'application/x-ndjson' });
    const events = await readEvents(res);
    expect(events.map((e) => e.type)).toEqual(['ready', 'delta', 'done']);
    expect(events[2]).toMatchObject({ generation: null, error: { code: 'intelligence_interrupted' }, receipt: { outcome: 'billable_failure' } });
  });

  it('a refusal before the provider accepted is a problem+json answer, not a stream', async () => {
    provider.script({ kind: 'error', status: 503 });
    const res = await post('/intelligence/education/generate', generateBody(), { accept: 'application/x-ndjson' });
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ code: 'intelligence_provider_error' });
  });

  it('the version is checked before anything is reserved; a missing header means 1', async () => {
    const bad = await post('/intelligence/education/generate', generateBody(), { accept: 'application/x-ndjson', 'x-service-runtime-version': '2' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'runtime_version_unsupported' });
    expect(provider.calls).toHaveLength(0);
    const headers = { accept: 'application/x-ndjson' };
    const res = await fetch(`${ctx.url}/api/product/v1/intelligence/education/generate`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${chain.secret}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify(generateBody()),
    });
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect((await readEvents(res)).at(-1)!.type).toBe('done');
  });

  it('the provider key travels only in the Authorization header to the provider; prompts go only to the provider', async () => {
    await (await post('/intelligence/education/generate', generateBody())).json();
    expect(provider.calls[0]!.authorization).toBe(`Bearer ${SCRIPTED_API_KEY}`);
    const sent = JSON.stringify(provider.calls[0]!.body);
    expect(sent).toContain('equivalent fractions');
  });
});

describe('generate-image', () => {
  it.each([
    ['png', tinyImages.png, 'image/png'],
    ['webp', tinyImages.webp, 'image/webp'],
    ['jpeg', tinyImages.jpeg, 'image/jpeg'],
  ] as const)('answers %s bytes recognized by their signature, alt text from the brief and the receipt; a retry replays', async (_name, bytes, mediaType) => {
    provider.script({ kind: 'image', bytes });
    const key = randomUUID();
    const res = await post('/intelligence/education/generate-image', imageBody(), { 'idempotency-key': key });
    expect(res.status).toBe(200);
    const image = ((await res.json()) as { data: Record<string, unknown> }).data;
    expect(image).toMatchObject({ mediaType, byteLength: bytes.length, altTextSource: 'brief', replayed: false, receipt: { outcome: 'settled', costMicrodollars: 40_000, usage: { images: 1 } } });
    expect(Buffer.from(image['base64'] as string, 'base64').equals(bytes)).toBe(true);
    expect(image['altText']).toContain('two eighths equal one quarter');
    const again = await post('/intelligence/education/generate-image', imageBody(), { 'idempotency-key': key });
    expect(((await again.json()) as { data: Record<string, unknown> }).data).toMatchObject({ generationId: image['generationId'], replayed: true, base64: image['base64'] });
    expect(provider.calls).toHaveLength(1);
    expect(provider.calls[0]!.body).toMatchObject({ model: 'scripted-image', n: 1, size: '1536x1024', output_format: 'png' });
  });

  it('bytes that are no image are a billable failure (the provider did the work), never returned', async () => {
    provider.script({ kind: 'image', bytes: Buffer.from('this is text, not a picture') });
    const res = await post('/intelligence/education/generate-image', imageBody());
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ code: 'intelligence_output_invalid', receipt: { outcome: 'billable_failure', costMicrodollars: 40_000 } });
  });
});

/** The last finished reservation of the installation, once its workflow recorded it. */
async function settledRow(installationId: string) {
  const client = new Client({ connection: ctx.temporal, namespace: 'default' });
  const last = (await reservations(ctx.db.pool, installationId)).at(-1)!;
  await client.workflow.getHandle(last.workflowId).result();
  return (await reservations(ctx.db.pool, installationId)).at(-1)!;
}
