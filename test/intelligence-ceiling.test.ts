// The budget is a ceiling (issue 24): whatever a provider or a proxy in front of it reports, a
// request is charged at most what it reserved, committed spend never passes the budget or the
// sublimit, and the difference is recorded as an overrun operators can see. Also: a refusal says
// whether waiting helps; each operation's default output cap; images answered as URLs are fetched
// under the egress rules or released, never billed unread. Real Postgres, real Temporal, a scripted
// OpenAI-compatible provider on loopback driven through the production `openai` client.
import { createHash, randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { beforeEach, describe, expect, it } from 'vitest';
import { GENERATE_DEFAULT_OUTPUT_TOKENS, STRUCTURED_GENERATE_EXTRA_OUTPUT_TOKENS } from '@hosted-notes/runtime-sdk';
import { completeReservation, IN_FLIGHT_RETRY_AFTER_SECONDS, listOverruns, markDispatched, reserve } from '../domain/intelligence/ledger.ts';
import type { Completion } from '../domain/intelligence/ledger.ts';
import { useTestAppWithWorker } from './support/harness.ts';
import { buildTestApp } from './support/app.ts';
import { lazyTemporalConnection } from '../platform/temporal.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import type { RuntimeChain, RuntimeClient } from './support/product-runtime.ts';
import type { ScriptedProvider} from './support/scripted-provider.ts';
import { tinyImages } from './support/scripted-provider.ts';
import { generateBody, imageBody, installationCommitted, orgLedger, reservations, setBudget, setSublimit } from './support/intelligence.ts';
import type { Json } from './support/dev-client.ts';
import { useScriptedProvider } from './support/use-scripted-provider.ts';

const provider = useScriptedProvider();

// The model's ceiling at the most a caller may ask for, so each operation's own default shows; a
// 1.5 s provider deadline so an image URL that never answers is given up quickly.
const ctx = useTestAppWithWorker({
  name: 'intelligence-ceiling',
  overrides: () => {
    const settings = provider.settings();
    return {
      intelligence: provider.intelligence({ provider: { ...settings.provider, timeoutMs: 1_500 }, text: { ...settings.text, maxOutputTokens: 16_384 } }),
    };
  },
});

beforeEach(() => provider.reset());

const data = (res: { data: Json }) => (res.data as { data: Record<string, unknown> }).data;
type Receipt = { costMicrodollars: number; reservedMicrodollars: number; reportedCostMicrodollars: number | null; overrunMicrodollars: number; outcome: string };

async function newChain(budget: number, maxConcurrent = 50): Promise<{ chain: RuntimeChain; rt: RuntimeClient }> {
  const chain = await buildRuntimeChain(ctx.db.pool);
  await setBudget(ctx.db.pool, chain.organizationId, budget, maxConcurrent);
  return { chain, rt: runtimeClient(ctx.app, chain.secret) };
}

const post = (rt: RuntimeClient, path: string, body: unknown, key = randomUUID()) => rt.request('POST', path, { body, headers: { 'idempotency-key': key } });

describe('a provider that reports more than the bound is charged the bound, and the overrun is recorded', () => {
  it("generate with maxOutputTokens 64, 50,000 prompt tokens reported: the receipt and the organization's spend stop at the reservation", async () => {
    const { chain, rt } = await newChain(5_000);
    provider.fallback = { kind: 'chat', chunks: ['A warm-up.'], usage: { prompt_tokens: 50_000, completion_tokens: 10 } };
    const res = await post(rt, '/intelligence/education/generate', { ...generateBody(), maxOutputTokens: 64 });
    expect(res.statusCode, res.body).toBe(200);
    const receipt = data(res)['receipt'] as Receipt;
    // 50,000 input tokens at 1 µ$ and 10 output tokens at 4 µ$.
    expect(receipt.reportedCostMicrodollars).toBe(50_040);
    expect(receipt.costMicrodollars).toBe(receipt.reservedMicrodollars);
    expect(receipt.overrunMicrodollars).toBe(50_040 - receipt.reservedMicrodollars);
    expect(receipt.reservedMicrodollars).toBeLessThan(5_000);
    const ledger = await orgLedger(ctx.db.pool, chain.organizationId);
    expect(ledger).toEqual({ committed: receipt.reservedMicrodollars, inFlight: 0 });
    expect(await installationCommitted(ctx.db.pool, chain.installationId)).toBe(receipt.reservedMicrodollars);

    // Operators see it: the overrun list and its monthly totals; the receipt read back says the same.
    const overruns = await listOverruns(ctx.db.pool, chain.organizationId, { limit: 10 });
    expect(overruns.month).toEqual({ requests: 1, overrunMicrodollars: receipt.overrunMicrodollars, chargedMicrodollars: receipt.reservedMicrodollars });
    expect(overruns.receipts.map((r) => r.id)).toEqual([data(res)['generationId']]);
    const read = await rt.request('GET', `/intelligence/usage/${String(data(res)['generationId'])}`);
    expect(data(read)).toMatchObject({ costMicrodollars: receipt.costMicrodollars, overrunMicrodollars: receipt.overrunMicrodollars });
  });

  it('an honest report below the bound is charged as reported, with no overrun', async () => {
    const { rt } = await newChain(100_000);
    provider.fallback = { kind: 'chat', chunks: ['Fold a strip.'], usage: { prompt_tokens: 100, completion_tokens: 20 } };
    const receipt = data(await post(rt, '/intelligence/education/generate', generateBody()))['receipt'] as Receipt;
    expect(receipt).toMatchObject({ costMicrodollars: 180, reportedCostMicrodollars: 180, overrunMicrodollars: 0 });
  });

  it('a billable failure with an inflated report (unusable structured output) is charged at most the bound', async () => {
    const { chain, rt } = await newChain(100_000);
    provider.fallback = { kind: 'chat', chunks: ['not json'], usage: { prompt_tokens: 900_000, completion_tokens: 5 } };
    const res = await post(rt, '/intelligence/education/generate', { ...generateBody(), format: 'structured' });
    expect(res.statusCode).toBe(502);
    const problem = res.data as { code: string; receipt: Receipt };
    expect(problem.code).toBe('intelligence_output_invalid');
    expect(problem.receipt).toMatchObject({ outcome: 'billable_failure', reportedCostMicrodollars: 900_020 });
    expect(problem.receipt.costMicrodollars).toBe(problem.receipt.reservedMicrodollars);
    expect(problem.receipt.overrunMicrodollars).toBe(900_020 - problem.receipt.reservedMicrodollars);
    expect((await orgLedger(ctx.db.pool, chain.organizationId)).committed).toBe(problem.receipt.reservedMicrodollars);
  });

  it('200 concurrent callers whose provider reports 10× their bound: committed spend never passes the budget', async () => {
    // A budget that fits ten of the 200 (each settlement logs the overrun at warn: ten lines, not 200).
    const { chain, rt } = await newChain(12_000, 200);
    provider.fallback = { kind: 'chat', chunks: ['ok'], usage: { prompt_tokens: 40_000, completion_tokens: 64 } };
    const answers = await Promise.all(Array.from({ length: 200 }, () => post(rt, '/intelligence/education/generate', { ...generateBody(), maxOutputTokens: 64 })));
    const settled = answers.filter((a) => a.statusCode === 200).map((a) => data(a)['receipt'] as Receipt);
    expect(settled.length).toBeGreaterThan(0);
    // The rest are refusals that reserve nothing: the budget, or (on a loaded machine) the metering workflow's start not answered in time.
    const refusals = answers.filter((a) => a.statusCode !== 200).map((a) => (a.data as { code: string }).code);
    expect(refusals.filter((code) => code !== 'intelligence_budget_exhausted' && code !== 'workflow_service_unavailable')).toEqual([]);
    const ledger = await orgLedger(ctx.db.pool, chain.organizationId);
    expect(ledger.committed).toBe(settled.reduce((n, r) => n + r.costMicrodollars, 0));
    expect(ledger.committed).toBeLessThanOrEqual(12_000);
    expect(settled.every((r) => r.costMicrodollars === r.reservedMicrodollars && r.overrunMicrodollars > 0)).toBe(true);
  });
});

// ---- the ledger property ------------------------------------------------------------------------

/** A small deterministic PRNG (mulberry32): the same seed replays the same sequence when a run fails. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const rowSchema = z.object({
  state: z.string(),
  reserved: z.coerce.number(),
  charged: z.coerce.number().nullable(),
  reported: z.coerce.number().nullable(),
  overrun: z.coerce.number(),
});

describe('the ledger property: for any sequence of reported usages, committed ≤ budget and ≤ sublimit, the overrun recorded', () => {
  const hex = (s: string) => createHash('sha256').update(s).digest('hex');

  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: 400 random steps (reserve, dispatch, settle, fail, release, expire), some concurrent`, async () => {
      const random = prng(seed);
      const pick = <T,>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
      const budget = 50_000 + Math.floor(random() * 50_000);
      const sublimit = Math.floor(budget * (0.3 + random() * 0.6));
      const chain = await buildRuntimeChain(ctx.db.pool);
      await setBudget(ctx.db.pool, chain.organizationId, budget, 1_000);
      await setSublimit(ctx.db.pool, chain.installationId, sublimit);
      const open: { workflowId: string; dispatched: boolean; reserved: number }[] = [];
      const expected = new Map<string, { reserved: number; reported: number | null; kind: Completion['kind'] }>();

      const reserveOne = async () => {
        const workflowId = `prop-${seed}-${randomUUID()}`;
        const cost = 1 + Math.floor(random() ** 3 * sublimit);
        try {
          const outcome = await reserve(ctx.db.pool, {
            id: randomUUID(),
            organizationId: chain.organizationId,
            installationId: chain.installationId,
            operation: 'generate',
            keyHash: hex(workflowId),
            fingerprint: hex(`body-${workflowId}`),
            costMicrodollars: cost,
            workflowId,
            ttlMs: 60_000,
            reserveBy: Date.now() + 30_000,
          });
          open.push({ workflowId, dispatched: false, reserved: outcome.reservation.reservedMicrodollars });
        } catch (error) {
          expect((error as { code?: string }).code).toMatch(/^intelligence_(budget|sublimit)_exhausted$/);
        }
      };
      // A reported cost anywhere from nothing to 100× the bound, or none at all.
      const reportedFor = (reserved: number) => (random() < 0.15 ? null : Math.floor(random() ** 2 * reserved * (random() < 0.3 ? 100 : 1.2)));

      for (let step = 0; step < 400; step++) {
        const roll = random();
        if (roll < 0.1) {
          // A burst of concurrent reservations.
          await Promise.all(Array.from({ length: 8 }, () => reserveOne()));
        } else if (roll < 0.4 || open.length === 0) {
          await reserveOne();
        } else {
          const entry = pick(open);
          if (!entry.dispatched && random() < 0.6) {
            await markDispatched(ctx.db.pool, entry.workflowId);
            entry.dispatched = true;
          } else {
            const reported = reportedFor(entry.reserved);
            const completion: Completion = !entry.dispatched
              ? pick([{ kind: 'release', code: 'intelligence_provider_error' }, { kind: 'expire' }] as const)
              : pick([
                  { kind: 'settle', costMicrodollars: reported, model: 'm', inputTokens: null, outputTokens: null, images: null },
                  { kind: 'billable_failure', code: 'intelligence_interrupted', costMicrodollars: reported, model: null, inputTokens: null, outputTokens: null },
                  { kind: 'release', code: 'client_disconnected' },
                ] as const);
            await completeReservation(ctx.db.pool, entry.workflowId, completion);
            // Repeating a transition changes nothing (a retried activity).
            await completeReservation(ctx.db.pool, entry.workflowId, completion);
            open.splice(open.indexOf(entry), 1);
            expected.set(entry.workflowId, { reserved: entry.reserved, reported: 'costMicrodollars' in completion ? completion.costMicrodollars : null, kind: completion.kind });
          }
        }
        const org = await orgLedger(ctx.db.pool, chain.organizationId);
        const inst = await installationCommitted(ctx.db.pool, chain.installationId);
        expect(org.committed, `step ${step}`).toBeLessThanOrEqual(budget);
        expect(inst, `step ${step}`).toBeLessThanOrEqual(sublimit);
      }

      // Every finished request: charged ≤ reserved, overrun = max(0, reported − reserved); the month's
      // committed spend is exactly the open bounds plus the charges.
      const rows = await ctx.db.pool.any(sql.type(rowSchema.extend({ workflowId: z.string() }))`
        SELECT workflow_id AS "workflowId", state, reserved_microdollars AS reserved, charged_microdollars AS charged,
               reported_cost_microdollars AS reported, overrun_microdollars AS overrun
          FROM intelligence_reservations WHERE installation_id = ${chain.installationId}`);
      let sum = 0;
      let overruns = 0;
      for (const row of rows) {
        const want = expected.get(row.workflowId);
        if (!want) {
          expect(['reserved', 'dispatched']).toContain(row.state);
          sum += row.reserved;
          continue;
        }
        const charged = want.kind === 'settle' || want.kind === 'billable_failure';
        expect(row.charged).toBe(charged ? Math.min(want.reported ?? want.reserved, want.reserved) : 0);
        expect(row.overrun).toBe(charged ? Math.max(0, (want.reported ?? 0) - want.reserved) : 0);
        if (row.overrun > 0) overruns++;
        sum += row.charged ?? 0;
      }
      expect((await orgLedger(ctx.db.pool, chain.organizationId)).committed).toBe(sum);
      expect(await installationCommitted(ctx.db.pool, chain.installationId)).toBe(sum);
      // The sequence exercised what it claims to: overruns happened and were recorded.
      expect(overruns).toBeGreaterThan(0);
      expect(expected.size).toBeGreaterThan(50);
    });
  }

  it('the database itself refuses a charge above the reservation', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    await setBudget(ctx.db.pool, chain.organizationId, 10_000);
    const workflowId = `direct-${randomUUID()}`;
    await reserve(ctx.db.pool, {
      id: randomUUID(), organizationId: chain.organizationId, installationId: chain.installationId, operation: 'generate',
      keyHash: hex(workflowId), fingerprint: hex(workflowId), costMicrodollars: 100, workflowId, ttlMs: 60_000, reserveBy: Date.now() + 30_000,
    });
    await expect(
      ctx.db.pool.query(sql.type(z.object({}))`UPDATE intelligence_reservations SET state = 'settled', charged_microdollars = 101, finished_at = now() WHERE workflow_id = ${workflowId}`),
    ).rejects.toMatchObject({ constraint: 'intelligence_reservations_charge_within_reservation' });
  });
});

// ---- a refusal says whether waiting helps --------------------------------------------------------

describe('reserve: a new key is claimed and held in one statement (migration 0035), a known key in a transaction', () => {
  const hex = (s: string) => createHash('sha256').update(s).digest('hex');
  const request = (chain: RuntimeChain, key: string, cost: number) => ({
    id: randomUUID(),
    organizationId: chain.organizationId,
    installationId: chain.installationId,
    operation: 'generate',
    keyHash: hex(key),
    fingerprint: hex('one body'),
    costMicrodollars: cost,
    workflowId: `one-${randomUUID()}`,
    ttlMs: 60_000,
    reserveBy: Date.now() + 30_000,
  });

  it('a hold refused at any counter leaves no reservation and moves no counter; a released key is claimed again', async () => {
    const pool = ctx.db.pool;
    const chain = await buildRuntimeChain(pool);
    await setBudget(pool, chain.organizationId, 10_000, 1);
    await setSublimit(pool, chain.installationId, 5_000);
    const state = async () => ({ org: await orgLedger(pool, chain.organizationId), installation: await installationCommitted(pool, chain.installationId), rows: (await reservations(pool, chain.installationId)).length });
    const first = await reserve(pool, request(chain, 'first', 1_000));
    expect(first.kind).toBe('reserved');
    const held = await state();
    expect(held).toEqual({ org: { committed: 1_000, inFlight: 1 }, installation: 1_000, rows: 1 });
    // Refused at the organization's budget (the first counter), at the slot (the second: the budget and the
    // installation would fit), and, with the slot free, at the sublimit (the third, after two moved).
    await expect(reserve(pool, request(chain, 'over budget', 9_500))).rejects.toMatchObject({ code: 'intelligence_budget_exhausted' });
    await expect(reserve(pool, request(chain, 'no slot', 1_000))).rejects.toMatchObject({ code: 'intelligence_concurrency_exhausted' });
    expect(await state()).toEqual(held);
    await completeReservation(pool, first.reservation.workflowId, { kind: 'release', code: 'intelligence_provider_error' });
    const released = await state();
    expect(released).toEqual({ org: { committed: 0, inFlight: 0 }, installation: 0, rows: 1 });
    await expect(reserve(pool, request(chain, 'over sublimit', 5_500))).rejects.toMatchObject({ code: 'intelligence_sublimit_exhausted', extensions: { limitMicrodollars: 5_000 } });
    expect(await state()).toEqual(released);
    // The released key runs again through the transaction path: the same row, held once more.
    const again = await reserve(pool, request(chain, 'first', 2_000));
    expect(again).toMatchObject({ kind: 'reserved', reservation: { id: first.reservation.id, state: 'reserved', reservedMicrodollars: 2_000 } });
    expect(await state()).toEqual({ org: { committed: 2_000, inFlight: 1 }, installation: 2_000, rows: 1 });
    // And refused there as well, rolling back the re-claim: released by the workflow again, then asked above the budget.
    await completeReservation(pool, again.reservation.workflowId, { kind: 'release', code: 'intelligence_provider_error' });
    await expect(reserve(pool, request(chain, 'first', 20_000))).rejects.toMatchObject({ code: 'intelligence_budget_exhausted', extensions: { shortfall: 'request_exceeds_limit' } });
    expect((await reservations(pool, chain.installationId))[0]).toMatchObject({ state: 'released', reserved: 2_000 });
  });
});

describe('intelligence_budget_exhausted says whether the shortfall is held by requests in flight, spent, or the request itself', () => {
  it('held → Retry-After of seconds; after they settle, spent → the month end; above the whole budget → no Retry-After', async () => {
    // One request's bound at maxOutputTokens 200 is ~1,500 µ$: a budget of 1.5 bounds fits one at a time.
    const probe = await newChain(1_000_000);
    provider.fallback = { kind: 'chat', chunks: ['x'], usage: { prompt_tokens: 1, completion_tokens: 1 } };
    const bound = (data(await post(probe.rt, '/intelligence/education/generate', { ...generateBody(), maxOutputTokens: 200 }))['receipt'] as Receipt).reservedMicrodollars;
    const { rt } = await newChain(Math.floor(bound * 1.5));

    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    // The first request's provider holds its headers: its bound stays held, in flight.
    provider.script({ kind: 'chat', chunks: ['slow'], holdUntil: held, usage: { prompt_tokens: 1_000_000, completion_tokens: 1 } });
    // Wait for this request's own provider call (the probe's already counts), so the next one is
    // refused while this one holds its bound rather than racing it for the held turn.
    const callsBefore = provider.calls.length;
    const first = post(rt, '/intelligence/education/generate', { ...generateBody(), maxOutputTokens: 200 });
    await provider.waitForCalls(callsBefore + 1);

    const refusedHeld = await post(rt, '/intelligence/education/generate', { ...generateBody(), maxOutputTokens: 200 });
    expect(refusedHeld.statusCode).toBe(429);
    expect(refusedHeld.data).toMatchObject({ code: 'intelligence_budget_exhausted', shortfall: 'held', heldMicrodollars: bound, committedMicrodollars: bound, requiredMicrodollars: bound });
    expect(refusedHeld.headers['retry-after']).toBe(String(IN_FLIGHT_RETRY_AFTER_SECONDS));

    // The held request settles, charged its whole bound (its provider over-reports): now the money is spent.
    answer();
    expect((await first).statusCode).toBe(200);
    const refusedSpent = await post(rt, '/intelligence/education/generate', { ...generateBody(), maxOutputTokens: 200 });
    expect(refusedSpent.statusCode).toBe(429);
    expect(refusedSpent.data).toMatchObject({ code: 'intelligence_budget_exhausted', shortfall: 'spent', heldMicrodollars: 0, committedMicrodollars: bound });
    const untilMonthEnd = Math.ceil((Date.parse((refusedSpent.data as { resetsAt: string }).resetsAt) - Date.now()) / 1000);
    expect(Math.abs(Number(refusedSpent.headers['retry-after']) - untilMonthEnd)).toBeLessThanOrEqual(5);

    // A request whose bound is above the whole budget: no wait helps, so no Retry-After.
    const tooLarge = await post(rt, '/intelligence/education/generate', { ...generateBody(), maxOutputTokens: 16_384 });
    expect(tooLarge.statusCode).toBe(429);
    expect(tooLarge.data).toMatchObject({ code: 'intelligence_budget_exhausted', shortfall: 'request_exceeds_limit' });
    expect(tooLarge.headers['retry-after']).toBeUndefined();
  });

  it('the sublimit says the same', async () => {
    const { chain, rt } = await newChain(1_000_000);
    await setSublimit(ctx.db.pool, chain.installationId, 100);
    const res = await post(rt, '/intelligence/education/generate', generateBody());
    expect(res.statusCode).toBe(429);
    expect(res.data).toMatchObject({ code: 'intelligence_sublimit_exhausted', shortfall: 'request_exceeds_limit', limitMicrodollars: 100 });
  });
});

// ---- a dispatch the database drops ---------------------------------------------------------------

describe('a dispatch the database drops', () => {
  it('is released through the workflow (nothing reached the provider), not left to be charged at the completion deadline; the same key then runs', async () => {
    const { chain, rt } = await newChain(1_000_000);
    // The connection dies under the dispatch's UPDATE (as when the proxy of the outage drill cuts it).
    await ctx.db.pool.query(sql.type(z.object({}))`
      CREATE FUNCTION test_drop_dispatch() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.state = 'dispatched' AND NEW.installation_id = ${sql.literalValue(chain.installationId)}::uuid THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;
        RETURN NEW;
      END $$`);
    await ctx.db.pool.query(sql.type(z.object({}))`CREATE TRIGGER test_drop_dispatch BEFORE UPDATE ON intelligence_reservations FOR EACH ROW EXECUTE FUNCTION test_drop_dispatch()`);
    const key = randomUUID();
    let dropped;
    try {
      dropped = await post(rt, '/intelligence/education/generate', generateBody(), key);
    } finally {
      await ctx.db.pool.query(sql.type(z.object({}))`DROP TRIGGER test_drop_dispatch ON intelligence_reservations`);
      await ctx.db.pool.query(sql.type(z.object({}))`DROP FUNCTION test_drop_dispatch()`);
    }
    expect(dropped.statusCode, dropped.body).toBe(503);
    expect(provider.calls).toHaveLength(0);
    // Released by the workflow's ledger step (the reservation's TTL is far off), nothing charged.
    const until = Date.now() + 15_000;
    let rows = await reservations(ctx.db.pool, chain.installationId);
    while (rows[0]?.state !== 'released' && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      rows = await reservations(ctx.db.pool, chain.installationId);
    }
    expect(rows).toMatchObject([{ state: 'released', charged: 0, outcomeCode: 'database_unavailable' }]);
    const again = await post(rt, '/intelligence/education/generate', generateBody(), key);
    expect(again.statusCode, again.body).toBe(200);
    expect(provider.calls).toHaveLength(1);
  });
});

// ---- Temporal away --------------------------------------------------------------------------------

describe('a metered request while Temporal is unreachable', () => {
  it('is 503 workflow_service_unavailable with Retry-After within the bound, and reserves nothing', async () => {
    const dead = lazyTemporalConnection('127.0.0.1:1');
    const settings = provider.settings();
    const app = await buildTestApp(ctx.db.pool, { temporal: { connection: dead, namespace: 'default', taskQueue: ctx.taskQueue }, intelligence: provider.intelligence(settings) });
    try {
      const chain = await buildRuntimeChain(ctx.db.pool);
      await setBudget(ctx.db.pool, chain.organizationId, 1_000_000);
      const started = performance.now();
      const res = await post(runtimeClient(app, chain.secret), '/intelligence/education/generate', generateBody());
      expect(res.statusCode, res.body).toBe(503);
      expect(res.data).toMatchObject({ code: 'workflow_service_unavailable' });
      expect(res.headers['retry-after']).toBe('5');
      // Bounded by TEMPORAL_CALL_WAIT_MS (5 s), not Temporal's own ~20 s of retries.
      expect(performance.now() - started).toBeLessThan(15_000);
      expect(await orgLedger(ctx.db.pool, chain.organizationId)).toEqual({ committed: 0, inFlight: 0 });
      expect(provider.calls).toHaveLength(0);
    } finally {
      await app.close();
      await dead.close();
    }
  });
});

// ---- per-operation output caps -----------------------------------------------------------------

describe('each operation sends its own default output cap', () => {
  it('generate: by intent.context, +256 for structured; a caller may ask for more or less', async () => {
    const { rt } = await newChain(10_000_000);
    for (const context of ['plan', 'teach', 'create', 'communicate'] as const) {
      provider.reset();
      await post(rt, '/intelligence/education/generate', { ...generateBody(), intent: { context, task: 'A warm-up on fractions.' } });
      expect(provider.calls[0]!.body['max_completion_tokens'], context).toBe(GENERATE_DEFAULT_OUTPUT_TOKENS[context]);
    }
    provider.reset();
    provider.fallback = { kind: 'chat', chunks: [JSON.stringify({ title: 't', summary: 's', sections: [{ heading: 'h', markdown: 'm' }], citedSourceIds: [] })] };
    await post(rt, '/intelligence/education/generate', { ...generateBody(), format: 'structured' });
    expect(provider.calls[0]!.body['max_completion_tokens']).toBe(GENERATE_DEFAULT_OUTPUT_TOKENS.plan + STRUCTURED_GENERATE_EXTRA_OUTPUT_TOKENS);
    provider.reset();
    await post(rt, '/intelligence/education/generate', { ...generateBody(), maxOutputTokens: 9_000 });
    expect(provider.calls[0]!.body['max_completion_tokens']).toBe(9_000);
  });
});

// ---- images ----------------------------------------------------------------------------------------

describe('images: base64 asked for; a URL answer is fetched under the egress rules or released, never billed unread', () => {
  const generateImage = (rt: RuntimeClient) => post(rt, '/intelligence/education/generate-image', imageBody());

  it("asks a model it cannot see behind an alias for the output format only (a proxy refuses response_format for a model it does not know)", async () => {
    const { rt } = await newChain(10_000_000);
    provider.fallback = { kind: 'image', bytes: tinyImages.png };
    expect((await generateImage(rt)).statusCode).toBe(200);
    expect(provider.calls[0]!.body).toMatchObject({ output_format: 'png', n: 1 });
    expect(provider.calls[0]!.body).not.toHaveProperty('response_format');
  });

  it('an image answered as a URL on an allowed host is fetched and settled', async () => {
    const { rt } = await newChain(10_000_000);
    provider.files.set('img.png', { kind: 'bytes', bytes: tinyImages.png });
    provider.fallback = { kind: 'image-url', url: provider.fileUrl('img.png') };
    const res = await generateImage(rt);
    expect(res.statusCode, res.body).toBe(200);
    expect(data(res)).toMatchObject({ mediaType: 'image/png', base64: tinyImages.png.toString('base64'), receipt: { outcome: 'settled' } });
    expect(provider.fileRequests).toEqual(['img.png']);
  });

  // The detail names why the service did not read it (each reason its own branch in fetchImageUrl).
  const unreadable: [string, (p: ScriptedProvider) => string, string][] = [
    ['a private address the egress rules refuse', () => 'http://10.1.2.3/img.png', 'its address is not one the service may fetch'],
    ['plain http to a host that is not allow-listed', () => 'http://localhost:9/img.png', 'its address is not one the service may fetch'],
    ['not a URL', () => 'not a url', 'not a URL'],
    ['a 404', (p) => (p.files.set('gone.png', { kind: 'status', status: 404 }), p.fileUrl('gone.png')), 'it did not answer 200'],
    ['a redirect (never followed)', (p) => (p.files.set('moved.png', { kind: 'redirect', location: p.fileUrl('img.png') }), p.fileUrl('moved.png')), 'it did not answer 200'],
    ['more than 20 MiB', (p) => (p.files.set('huge.png', { kind: 'bytes', bytes: Buffer.alloc(20 * 1_048_576 + 1) }), p.fileUrl('huge.png')), 'it is larger than'],
    ['a host that never answers (the provider deadline)', (p) => (p.files.set('hang.png', { kind: 'hang' }), p.fileUrl('hang.png')), 'it did not answer in time'],
  ];
  for (const [name, urlOf, why] of unreadable) {
    it(`${name}: 502 intelligence_output_unreadable, released, no receipt, nothing held`, async () => {
      const { chain, rt } = await newChain(10_000_000);
      provider.files.set('img.png', { kind: 'bytes', bytes: tinyImages.png });
      provider.fallback = { kind: 'image-url', url: urlOf(provider) };
      const res = await generateImage(rt);
      expect(res.statusCode, res.body).toBe(502);
      expect(res.data).toMatchObject({ code: 'intelligence_output_unreadable', detail: expect.stringContaining(`(${why}`) });
      expect(await orgLedger(ctx.db.pool, chain.organizationId)).toEqual({ committed: 0, inFlight: 0 });
      const receipts = await rt.request('GET', '/intelligence/usage');
      expect((data(receipts)['receipts'] as unknown[]).length).toBe(0);
    });
  }
});
