// The spec's intelligence usage reservation table, row by row, against a scripted OpenAI-compatible
// provider on loopback (its call count shows when the model was and was not called), real Postgres
// and real Temporal: reserve → dispatch → settle | release | billable failure | expiry, replay.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { setProductRuntimeSettings } from '../domain/product-runtime/entities.ts';
import { temporalMeteringWorkflows } from '../api/routes/product/metering-workflows.ts';
import { meter } from '../domain/intelligence/metering.ts';
import type { HeldRequest, MeteringDeps } from '../domain/intelligence/metering.ts';
import { IN_FLIGHT_RETRY_AFTER_SECONDS, markDispatched, reserve } from '../domain/intelligence/ledger.ts';
import { buildTestApp } from './support/app.ts';
import { useTestAppWithWorker } from './support/harness.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import type { RuntimeChain, RuntimeClient } from './support/product-runtime.ts';
import { SCRIPTED_MODEL, unreachableIntelligence } from './support/scripted-provider.ts';
import { expectedCommitted, generateBody, orgLedger, reservations, setBudget } from './support/intelligence.ts';
import type { Json } from './support/dev-client.ts';
import { useScriptedProvider } from './support/use-scripted-provider.ts';

const provider = useScriptedProvider();

const ctx = useTestAppWithWorker({
  name: 'intelligence-metering',
  // A short provider deadline so the "never answers" row does not wait two minutes.
  overrides: () => ({ intelligence: provider.intelligence({ provider: { baseUrl: provider.url, apiKey: 'sk-scripted', timeoutMs: 1_500 } }) }),
});

let chain: RuntimeChain;
let rt: RuntimeClient;
const BUDGET = 1_000_000;

beforeAll(async () => {
  chain = await buildRuntimeChain(ctx.db.pool);
  rt = runtimeClient(ctx.app, chain.secret);
  await setBudget(ctx.db.pool, chain.organizationId, BUDGET, 20);
});
beforeEach(() => provider.reset());

const generate = (body: unknown, key: string | undefined = randomUUID(), headers: Record<string, string> = {}) =>
  rt.request('POST', '/intelligence/education/generate', { body, headers: { ...(key ? { 'idempotency-key': key } : {}), ...headers } });

const data = (res: { data: Json }) => (res.data as { data: Record<string, unknown> }).data;

describe('provider completes: settled at the actual cost, receipt returned', () => {
  it('reserves the bound, calls the provider once, settles the actual tokens and answers the receipt and model identity', async () => {
    provider.fallback = { kind: 'chat', chunks: ['Fold ', 'a strip ', 'in half.'], usage: { prompt_tokens: 120, completion_tokens: 30 } };
    const before = await orgLedger(ctx.db.pool, chain.organizationId);
    const res = await generate(generateBody());
    expect(res.statusCode, res.body).toBe(200);
    const g = data(res) as { content: string; model: { id: string }; receipt: Record<string, unknown>; replayed: boolean; finishReason: string };
    expect(g.content).toBe('Fold a strip in half.');
    expect(g.model).toEqual({ id: SCRIPTED_MODEL, provider: 'openai-compatible' });
    expect(g.finishReason).toBe('stop');
    expect(g.replayed).toBe(false);
    // 120 input tokens at 1 µ$ and 30 output tokens at 4 µ$.
    expect(g.receipt).toMatchObject({
      kind: 'service.product-intelligence-usage',
      organizationId: chain.organizationId,
      installationId: chain.installationId,
      operation: 'generate',
      outcome: 'settled',
      outcomeCode: null,
      costMicrodollars: 240,
      usage: { inputTokens: 120, outputTokens: 30, images: null },
      model: { id: SCRIPTED_MODEL, provider: 'openai-compatible' },
    });
    expect(g.receipt['reservedMicrodollars']).toBeGreaterThan(4_000); // 1,000 output tokens at 4 µ$ plus the input bytes
    expect(provider.calls).toHaveLength(1);
    const sent = provider.calls[0]!.body;
    expect(sent).toMatchObject({ model: 'scripted-model', stream: true, stream_options: { include_usage: true }, max_completion_tokens: 1_000 });
    const after = await orgLedger(ctx.db.pool, chain.organizationId);
    expect(after.committed - before.committed).toBe(240);
    expect(after.inFlight).toBe(0);
    expect(after.committed).toBe(await expectedCommitted(ctx.db.pool, chain.organizationId));
  });

  it('the receipt is readable afterwards through the runtime, and listed newest first with a cursor', async () => {
    const res = await generate(generateBody('first'));
    await generate(generateBody('second'));
    const id = (data(res) as { generationId: string }).generationId;
    const one = await rt.request('GET', `/intelligence/usage/${id}`);
    expect(one.statusCode).toBe(200);
    expect(data(one)).toMatchObject({ id, outcome: 'settled' });
    const page = await rt.request('GET', '/intelligence/usage?limit=1');
    const first = data(page) as { receipts: { id: string }[]; nextCursor: string };
    expect(first.receipts).toHaveLength(1);
    const next = await rt.request('GET', `/intelligence/usage?limit=1&cursor=${first.nextCursor}`);
    expect((data(next) as { receipts: { id: string }[] }).receipts[0]!.id).toBe(id);
    // The operator sees the same through the ops CLI.
    const cli = (...args: string[]) => spawnSync(process.execPath, ['scripts/ops.ts', ...args], { env: { ...process.env, DATABASE_URL: ctx.db.url }, encoding: 'utf8' });
    const listed = cli('usage', 'list', '--org', chain.organizationId, '--limit', '1');
    expect(listed.status, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { receipts: { id: string }[] }).receipts).toHaveLength(1);
    const shown = cli('usage', 'get', '--org', chain.organizationId, '--id', id);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id, outcome: 'settled' });
    const budgetCli = cli('usage', 'budget', '--installation', chain.installationId);
    expect(JSON.parse(budgetCli.stdout)).toMatchObject({ organization: { budgetMicrodollars: BUDGET } });
    const budget = await rt.request('GET', '/intelligence/budget');
    expect(data(budget)).toMatchObject({ organization: { budgetMicrodollars: BUDGET, maxConcurrent: 20, inFlight: 0 }, installation: { sublimitMicrodollars: null } });
  });
});

describe('same settled request retried with the same key: stored result replayed, no second model call', () => {
  it('replays as JSON and as a stream; another body with the key is refused', async () => {
    const key = randomUUID();
    const first = await generate(generateBody(), key);
    expect(first.statusCode).toBe(200);
    expect(provider.calls).toHaveLength(1);
    const again = await generate(generateBody(), key);
    expect(again.statusCode).toBe(200);
    expect(data(again)).toMatchObject({ ...data(first), replayed: true });
    const streamed = await generate(generateBody(), key, { accept: 'application/x-ndjson' });
    expect(streamed.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const events = streamed.body.trim().split('\n').map((l) => JSON.parse(l) as { type: string; text?: string; generation?: { replayed: boolean } });
    expect(events.map((e) => e.type)).toEqual(['ready', 'delta', 'done']);
    expect(events[1]!.text).toBe((data(first) as { content: string }).content);
    expect(events[2]!.generation?.replayed).toBe(true);
    const other = await generate(generateBody('another task'), key);
    expect(other.statusCode).toBe(422);
    expect(other.data).toMatchObject({ code: 'idempotency_key_reused' });
    expect(provider.calls).toHaveLength(1);
  });

  it('parallel requests with one key: one model call; the others replay or are told it is in flight', async () => {
    provider.fallback = { kind: 'chat', chunks: ['a', 'b'], chunkDelayMs: 50 };
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 8 }, () => generate(generateBody(), key)));
    expect(provider.calls).toHaveLength(1);
    const codes = answers.map((a) => (a.statusCode === 200 ? 'ok' : (a.data as { code: string }).code));
    expect(codes.filter((c) => c === 'ok').length).toBeGreaterThanOrEqual(1);
    expect(codes.every((c) => c === 'ok' || c === 'idempotency_in_flight')).toBe(true);
    // A key still in flight (the model takes 100 ms here, the seven others arrive at once) says when to come back.
    expect(codes).toContain('idempotency_in_flight');
    for (const a of answers.filter((r) => r.statusCode === 409)) expect(a.headers['retry-after']).toBe(String(IN_FLIGHT_RETRY_AFTER_SECONDS));
    expect((await reservations(ctx.db.pool, chain.installationId)).filter((r) => r.state === 'reserved' || r.state === 'dispatched')).toHaveLength(0);
  });
});

describe('request rejected before provider acceptance: reserved capacity released', () => {
  it.each([
    ['a 429 with Retry-After', { kind: 'error', status: 429, retryAfter: '7' }, 503, 'intelligence_provider_rate_limited'],
    ['a 500', { kind: 'error', status: 500 }, 502, 'intelligence_provider_error'],
    ['a 400 refusal', { kind: 'error', status: 400 }, 422, 'intelligence_provider_refused'],
    ['a 401 (the service key)', { kind: 'error', status: 401 }, 502, 'intelligence_provider_misconfigured'],
    ['no answer before the deadline', { kind: 'hang' }, 504, 'intelligence_provider_timeout'],
  ] as const)('%s: one call, the reservation released, nothing committed', async (_name, turn, status, code) => {
    provider.script(turn as never);
    const before = await orgLedger(ctx.db.pool, chain.organizationId);
    const key = randomUUID();
    const res = await generate(generateBody(), key);
    expect(res.statusCode, res.body).toBe(status);
    expect(res.data).toMatchObject({ code });
    if (code === 'intelligence_provider_rate_limited') expect(res.headers['retry-after']).toBe('7');
    expect(provider.calls).toHaveLength(1);
    const after = await orgLedger(ctx.db.pool, chain.organizationId);
    expect(after).toEqual({ committed: before.committed, inFlight: 0 });
    const rows = await reservations(ctx.db.pool, chain.installationId);
    expect(rows.at(-1)).toMatchObject({ state: 'released', charged: 0, outcomeCode: code });
    // Nothing was generated or charged, so the same key may run again.
    const retry = await generate(generateBody(), key);
    expect(retry.statusCode).toBe(200);
    expect(provider.calls).toHaveLength(2);
  });
});

describe('accepted request with interrupted or ambiguous completion: billable failure, not released', () => {
  it('a stream cut mid-answer without usage is charged its reserved bound', async () => {
    provider.script({ kind: 'drop', chunks: ['Fold ', 'a '] });
    const before = await orgLedger(ctx.db.pool, chain.organizationId);
    const key = randomUUID();
    const res = await generate(generateBody(), key);
    expect(res.statusCode).toBe(502);
    const problem = res.data as { code: string; outcome: string; receipt: { outcome: string; costMicrodollars: number; reservedMicrodollars: number; outcomeCode: string } };
    expect(problem.code).toBe('intelligence_interrupted');
    expect(problem.receipt.outcome).toBe('billable_failure');
    expect(problem.receipt.outcomeCode).toBe('intelligence_interrupted');
    expect(problem.receipt.costMicrodollars).toBe(problem.receipt.reservedMicrodollars);
    const after = await orgLedger(ctx.db.pool, chain.organizationId);
    expect(after.committed - before.committed).toBe(problem.receipt.reservedMicrodollars);
    expect(after.inFlight).toBe(0);
    // The key stays failed: retrying it neither calls the model nor charges again.
    const retry = await generate(generateBody(), key);
    expect(retry.statusCode).toBe(409);
    expect(retry.data).toMatchObject({ code: 'intelligence_request_failed', receiptId: (problem.receipt as unknown as { id: string }).id });
    expect(provider.calls).toHaveLength(1);
  });

  it('a structured answer that is not the promised object is a billable failure at its actual usage', async () => {
    provider.script({ kind: 'chat', chunks: ['{"title": "x"'], usage: { prompt_tokens: 100, completion_tokens: 10 } });
    const res = await generate({ ...generateBody(), format: 'structured' });
    expect(res.statusCode).toBe(502);
    expect(res.data).toMatchObject({ code: 'intelligence_output_invalid', receipt: { outcome: 'billable_failure', costMicrodollars: 140 } });
  });

  it('a valid structured answer is parsed, cites only submitted sources, and is rendered as text too', async () => {
    const structured = { title: 'Warm-up', summary: 'Strips.', sections: [{ heading: 'Fold', markdown: 'Fold the strip.' }], citedSourceIds: ['src-1'] };
    provider.script({ kind: 'chat', chunks: [JSON.stringify(structured)] });
    const res = await generate({ ...generateBody(), format: 'structured' });
    expect(res.statusCode, res.body).toBe(200);
    expect(data(res)).toMatchObject({ format: 'structured', structured, content: '# Warm-up\n\nStrips.\n\n## Fold\n\nFold the strip.' });
    expect(provider.calls[0]!.body).toMatchObject({ response_format: { type: 'json_schema', json_schema: { name: 'structured_generation', strict: true } } });
  });
});

/** The metering lifecycle as the API builds it, with this test's timings. */
function meteringDeps(client: Client, timing: MeteringDeps['timing']): MeteringDeps {
  return { db: ctx.db.pool, workflows: temporalMeteringWorkflows(client, ctx.taskQueue), timing, log: { warn: () => undefined, error: () => undefined } };
}

async function heldRequest(deps: MeteringDeps, request: Parameters<typeof meter>[3]): Promise<HeldRequest> {
  const opened = await meter(deps, callerOf(chain), randomUUID(), request);
  if (opened.kind !== 'held') throw new Error(`expected a held request, got ${opened.kind}`);
  return opened.held;
}

describe('undispatched reservation expires: capacity released', () => {
  it('a reservation the API never dispatched (it died) is released by the workflow timer; no model call', async () => {
    const client = new Client({ connection: ctx.temporal, namespace: 'default' });
    const deps = meteringDeps(client, { reservationTtlMs: 800, completionDeadlineMs: 1_500 });
    const before = await orgLedger(ctx.db.pool, chain.organizationId);
    const run = await heldRequest(deps, { operation: 'generate', body: { case: 'expires' }, costMicrodollars: 5_000 });
    expect(await orgLedger(ctx.db.pool, chain.organizationId)).toEqual({ committed: before.committed + 5_000, inFlight: 1 });
    const outcome = await client.workflow.getHandle(run.workflowId).result();
    expect(outcome).toBe('expired');
    expect(await orgLedger(ctx.db.pool, chain.organizationId)).toEqual({ committed: before.committed, inFlight: 0 });
    // Too late to dispatch now.
    // Nothing was held or charged: the same key may be sent again (Retry-After, docs/runtime-sdk.md).
    await expect(markDispatched(ctx.db.pool, run.workflowId)).rejects.toMatchObject({ code: 'intelligence_reservation_expired', headers: { 'retry-after': '1' } });
    expect(provider.calls).toHaveLength(0);
  });

  it('a dispatched request nobody reports (the API died mid-request) is recorded a billable failure at its bound, once', async () => {
    const client = new Client({ connection: ctx.temporal, namespace: 'default' });
    const deps = meteringDeps(client, { reservationTtlMs: 500, completionDeadlineMs: 800 });
    const before = await orgLedger(ctx.db.pool, chain.organizationId);
    const run = await heldRequest(deps, { operation: 'generate', body: { case: 'unreported' }, costMicrodollars: 7_000 });
    // Dispatched (the provider "accepted"), then nothing is ever reported.
    await run.accept(async () => undefined);
    expect(await client.workflow.getHandle(run.workflowId).result()).toBe('billable_failure');
    const row = (await reservations(ctx.db.pool, chain.installationId)).find((r) => r.workflowId === run.workflowId)!;
    expect(row).toMatchObject({ state: 'billable_failure', charged: 7_000, outcomeCode: 'completion_lost' });
    expect(await orgLedger(ctx.db.pool, chain.organizationId)).toEqual({ committed: before.committed + 7_000, inFlight: 0 });
    // A late report changes nothing: the first record stands.
    await expect(deps.workflows.complete(run.workflowId, { kind: 'settle', costMicrodollars: 10, model: 'm', inputTokens: 1, outputTokens: 1, images: null })).rejects.toThrow();
    expect(await orgLedger(ctx.db.pool, chain.organizationId)).toEqual({ committed: before.committed + 7_000, inFlight: 0 });
  });
});

describe('budget settings fail closed', () => {
  it.each([
    ['missing', undefined],
    ['zero', 0],
  ])('a %s organization budget refuses with intelligence_budget_missing before any model call', async (_name, budget) => {
    const other = await buildRuntimeChain(ctx.db.pool);
    if (budget !== undefined) await setProductRuntimeSettings(ctx.db.pool, other.organizationId, { intelligenceBudgetMicrodollarsMonthly: budget });
    const res = await runtimeClient(ctx.app, other.secret).request('POST', '/intelligence/education/generate', {
      body: generateBody(),
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(res.statusCode).toBe(403);
    expect(res.data).toMatchObject({ code: 'intelligence_budget_missing' });
    expect(provider.calls).toHaveLength(0);
    expect(await reservations(ctx.db.pool, other.installationId)).toHaveLength(0);
    const caps = await runtimeClient(ctx.app, other.secret).capabilities();
    const generateCap = (data(caps) as { capabilities: { id: string; reason: string }[] }).capabilities.find((c) => c.id === 'intelligence.generate');
    expect(generateCap?.reason).toBe('budget_missing');
  });
});

describe('tenancy', () => {
  it("another organization's receipt answers exactly like a missing one, and is never listed", async () => {
    const res = await generate(generateBody('tenancy'));
    const id = (data(res) as { generationId: string }).generationId;
    const stranger = await buildRuntimeChain(ctx.db.pool);
    const srt = runtimeClient(ctx.app, stranger.secret);
    const theirs = await srt.request('GET', `/intelligence/usage/${id}`);
    const missing = await srt.request('GET', `/intelligence/usage/${randomUUID()}`);
    const malformed = await srt.request('GET', '/intelligence/usage/not-a-uuid');
    for (const r of [theirs, missing, malformed]) {
      expect(r.statusCode).toBe(404);
      expect(r.data).toMatchObject({ code: 'usage_receipt_not_found' });
    }
    expect({ ...(theirs.data as object), instance: null, requestId: null }).toEqual({ ...(missing.data as object), instance: null, requestId: null });
    const listed = await srt.request('GET', '/intelligence/usage');
    expect((data(listed) as { receipts: unknown[] }).receipts).toEqual([]);
    // The same key in another installation is another request.
    const key = randomUUID();
    await setBudget(ctx.db.pool, stranger.organizationId, 100_000);
    const mine = await generate(generateBody(), key);
    const theirsGen = await srt.request('POST', '/intelligence/education/generate', { body: generateBody(), headers: { 'idempotency-key': key } });
    expect(mine.statusCode).toBe(200);
    expect(theirsGen.statusCode).toBe(200);
    expect((data(theirsGen) as { replayed: boolean }).replayed).toBe(false);
  });
});

function callerOf(c: RuntimeChain) {
  return {
    credentialId: c.credentialId,
    servicePrincipalId: c.principalId,
    installationId: c.installationId,
    productDefinitionId: c.productId,
    organizationId: c.organizationId,
    workspaceId: c.workspaceId,
    scopes: [],
    vault: null,
  };
}

describe('claims the docs make, each with a test that fails if it breaks', () => {
  it('an unreachable provider is a rejection before acceptance: 502 intelligence_provider_unreachable, released', async () => {
    const app = await buildTestApp(ctx.db.pool, { temporal: { connection: ctx.temporal, namespace: 'default', taskQueue: ctx.taskQueue }, intelligence: unreachableIntelligence() });
    try {
      const before = await orgLedger(ctx.db.pool, chain.organizationId);
      const res = await runtimeClient(app, chain.secret).request('POST', '/intelligence/education/generate', { body: generateBody(), headers: { 'idempotency-key': randomUUID() } });
      expect(res.statusCode, res.body).toBe(502);
      expect(res.data).toMatchObject({ code: 'intelligence_provider_unreachable' });
      expect((await reservations(ctx.db.pool, chain.installationId)).at(-1)).toMatchObject({ state: 'released', charged: 0, outcomeCode: 'intelligence_provider_unreachable' });
      expect(await orgLedger(ctx.db.pool, chain.organizationId)).toEqual({ committed: before.committed, inFlight: 0 });
    } finally {
      await app.close();
    }
  });

  it('maxConcurrentIntelligence defaults to 8 when unset, and 0 allows none', async () => {
    const other = await buildRuntimeChain(ctx.db.pool);
    await setBudget(ctx.db.pool, other.organizationId, 1_000_000);
    const ort = runtimeClient(ctx.app, other.secret);
    expect(data(await ort.request('GET', '/intelligence/budget'))).toMatchObject({ organization: { maxConcurrent: 8 } });
    await setBudget(ctx.db.pool, other.organizationId, undefined, 0);
    const res = await ort.request('POST', '/intelligence/education/generate', { body: generateBody(), headers: { 'idempotency-key': randomUUID() } });
    expect(res.statusCode).toBe(429);
    expect(res.data).toMatchObject({ code: 'intelligence_concurrency_exhausted', maxConcurrent: 0 });
    expect(res.headers['retry-after']).toBe('1');
    expect(provider.calls).toHaveLength(0);
  });

  it('a reservation is refused once half its timer has passed, so it can never appear after the timer looked', async () => {
    const reserveBy = Date.now() - 1;
    await expect(
      reserve(ctx.db.pool, {
        id: randomUUID(),
        organizationId: chain.organizationId,
        installationId: chain.installationId,
        operation: 'generate',
        keyHash: 'c'.repeat(64),
        fingerprint: 'c'.repeat(64),
        costMicrodollars: 1,
        workflowId: `intelligence-usage-${randomUUID()}`,
        ttlMs: 60_000,
        reserveBy,
      }),
    ).rejects.toMatchObject({ code: 'intelligence_reservation_expired', headers: { 'retry-after': '1' } });
    expect((await reservations(ctx.db.pool, chain.installationId)).some((r) => r.reserved === 1)).toBe(false);
  });
});
