// Budgets and concurrency under 200 concurrent callers: the organization budget, an installation's
// sublimit and maxConcurrentIntelligence are each checked atomically at reservation time, so the
// number dispatched is exact and the ledger sums to the microdollar. The scripted provider holds
// every dispatched request until all 200 have been judged, so none settles early and frees room.
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { useTestAppWithWorker } from './support/harness.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import type { RuntimeChain, RuntimeResponse } from './support/product-runtime.ts';
import { expectedCommitted, generateBody, installationCommitted, orgLedger, reservations, setBudget, setSublimit } from './support/intelligence.ts';
import { useScriptedProvider } from './support/use-scripted-provider.ts';

const provider = useScriptedProvider();
const ctx = useTestAppWithWorker({ name: 'intelligence-concurrency', overrides: () => ({ intelligence: provider.intelligence() }) });
beforeEach(() => provider.reset());

const USAGE = { prompt_tokens: 100, completion_tokens: 20 }; // settles at 100 × 1 + 20 × 4 = 180 µ$
const SETTLED = 180;

/** The reserved bound of generateBody() (the same for every key): learned from one settled request. */
async function boundOf(chain: RuntimeChain): Promise<number> {
  await setBudget(ctx.db.pool, chain.organizationId, 1_000_000_000, 1_000);
  provider.fallback = { kind: 'chat', chunks: ['ok'], usage: USAGE };
  const res = await runtimeClient(ctx.app, chain.secret).request('POST', '/intelligence/education/generate', {
    body: generateBody(),
    headers: { 'idempotency-key': randomUUID() },
  });
  expect(res.statusCode, res.body).toBe(200);
  return (res.data as { data: { receipt: { reservedMicrodollars: number } } }).data.receipt.reservedMicrodollars;
}

/**
 * One generate request, retried with its Idempotency-Key as a client does while the answer is 503
 * `workflow_service_unavailable`: 200 metering workflows started at once on a loaded machine can take
 * longer than the API waits for Temporal (TEMPORAL_CALL_WAIT_MS), and such an attempt ends before
 * anything is reserved. What is held here is how the reservation judges each request.
 */
async function judged(chain: RuntimeChain): Promise<RuntimeResponse> {
  const key = randomUUID();
  for (let attempt = 1; ; attempt++) {
    const res = await runtimeClient(ctx.app, chain.secret).request('POST', '/intelligence/education/generate', { body: generateBody(), headers: { 'idempotency-key': key } });
    if (res.statusCode !== 503 || (res.data as { code?: string }).code !== 'workflow_service_unavailable' || attempt === 20) return res;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Fires `count` generate requests per chain at once with the provider holding every answer, waits
 * until each was either refused or reached the provider, then lets the provider answer.
 */
async function burst(chains: { chain: RuntimeChain; count: number }[]): Promise<RuntimeResponse[]> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  provider.fallback = { kind: 'chat', chunks: ['ok'], usage: USAGE, holdUntil: gate };
  let refused = 0;
  const total = chains.reduce((n, c) => n + c.count, 0);
  const requests = chains.flatMap(({ chain, count }) =>
    Array.from({ length: count }, () =>
      judged(chain).then((res) => {
        if (res.statusCode !== 200) refused += 1;
        return res;
      }),
    ),
  );
  // Every request is judged once it was refused or the provider saw it.
  while (refused + provider.calls.length < total) await new Promise((resolve) => setTimeout(resolve, 20));
  release();
  return Promise.all(requests);
}

const codes = (answers: RuntimeResponse[]) => answers.map((a) => (a.statusCode === 200 ? 'ok' : (a.data as { code: string }).code));
const count = (values: string[], value: string) => values.filter((v) => v === value).length;

describe('200 concurrent reservations', { timeout: 120_000 }, () => {
  it('against an organization budget that fits N of them: exactly N dispatched, the rest refused, the ledger exact', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const bound = await boundOf(chain);
    provider.reset();
    const N = 37;
    // Room for N bounds on top of what the first request settled, plus one microdollar short of another.
    await setBudget(ctx.db.pool, chain.organizationId, SETTLED + N * bound + bound - 1, 1_000);
    const answers = await burst([{ chain, count: 200 }]);
    const seen = codes(answers);
    expect(count(seen, 'ok')).toBe(N);
    expect(count(seen, 'intelligence_budget_exhausted')).toBe(200 - N);
    expect(provider.calls).toHaveLength(N);
    const ledger = await orgLedger(ctx.db.pool, chain.organizationId);
    expect(ledger.inFlight).toBe(0);
    expect(ledger.committed).toBe(SETTLED * (N + 1));
    expect(ledger.committed).toBe(await expectedCommitted(ctx.db.pool, chain.organizationId));
    // Refused reservations leave no row: only the settled ones exist.
    const rows = await reservations(ctx.db.pool, chain.installationId);
    expect(rows).toHaveLength(N + 1);
    expect(rows.every((r) => r.state === 'settled')).toBe(true);
    const refusal = answers.find((a) => a.statusCode === 429)!;
    expect(refusal.data).toMatchObject({ code: 'intelligence_budget_exhausted', requiredMicrodollars: bound });
    expect(Number(refusal.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('maxConcurrentIntelligence: exactly that many in flight, the rest refused with the concurrency code', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    await setBudget(ctx.db.pool, chain.organizationId, 1_000_000_000, 5);
    const answers = await burst([{ chain, count: 200 }]);
    const seen = codes(answers);
    expect(count(seen, 'ok')).toBe(5);
    expect(count(seen, 'intelligence_concurrency_exhausted')).toBe(195);
    expect(provider.calls).toHaveLength(5);
    expect(await orgLedger(ctx.db.pool, chain.organizationId)).toEqual({ committed: 5 * SETTLED, inFlight: 0 });
  });

  it("an installation's sublimit below the organization budget: that installation stops at it, another goes on", async () => {
    const a = await buildRuntimeChain(ctx.db.pool);
    const bound = await boundOf(a);
    const b = await buildRuntimeChain(ctx.db.pool, { organization: { id: a.organizationId, workspaceId: a.workspaceId } });
    provider.reset();
    await setSublimit(ctx.db.pool, a.installationId, SETTLED + 3 * bound);
    const answers = await burst([
      { chain: a, count: 100 },
      { chain: b, count: 100 },
    ]);
    const fromA = codes(answers.slice(0, 100));
    const fromB = codes(answers.slice(100));
    expect(count(fromA, 'ok')).toBe(3);
    expect(count(fromA, 'intelligence_sublimit_exhausted')).toBe(97);
    expect(count(fromB, 'ok')).toBe(100);
    expect(await installationCommitted(ctx.db.pool, a.installationId)).toBe(4 * SETTLED);
    expect(await installationCommitted(ctx.db.pool, b.installationId)).toBe(100 * SETTLED);
    expect((await orgLedger(ctx.db.pool, a.organizationId)).committed).toBe(104 * SETTLED);
  });

  it('two installations share one organization budget: N in all across both', async () => {
    const a = await buildRuntimeChain(ctx.db.pool);
    const bound = await boundOf(a);
    const b = await buildRuntimeChain(ctx.db.pool, { organization: { id: a.organizationId, workspaceId: a.workspaceId } });
    provider.reset();
    const N = 25;
    await setBudget(ctx.db.pool, a.organizationId, SETTLED + N * bound, 1_000);
    const answers = await burst([
      { chain: a, count: 100 },
      { chain: b, count: 100 },
    ]);
    expect(count(codes(answers), 'ok')).toBe(N);
    expect(provider.calls).toHaveLength(N);
    expect(await orgLedger(ctx.db.pool, a.organizationId)).toEqual({ committed: (N + 1) * SETTLED, inFlight: 0 });
  });
});
