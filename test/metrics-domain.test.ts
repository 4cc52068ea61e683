// The domain gauges and counters (api/metrics/domain.ts) read from Postgres when scraped: rows made
// through the domain functions, one scrape through the metrics listener, exact values in the text.
// Real Postgres; the webhook receiver is a loopback HTTP server.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDomainMetrics } from '../api/metrics/domain.ts';
import { ingestEvent } from '../domain/automation/events.ts';
import { recordForgeFailure, runForgeExecution } from '../domain/automation/forge.ts';
import { transitionProposal } from '../domain/automation/proposal-states.ts';
import type { ProposalState } from '../domain/automation/proposal-states.ts';
import { insertProposal } from '../domain/automation/proposals.ts';
import { attemptDelivery, createEndpoint, deliveryMessageId, disableEndpoint } from '../domain/automation/webhooks.ts';
import { expireAttempt, failAttempt, startAttempt } from '../domain/connections/attempts.ts';
import type { OAuthProvider } from '../domain/connections/provider.ts';
import { endSessions, openSession } from '../domain/console/sessions.ts';
import { completeReservation, markDispatched, reserve } from '../domain/intelligence/ledger.ts';
import { uploadAudio } from '../domain/media/library.ts';
import { createPostgresBlobStore } from '../domain/media/postgres-blob-store.ts';
import { OperationLeases } from '../domain/product-runtime/operation-leases.ts';
import { setProductReturnTargets, setProductRuntimeSettings } from '../domain/product-runtime/entities.ts';
import { createSecretBox } from '../domain/secret-box.ts';
import { pendingIntents } from '../domain/workflow-intents.ts';
import { createMetricsRegistry, serveMetrics } from '../platform/metrics.ts';
import { useTestDatabase } from './support/harness.ts';
import { setBudget } from './support/intelligence.ts';
import { audioFixture } from './support/media.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';

const db = useTestDatabase();
const hex = (s: string) => createHash('sha256').update(s).digest('hex');
const secretBox = createSecretBox(`test:${randomBytes(32).toString('base64')}`)!;
const egress = { allowList: ['127.0.0.1'] };

// The webhook receiver: /ok answers 200, anything else 500.
let receiver: Server;
let receiverBase = '';
beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(req.url === '/ok' ? 200 : 500).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

/** A proposal of the chain's owner, moved along `path` (each step an allowed edge). */
async function proposalAt(chain: RuntimeChain, path: readonly ProposalState[]): Promise<string> {
  const id = randomUUID();
  await insertProposal(db.pool, {
    id, workspaceId: chain.workspaceId, proposer: { kind: 'account', id: chain.owner.account.id }, actingForAccountId: null, bridge: 'metrics-bridge',
    action: { kind: 'note.write', mappingId: chain.mappingId, path: `Ops/${id}.md`, content: '# Ops\n' }, summary: 'metrics', expiresInSeconds: 3600,
  });
  for (const state of path) expect(await transitionProposal(db.pool, { proposalId: id, state, actorAccountId: chain.owner.account.id })).toBe(true);
  return id;
}

async function reservation(chain: RuntimeChain, cost: number) {
  const workflowId = `metrics-${randomUUID()}`;
  const outcome = await reserve(db.pool, {
    id: randomUUID(), organizationId: chain.organizationId, installationId: chain.installationId, operation: 'generate',
    keyHash: hex(workflowId), fingerprint: hex(workflowId), costMicrodollars: cost, workflowId, ttlMs: 60_000, reserveBy: Date.now() + 30_000,
  });
  expect(outcome.kind).not.toBe('settled');
  return workflowId;
}

/** Only authorizationUrl is used by startAttempt; the rest is never reached here. */
const oauthProvider: OAuthProvider = {
  authorizationUrl: () => 'https://accounts.example.test/o/oauth2/auth',
  exchangeCode: () => Promise.reject(new Error('not in this test')),
  refresh: () => Promise.reject(new Error('not in this test')),
  revoke: () => Promise.reject(new Error('not in this test')),
};

describe('domain metrics', () => {
  it('serves what an operator alerts on, read from Postgres, organizations by id only', async () => {
    expect((await pendingIntents(db.pool)).summary.pending).toBe(0);
    const chain = await buildRuntimeChain(db.pool);
    // An organization with a budget and installations but nothing done this month: no series of its own.
    const quiet = await buildRuntimeChain(db.pool);
    await setBudget(db.pool, quiet.organizationId, 1_000_000);
    const owner = chain.owner.account.id;

    // Proposals (each records its review's start: 5 pending starts) and their Forge executions.
    await proposalAt(chain, []);
    await proposalAt(chain, ['pending_review']);
    await proposalAt(chain, ['pending_review', 'rejected']);
    const failing = await proposalAt(chain, ['pending_review', 'approved', 'executing']);
    expect(await recordForgeFailure(db.pool, { proposalId: failing, kind: 'apply', code: 'internal_error', message: 'metrics' })).toBe('failed');
    const applied = await proposalAt(chain, ['pending_review', 'approved']);
    await runForgeExecution(db.pool, { proposalId: applied, kind: 'apply', actorAccountId: owner });

    // Webhook requests: delivered at attempts 1 and 6, failed at 1 and 2, skipped (endpoint disabled) at 3.
    const endpoint = async (path: string) =>
      (await createEndpoint(db.pool, secretBox, egress, { workspaceId: chain.workspaceId, accountId: owner, url: `${receiverBase}${path}`, eventTypes: ['metrics.subscribed'], description: path })).endpoint;
    const ok = await endpoint('/ok');
    const failingEndpoint = await endpoint('/fail');
    // Not subscribed to: no delivery workflow is recorded, the test makes the attempts itself.
    const { event } = await ingestEvent(db.pool, { workspaceId: chain.workspaceId, type: 'metrics.unsubscribed', source: 'test', occurredAt: null, data: {}, idempotencyKey: null, accountId: owner });
    const deliver = (endpointId: string, attempt: number) => attemptDelivery(db.pool, secretBox, egress, { endpointId, messageId: deliveryMessageId(event.id, endpointId), attempt, event });
    expect(await deliver(ok.id, 1)).toBe('delivered');
    expect(await deliver(failingEndpoint.id, 1)).toBe('failed');
    expect(await deliver(failingEndpoint.id, 2)).toBe('failed');
    expect(await deliver(ok.id, 6)).toBe('delivered');
    await disableEndpoint(db.pool, failingEndpoint.id, 'metrics');
    expect(await deliver(failingEndpoint.id, 3)).toBe('skipped');

    // Intelligence: 50,000 settled + 200,000 held of a 1,000,000 budget; a released one gives its reservation back.
    await setBudget(db.pool, chain.organizationId, 1_000_000);
    const settled = await reservation(chain, 100_000);
    await markDispatched(db.pool, settled);
    await completeReservation(db.pool, settled, { kind: 'settle', costMicrodollars: 50_000, model: 'm', inputTokens: null, outputTokens: null, images: null });
    await reservation(chain, 200_000);
    const released = await reservation(chain, 300_000);
    await completeReservation(db.pool, released, { kind: 'release', code: 'provider_refused' });

    // Operations: 2 of 8 this month.
    await setProductRuntimeSettings(db.pool, chain.organizationId, { apiOperationsPerMonth: 8 });
    const leases = new OperationLeases(db.pool);
    await leases.charge(chain.organizationId, 8);
    await leases.charge(chain.organizationId, 8);
    await leases.releaseAll();

    // Media: one upload under a cap of four times its size.
    const bytes = audioFixture('tone-3s.m4a');
    await setProductRuntimeSettings(db.pool, chain.organizationId, { mediaStorageBytes: bytes.length * 4 });
    const caller = { organizationId: chain.organizationId, installationId: chain.installationId, servicePrincipalId: chain.principalId, requestId: 'metrics' };
    await uploadAudio(db.pool, createPostgresBlobStore(db.pool), caller, { idempotencyKey: randomUUID(), reference: 'ops', declaredDurationMs: 3_000, bytes });

    // OAuth attempts (each records its workflow's start: 4 more pending starts): two failed, one expired, one pending.
    await setProductReturnTargets(db.pool, chain.productId, ['https://studio.example.test']);
    const attempt = async () =>
      (await startAttempt({ db: db.pool, secretBox, oauthProvider }, caller, { services: ['drive'], returnTarget: 'https://studio.example.test/done', redirectUri: 'https://api.example.test/callback' })).attemptId;
    await failAttempt(db.pool, await attempt(), 'oauth_consent_denied');
    await failAttempt(db.pool, await attempt(), 'oauth_provider_error');
    await expireAttempt(db.pool, await attempt());
    await attempt();

    // Console sessions: three opened, one signed out.
    const principal = { tokenId: chain.owner.tokenId, account: chain.owner.account };
    const first = await openSession(db.pool, { principal });
    await openSession(db.pool, { principal });
    await openSession(db.pool, { principal });
    expect(await endSessions(db.pool, { accountId: owner, sessionId: first.session.id })).toBe(1);

    const registry = createMetricsRegistry({ process: 'api' });
    registerDomainMetrics(registry, db.pool);
    const listener = await serveMetrics(registry, '127.0.0.1', 0);
    try {
      const res = await fetch(listener.url);
      expect(res.status).toBe(200);
      const text = await res.text();
      const line = (series: string) => text.split('\n').find((l) => l.startsWith(`${series} `));
      const value = (series: string) => Number(line(series)?.slice(series.length + 1));
      const expectValue = (series: string, expected: number) => expect([series, line(series)]).toEqual([series, `${series} ${expected}`]);

      expectValue('hnp_workflow_starts_pending{process="api"}', 9);
      expect(value('hnp_workflow_starts_oldest_pending_age_seconds{process="api"}')).toBeGreaterThan(0);
      expect(value('hnp_workflow_starts_oldest_pending_age_seconds{process="api"}')).toBeLessThan(300);
      // The note the applied proposal wrote, not indexed (no API process indexes here).
      expectValue('hnp_substring_index_queued_notes{process="api"}', 1);
      expect(value('hnp_substring_index_oldest_queued_age_seconds{process="api"}')).toBeGreaterThan(0);
      expect(value('hnp_substring_index_oldest_queued_age_seconds{process="api"}')).toBeLessThan(300);

      const proposals = { proposed: 1, pending_review: 1, approved: 0, rejected: 1, expired: 0, executing: 0, executed: 1, failed: 1, undoing: 0, undone: 0 };
      for (const [state, n] of Object.entries(proposals)) expectValue(`hnp_proposals{state="${state}",process="api"}`, n);

      expectValue('hnp_forge_executions_total{outcome="succeeded",process="api"}', 1);
      expectValue('hnp_forge_executions_total{outcome="failed",process="api"}', 1);

      const deliveries = { 'delivered,1': 1, 'delivered,6': 1, 'failed,1': 1, 'failed,2': 1, 'skipped,3': 1, 'delivered,2': 0, 'gone,1': 0, 'refused,1': 0, 'unknown,1': 0 };
      for (const [key, n] of Object.entries(deliveries)) {
        const [outcome, attemptNumber] = key.split(',');
        expectValue(`hnp_webhook_deliveries_total{outcome="${outcome}",attempt="${attemptNumber}",process="api"}`, n);
      }
      expect(text.match(/^hnp_webhook_deliveries_total\{/gm)).toHaveLength(6 * 6); // every outcome × attempt 1…6, zeros included

      const reservations = { reserved: 1, dispatched: 0, settled: 1, released: 1, billable_failure: 0, expired: 0 };
      for (const [state, n] of Object.entries(reservations)) expectValue(`hnp_intelligence_reservations{state="${state}",process="api"}`, n);

      const org = `organization_id="${chain.organizationId}",process="api"`;
      expectValue(`hnp_intelligence_budget_used_ratio{${org}}`, 0.25);
      expectValue(`hnp_operation_quota_used_ratio{${org}}`, 0.25);
      expectValue(`hnp_media_storage_used_bytes{${org}}`, bytes.length);
      expectValue(`hnp_media_storage_used_ratio{${org}}`, 0.25);

      expectValue('hnp_oauth_attempts_total{outcome="completed",process="api"}', 0);
      expectValue('hnp_oauth_attempts_total{outcome="failed",process="api"}', 2);
      expectValue('hnp_oauth_attempts_total{outcome="expired",process="api"}', 1);

      expectValue('hnp_console_sessions{process="api"}', 2);

      // Tenancy: an organization's series carry its id and nothing else of it; an organization with
      // nothing this month has none (though it has a budget).
      for (const l of text.split('\n').filter((l) => l.includes('organization_id='))) expect(l).toMatch(/^hnp_[a-z_]+\{organization_id="[0-9a-f-]{36}",process="api"\} [0-9.e+-]+$/);
      expect(text).not.toContain('District 9');
      expect(text).not.toContain(quiet.organizationId);

      // The scrape's cost with this data: a few milliseconds (one connection, ten aggregate statements).
      const times: number[] = [];
      for (let i = 0; i < 10; i++) {
        const started = performance.now();
        expect((await fetch(listener.url)).status).toBe(200);
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      console.log(`metrics scrape (default metrics + domain metrics): median ${times[5]!.toFixed(1)} ms, max ${times[9]!.toFixed(1)} ms over 10 scrapes`);
      expect(times[5]).toBeLessThan(500);
    } finally {
      await listener.close();
    }
  });

  it('answers 503 rather than a partial page when Postgres cannot be read', async () => {
    const registry = createMetricsRegistry({ process: 'api' });
    const broken = { connect: () => Promise.reject(new Error('database unreachable')) } as unknown as Parameters<typeof registerDomainMetrics>[1];
    registerDomainMetrics(registry, broken);
    const listener = await serveMetrics(registry, '127.0.0.1', 0);
    try {
      expect((await fetch(listener.url)).status).toBe(503);
    } finally {
      await listener.close();
    }
  });
});
