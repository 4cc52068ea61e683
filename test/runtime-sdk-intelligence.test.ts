// Metered intelligence through the Runtime SDK, end to end: the hosted adapter over real HTTP to the
// app on loopback, a real worker recording usage on Temporal, and a scripted OpenAI-compatible
// provider whose call and abort counts show when the model was (and was not) called. Then the two
// answers that are not a model's: a service with no provider, and the local adapter.
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createHostedRuntime,
  generatedImageBytes,
  generateImageInputSchema,
  generateInputSchema,
  RuntimeUnavailableError,
} from '@hosted-notes/runtime-sdk';
import type { GenerationStreamEvent, HostedRuntime } from '@hosted-notes/runtime-sdk';
import { createLocalRuntime } from '@hosted-notes/runtime-sdk/local';
import { useTestApp, useTestAppWithWorker } from './support/harness.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';
import { SCRIPTED_MODEL, tinyImages } from './support/scripted-provider.ts';
import { generateBody, imageBody, reservations, setBudget } from './support/intelligence.ts';
import { expectEnvelope, expectRefusal } from './support/runtime-conformance.ts';
import { useScriptedProvider } from './support/use-scripted-provider.ts';

const provider = useScriptedProvider();
const ctx = useTestAppWithWorker({ name: 'runtime-sdk-intelligence', listen: true, overrides: () => ({ intelligence: provider.intelligence() }) });

const BUDGET = 10_000_000;
let chain: RuntimeChain;
let runtime: HostedRuntime;
beforeAll(async () => {
  chain = await buildRuntimeChain(ctx.db.pool);
  await setBudget(ctx.db.pool, chain.organizationId, BUDGET, 20);
  runtime = createHostedRuntime({ baseUrl: ctx.url, credential: chain.secret });
});
beforeEach(() => provider.reset());

// The shared helpers build plain objects; parsing them types them (and checks they are valid input).
const generateInput = (task?: string) => generateInputSchema.parse(generateBody(task));
const imageInput = () => generateImageInputSchema.parse(imageBody());

async function collect(stream: AsyncIterable<GenerationStreamEvent>): Promise<GenerationStreamEvent[]> {
  const events: GenerationStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

describe('hosted adapter: generate', () => {
  it('answers the settled generation as JSON, keyed by the SDK without the caller naming a key', async () => {
    provider.fallback = { kind: 'chat', chunks: ['Fold ', 'a strip ', 'in half.'], usage: { prompt_tokens: 120, completion_tokens: 30 } };
    const answer = await runtime.generate(generateInput());
    expectEnvelope('service.generation', answer);
    expect(answer).toMatchObject({ kind: 'service.generation', status: 'complete', missing: [] });
    expect(answer.data).toMatchObject({
      format: 'markdown',
      content: 'Fold a strip in half.',
      structured: null,
      finishReason: 'stop',
      model: { id: SCRIPTED_MODEL, provider: 'openai-compatible' },
      replayed: false,
      receipt: { operation: 'generate', outcome: 'settled', costMicrodollars: 240, installationId: chain.installationId },
    });
    expect(answer.data!.receipt.id).toBe(answer.data!.generationId);
    expect(provider.calls).toHaveLength(1);
  });

  it('generateStream yields ready, a delta per provider chunk, then done with the generation and its receipt', async () => {
    provider.script({ kind: 'chat', chunks: ['One ', 'two ', 'three.'] });
    const stream = runtime.generateStream(generateInput());
    expect(stream.idempotencyKey).toEqual(expect.any(String));
    const events = await collect(stream);
    expect(events.map((e) => e.type)).toEqual(['ready', 'delta', 'delta', 'delta', 'done']);
    expect(events.flatMap((e) => (e.type === 'delta' ? [e.text] : []))).toEqual(['One ', 'two ', 'three.']);
    const [ready, done] = [events[0]!, events.at(-1)!];
    if (ready.type !== 'ready' || done.type !== 'done') throw new Error('expected ready … done');
    expect(done.error).toBeNull();
    expect(done.generation).toMatchObject({ content: 'One two three.', replayed: false });
    expect(done.receipt).toMatchObject({ id: ready.generationId, outcome: 'settled', reservedMicrodollars: ready.reservedMicrodollars });
    expect(ready.replayed).toBe(false);
  });

  it("the stream's key replays the settled answer, as a stream and as JSON, with no second model call", async () => {
    provider.script({ kind: 'chat', chunks: ['Halves ', 'and quarters.'] });
    const first = runtime.generateStream(generateInput());
    const original = (await collect(first)).at(-1)!;
    if (original.type !== 'done' || !original.generation) throw new Error('expected a settled done event');
    expect(provider.calls).toHaveLength(1);

    const again = await collect(runtime.generateStream(generateInput(), { idempotencyKey: first.idempotencyKey }));
    expect(again.map((e) => e.type)).toEqual(['ready', 'delta', 'done']);
    expect(again[0]).toMatchObject({ type: 'ready', generationId: original.generation.generationId, replayed: true });
    expect(again[1]).toEqual({ type: 'delta', text: 'Halves and quarters.' });
    expect(again[2]).toMatchObject({ type: 'done', generation: { ...original.generation, replayed: true }, receipt: original.receipt });

    const json = await runtime.generate(generateInput(), { idempotencyKey: first.idempotencyKey });
    expect(json.data).toEqual({ ...original.generation, replayed: true });
    expect(provider.calls).toHaveLength(1);

    // The same key with another body is a refusal naming the key, not a second generation.
    const reused = await expectRefusal(runtime.generate(generateInput('Another task.'), { idempotencyKey: first.idempotencyKey }), 'idempotency_key_reused', 422);
    expect(reused.idempotencyKey).toBe(first.idempotencyKey);
    expect(provider.calls).toHaveLength(1);
  });

  it('breaking out of the stream loop closes the connection: the provider sees the abort and the request is a billable failure', async () => {
    provider.script({ kind: 'chat', chunks: Array.from({ length: 20 }, (_, i) => `part ${i} `), chunkDelayMs: 100 });
    const seen: GenerationStreamEvent[] = [];
    for await (const event of runtime.generateStream(generateInput())) {
      seen.push(event);
      if (event.type === 'delta') break;
    }
    expect(seen.map((e) => e.type)).toEqual(['ready', 'delta']);
    await provider.waitForAborts(1);
    expect(provider.aborts[0]!.path).toBe('/v1/chat/completions');

    const ready = seen[0]!;
    if (ready.type !== 'ready') throw new Error('expected ready first');
    // The usage workflow records the end; its result is the moment the receipt exists.
    const row = (await reservations(ctx.db.pool, chain.installationId)).find((r) => r.id === ready.generationId)!;
    await new Client({ connection: ctx.temporal, namespace: 'default' }).workflow.getHandle(row.workflowId).result();
    const receipt = await runtime.getUsageReceipt(ready.generationId);
    expect(receipt.data).toMatchObject({ id: ready.generationId, outcome: 'billable_failure', outcomeCode: 'client_disconnected' });
    expect(provider.calls).toHaveLength(1);
  });

  it('a provider stream that breaks off ends with a done event carrying the error and the billable receipt', async () => {
    provider.script({ kind: 'drop', chunks: ['half '] });
    const events = await collect(runtime.generateStream(generateInput()));
    expect(events.map((e) => e.type)).toEqual(['ready', 'delta', 'done']);
    expect(events[2]).toMatchObject({ generation: null, error: { code: 'intelligence_interrupted' }, receipt: { outcome: 'billable_failure' } });
  });

  it('a refusal before the provider accepted is a RuntimeError, from generate and from generateStream alike', async () => {
    provider.script({ kind: 'error', status: 429, retryAfter: '7' }, { kind: 'error', status: 429, retryAfter: '7' });
    const key = randomUUID();
    const refused = await expectRefusal(runtime.generate(generateInput(), { idempotencyKey: key }), 'intelligence_provider_rate_limited', 503);
    expect(refused.idempotencyKey).toBe(key);
    const stream = runtime.generateStream(generateInput());
    const streamed = await expectRefusal(collect(stream), 'intelligence_provider_rate_limited', 503);
    expect(streamed.idempotencyKey).toBe(stream.idempotencyKey);
  });
});

describe('hosted adapter: generateImage, usage receipts and the budget', () => {
  it('generateImage answers base64 bytes that decode to the PNG the provider made', async () => {
    provider.script({ kind: 'image', bytes: tinyImages.png });
    const answer = await runtime.generateImage(imageInput());
    expectEnvelope('service.generated-image', answer);
    const image = answer.data!;
    const bytes = generatedImageBytes(image);
    expect([...bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(Buffer.from(bytes).equals(tinyImages.png)).toBe(true);
    expect(image).toMatchObject({
      mediaType: 'image/png',
      byteLength: tinyImages.png.length,
      sha256: createHash('sha256').update(tinyImages.png).digest('hex'),
      altTextSource: 'brief',
      replayed: false,
      receipt: { operation: 'generate-image', outcome: 'settled', usage: { images: 1 } },
    });
    expect(provider.calls.map((c) => c.path)).toEqual(['/v1/images/generations']);
  });

  it('listUsageReceipts pages newest first, getUsageReceipt reads one, getIntelligenceBudget reports the month', async () => {
    const first = await runtime.generate(generateInput('first'));
    const second = await runtime.generate(generateInput('second'));
    const page = await runtime.listUsageReceipts({ limit: 1 });
    expectEnvelope('service.product-intelligence-usage-list', page);
    expect(page.data!.receipts.map((r) => r.id)).toEqual([second.data!.generationId]);
    const next = await runtime.listUsageReceipts({ limit: 1, cursor: page.data!.nextCursor! });
    expect(next.data!.receipts.map((r) => r.id)).toEqual([first.data!.generationId]);
    const mine = await runtime.listUsageReceipts({ limit: 200, installationId: chain.installationId });
    expect(mine.data!.receipts.length).toBeGreaterThanOrEqual(2);
    expect(mine.data!.receipts.every((r) => r.installationId === chain.installationId)).toBe(true);

    const one = await runtime.getUsageReceipt(first.data!.generationId);
    expectEnvelope('service.product-intelligence-usage', one);
    expect(one.data).toEqual(first.data!.receipt);
    await expectRefusal(runtime.getUsageReceipt(randomUUID()), 'usage_receipt_not_found', 404);

    const budget = await runtime.getIntelligenceBudget();
    expectEnvelope('service.intelligence-budget', budget);
    expect(budget.data).toMatchObject({ organization: { budgetMicrodollars: BUDGET, maxConcurrent: 20 }, installation: { sublimitMicrodollars: null } });
    expect(budget.data!.availableMicrodollars).toBeLessThanOrEqual(BUDGET - budget.data!.organization.committedMicrodollars);
  });

  it('an organization without a budget is refused with intelligence_budget_missing, before any model call', async () => {
    const unbudgeted = await buildRuntimeChain(ctx.db.pool);
    const keys = ['no-budget-1', 'no-budget-2', 'no-budget-3'];
    const refusing = createHostedRuntime({ baseUrl: ctx.url, credential: unbudgeted.secret, idempotencyKey: () => keys.shift()! });
    expect((await expectRefusal(refusing.generate(generateInput()), 'intelligence_budget_missing', 403)).idempotencyKey).toBe('no-budget-1');
    expect((await expectRefusal(collect(refusing.generateStream(generateInput())), 'intelligence_budget_missing', 403)).idempotencyKey).toBe('no-budget-2');
    expect((await expectRefusal(refusing.generateImage(imageInput()), 'intelligence_budget_missing', 403)).idempotencyKey).toBe('no-budget-3');
    expect(provider.calls).toHaveLength(0);
  });
});

describe('hosted adapter on a service with no model provider', () => {
  const bare = useTestApp({ listen: true, overrides: { intelligence: null } });

  it('answers unavailable (capability_not_configured); a stream request throws RuntimeUnavailableError carrying that envelope', async () => {
    const bareChain = await buildRuntimeChain(bare.db.pool);
    const hosted = createHostedRuntime({ baseUrl: bare.url, credential: bareChain.secret });
    const answer = await hosted.generate(generateInput());
    expectEnvelope('service.generation', answer);
    expect(answer).toMatchObject({ status: 'unavailable', data: null, missing: [{ part: 'intelligence', reason: 'capability_not_configured' }] });
    expect((await hosted.generateImage(imageInput())).missing.map((m) => m.reason)).toEqual(['capability_not_configured']);

    const stream = hosted.generateStream(generateInput(), { idempotencyKey: 'bare-stream' });
    const error = await collect(stream).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RuntimeUnavailableError);
    const unavailable = error as RuntimeUnavailableError;
    expect({ code: unavailable.code, idempotencyKey: unavailable.idempotencyKey }).toEqual({ code: 'capability_not_configured', idempotencyKey: 'bare-stream' });
    expect(unavailable.envelope).toMatchObject({ kind: 'service.generation', status: 'unavailable', data: null });
  });
});

describe('local adapter', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'runtime-sdk-intelligence-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('never calls a model: every intelligence operation answers unavailable / hosted_only, and a stream throws', async () => {
    const local = createLocalRuntime({ root });
    const answers = [
      ['service.generation', await local.generate(generateInput())],
      ['service.generated-image', await local.generateImage(imageInput())],
      ['service.product-intelligence-usage-list', await local.listUsageReceipts()],
      ['service.product-intelligence-usage', await local.getUsageReceipt(randomUUID())],
      ['service.intelligence-budget', await local.getIntelligenceBudget()],
    ] as const;
    for (const [kind, answer] of answers) {
      expectEnvelope(kind, answer);
      expect(answer, kind).toMatchObject({ kind, status: 'unavailable', data: null });
      expect(answer.missing.map((m) => m.reason)).toEqual(['hosted_only']);
    }
    const error = await collect(local.generateStream(generateInput(), { idempotencyKey: 'local-key' })).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RuntimeUnavailableError);
    expect({ code: (error as RuntimeUnavailableError).code, idempotencyKey: (error as RuntimeUnavailableError).idempotencyKey }).toEqual({ code: 'hosted_only', idempotencyKey: 'local-key' });
    expect(provider.calls).toHaveLength(0);
  });
});
