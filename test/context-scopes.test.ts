// Context scopes and shared memory through the Product Runtime, end to end on a real worker: the
// server resolves everything but the scope id; a memory candidate is invisible until a person
// other than its proposer approves it and Forge executes it; undo removes it again.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createScope, grantScope, revokeScopeGrant, setScopePolicy } from '../domain/context-scopes/scopes.ts';
import { addMember } from '../domain/identity/workspaces.ts';
import { scopes as allScopes } from '../domain/product-runtime/entities.ts';
import { buildTestApp } from './support/app.ts';
import { devClient } from './support/dev-client.ts';
import { accountWithToken } from './support/fixtures.ts';
import { useTestAppWithWorker } from './support/harness.ts';
import { unreachableIntelligence } from './support/scripted-provider.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';

const ctx = useTestAppWithWorker({ name: 'scopes' });

/** A chain with a course scope under a workspace scope, both granted to the installation. */
async function scopedChain(options: { scopes?: typeof allScopes[number][] } = {}) {
  const chain = await buildRuntimeChain(ctx.db.pool, options.scopes ? { scopes: options.scopes } : {});
  await createScope(ctx.db.pool, {
    workspaceId: chain.workspaceId,
    scopeKey: 'district',
    name: 'District',
    kind: 'workspace',
    audienceKind: 'workspace_members',
    audienceDescription: 'Every member of the district workspace',
    policy: { retentionDays: 365, intelligence: { use: 'forbidden' } },
  });
  await createScope(ctx.db.pool, {
    workspaceId: chain.workspaceId,
    scopeKey: 'course-algebra-1',
    name: 'Algebra I',
    kind: 'course',
    parentKey: 'district',
    audienceKind: 'course_educators',
    audienceDescription: 'Educators teaching Algebra I',
    vaultId: chain.vaultId,
    policy: { intelligence: { use: 'allowed' } },
  });
  await grantScope(ctx.db.pool, { workspaceId: chain.workspaceId, scopeKey: 'district', installationId: chain.installationId });
  const grant = await grantScope(ctx.db.pool, { workspaceId: chain.workspaceId, scopeKey: 'course-algebra-1', installationId: chain.installationId });
  return { ...chain, courseGrantId: grant.id };
}

/** A reviewer (automation.review) in the chain's workspace, other than anyone involved. */
async function reviewerOf(chain: RuntimeChain) {
  const reviewer = await accountWithToken(ctx.db.pool, 'team');
  await addMember(ctx.db.pool, { workspaceId: chain.workspaceId, accountId: reviewer.account.id, role: 'reviewer' });
  return devClient(ctx.app, reviewer.token);
}

async function waitForState(owner: ReturnType<typeof devClient>, id: string, states: string[]) {
  const until = Date.now() + 15_000;
  for (;;) {
    const res = await owner.request('GET', `/api/dev/automation/proposals/${id}`);
    if (states.includes(res.data.state)) return res.data;
    if (Date.now() > until) throw new Error(`proposal ${id} stayed ${String(res.data.state)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('context scopes', () => {
  it('lists only granted scopes and resolves audience, ancestry and vault authority on the server', async () => {
    const chain = await scopedChain();
    const client = runtimeClient(ctx.app, chain.secret);
    const list = await client.request('GET', '/scopes');
    expect(list.data).toMatchObject({ kind: 'runtime.scope-list', status: 'complete' });
    expect(list.data.data.scopes).toEqual([
      { scopeId: 'course-algebra-1', name: 'Algebra I', kind: 'course', parentScopeId: 'district' },
      { scopeId: 'district', name: 'District', kind: 'workspace', parentScopeId: null },
    ]);
    const page = await client.request('GET', '/scopes?limit=1');
    expect(page.data.data).toMatchObject({ hasMore: true, scopes: [{ scopeId: 'course-algebra-1' }] });
    expect((await client.request('GET', `/scopes?limit=1&cursor=${encodeURIComponent(page.data.data.nextCursor)}`)).data.data).toMatchObject({ hasMore: false, scopes: [{ scopeId: 'district' }] });

    const context = await client.request('GET', '/scopes/course-algebra-1', { headers: { 'x-service-audience': 'all-students' } });
    expect(context.data).toMatchObject({
      status: 'complete',
      data: {
        scope: { scopeId: 'course-algebra-1', parentScopeId: 'district' },
        ancestry: [{ scopeId: 'district' }],
        audience: { kind: 'course_educators', description: 'Educators teaching Algebra I' },
        workspace: { id: chain.workspaceId },
        vault: { vaultId: chain.vaultId, access: 'write' },
      },
    });
    // Without a grant on the scope's vault the context is partial: the authority is named, not invented.
    const noVault = await buildRuntimeChain(ctx.db.pool, { access: null, organization: { id: chain.organizationId, workspaceId: chain.workspaceId } });
    await grantScope(ctx.db.pool, { workspaceId: chain.workspaceId, scopeKey: 'course-algebra-1', installationId: noVault.installationId });
    expect((await runtimeClient(ctx.app, noVault.secret).request('GET', '/scopes/course-algebra-1')).data).toMatchObject({
      status: 'partial',
      data: { vault: { vaultId: chain.vaultId, access: null } },
      missing: [{ part: 'vault', reason: 'grant_missing' }],
    });
  });

  it('inherits policy root to leaf and says where each setting comes from', async () => {
    const chain = await scopedChain();
    const policy = await runtimeClient(ctx.app, chain.secret).request('GET', '/scopes/course-algebra-1/policy');
    expect(policy.data.data).toEqual({
      scopeId: 'course-algebra-1',
      settings: [
        { key: 'memory.candidates', value: 'allowed', sourceScopeId: null },
        { key: 'memory.maxEntries', value: 1000, sourceScopeId: null },
        { key: 'intelligence.use', value: 'allowed', sourceScopeId: 'course-algebra-1' },
        { key: 'retentionDays', value: 365, sourceScopeId: 'district' },
      ],
    });
  });

  it('getScopeIntelligence is unavailable without a provider, never assumed', async () => {
    const chain = await scopedChain();
    const client = runtimeClient(ctx.app, chain.secret);
    expect((await client.request('GET', '/scopes/course-algebra-1/intelligence')).data).toEqual({
      runtimeVersion: '1',
      kind: 'runtime.scope-intelligence',
      status: 'unavailable',
      data: null,
      missing: [{ part: 'intelligence', reason: 'capability_not_configured', detail: 'No model provider is configured on this service.' }],
    });
    const configured = await buildTestApp(ctx.db.pool, { intelligence: unreachableIntelligence() });
    try {
      const withProvider = runtimeClient(configured, chain.secret);
      expect((await withProvider.request('GET', '/scopes/course-algebra-1/intelligence')).data.data).toEqual({ scopeId: 'course-algebra-1', allowed: true, reason: null });
      expect((await withProvider.request('GET', '/scopes/district/intelligence')).data.data).toMatchObject({ allowed: false });
      const unscoped = await scopedChain({ scopes: ['scopes.read'] });
      expect((await runtimeClient(configured, unscoped.secret).request('GET', '/scopes/district/intelligence')).data).toMatchObject({
        status: 'unavailable',
        missing: [{ reason: 'scope_missing', scope: 'intelligence.execute' }],
      });
    } finally {
      await configured.close();
    }
  });

  it("refuses another organization's, an ungranted, a revoked and a malformed scope id exactly like a missing one", async () => {
    const a = await scopedChain();
    const b = await scopedChain();
    const strip = (d: Record<string, unknown>) => ({ ...d, detail: undefined, instance: undefined, requestId: undefined });
    const missing = await runtimeClient(ctx.app, b.secret).request('GET', '/scopes/no-such-scope');
    expect(missing.statusCode).toBe(404);
    expect(missing.data).toMatchObject({ code: 'context_scope_not_found' });
    // b has its own course-algebra-1; a's id under a's workspace is unreachable for b, and vice versa.
    await createScope(ctx.db.pool, { workspaceId: a.workspaceId, scopeKey: 'only-in-a', name: 'A only', kind: 'team', audienceKind: 'team_members', audienceDescription: 'A team' });
    await grantScope(ctx.db.pool, { workspaceId: a.workspaceId, scopeKey: 'only-in-a', installationId: a.installationId });
    for (const path of ['/scopes/only-in-a', '/scopes/only-in-a/policy', '/scopes/only-in-a/memory', '/scopes/only-in-a/intelligence', '/scopes/UPPER', '/scopes/..%2F..']) {
      const res = await runtimeClient(ctx.app, b.secret).request('GET', path);
      expect(res.statusCode, path).toBe(404);
      expect(strip(res.data), path).toEqual(strip(missing.data));
    }
    // An id of any length up to the path limit, on every scope route, is the same 404 (issue 27: over
    // 200 characters was a 400 invalid_request), charged like the missing one so nothing tells them apart.
    const long = 'a'.repeat(201);
    const overLong = [`/scopes/${long}`, `/scopes/${long}/policy`, `/scopes/${'b'.repeat(1_000)}/memory`, `/scopes/${long}/memory-candidates/${randomUUID()}`];
    for (const path of overLong) {
      const res = await runtimeClient(ctx.app, b.secret).request('GET', path);
      expect(res.statusCode, path).toBe(404);
      expect(strip(res.data), path).toEqual(strip(missing.data));
      expect(res.headers['ratelimit'], path).toBeDefined();
    }
    expect(missing.headers['ratelimit']).toBeDefined();
    const proposed = await runtimeClient(ctx.app, b.secret).request('POST', `/scopes/${long}/memory-candidates`, { body: { content: 'x' }, headers: { 'idempotency-key': randomUUID() } });
    expect(proposed.statusCode).toBe(404);
    expect(strip(proposed.data)).toEqual(strip(missing.data));
    await revokeScopeGrant(ctx.db.pool, a.courseGrantId);
    expect((await runtimeClient(ctx.app, a.secret).request('GET', '/scopes/course-algebra-1')).data).toMatchObject({ code: 'context_scope_not_found' });
    expect((await runtimeClient(ctx.app, a.secret).request('GET', '/scopes')).data.data.scopes.map((s: { scopeId: string }) => s.scopeId)).toEqual(['district', 'only-in-a']);
  });

  it('needs scopes.read to read and memory.propose to propose', async () => {
    const chain = await scopedChain({ scopes: allScopes.filter((s) => s !== 'scopes.read' && s !== 'memory.propose') });
    const client = runtimeClient(ctx.app, chain.secret);
    for (const path of ['/scopes', '/scopes/district', '/scopes/district/policy', '/scopes/district/intelligence', '/scopes/district/memory']) {
      expect((await client.request('GET', path)).data, path).toMatchObject({ code: 'scope_missing', failedLink: 'credential_scope' });
    }
    const propose = await client.request('POST', '/scopes/district/memory-candidates', { body: { content: 'x' }, headers: { 'idempotency-key': randomUUID() } });
    expect(propose.data).toMatchObject({ code: 'scope_missing' });
  });
});

describe('shared memory candidates', () => {
  it('stay invisible until a person other than the proposer approves and Forge executes them; undo removes them again', async () => {
    const chain = await scopedChain();
    const client = runtimeClient(ctx.app, chain.secret);
    const key = randomUUID();
    const body = { content: 'Students confuse slope with intercept when graphs start above zero.', rationale: 'Seen in three classes' };
    const created = await client.request('POST', '/scopes/course-algebra-1/memory-candidates', { body, headers: { 'idempotency-key': key } });
    expect(created.statusCode).toBe(201);
    expect(created.data).toMatchObject({
      kind: 'runtime.memory-candidate',
      status: 'partial',
      // Opened with the candidate: reviewable at once (decision 96).
      data: { scopeId: 'course-algebra-1', replayed: false, state: 'pending_review' },
      missing: [{ part: 'memory', reason: 'review_pending' }],
    });
    const proposalId = created.data.data.proposalId as string;
    const owner = devClient(ctx.app, chain.owner.token);
    const pending = await waitForState(owner, proposalId, ['pending_review']);
    expect(pending).toMatchObject({ actionKind: 'memory.promote', bridge: 'product-runtime', proposerAccountId: null, proposerPrincipalId: chain.principalId });
    expect((await client.request('GET', '/scopes/course-algebra-1/memory')).data.data.items).toEqual([]);
    const follow = () => client.request('GET', `/scopes/course-algebra-1/memory-candidates/${proposalId}`);
    expect((await follow()).data).toMatchObject({
      kind: 'runtime.memory-candidate-status',
      status: 'partial',
      data: { candidateId: proposalId, state: 'pending_review', shared: false, decision: null, receipts: [] },
      missing: [{ reason: 'review_pending' }],
    });
    // Another installation's credential, even of the same organization and scope, cannot follow it.
    const sibling = await buildRuntimeChain(ctx.db.pool, { organization: { id: chain.organizationId, workspaceId: chain.workspaceId } });
    await grantScope(ctx.db.pool, { workspaceId: chain.workspaceId, scopeKey: 'course-algebra-1', installationId: sibling.installationId });
    const foreign = await runtimeClient(ctx.app, sibling.secret).request('GET', `/scopes/course-algebra-1/memory-candidates/${proposalId}`);
    const unknown = await client.request('GET', `/scopes/course-algebra-1/memory-candidates/${randomUUID()}`);
    expect(foreign.statusCode).toBe(404);
    expect({ ...foreign.data, instance: null, requestId: null }).toEqual({ ...unknown.data, instance: null, requestId: null });
    expect((await client.request('GET', `/scopes/district/memory-candidates/${proposalId}`)).data).toMatchObject({ code: 'proposal_not_found' });

    // The service principal has no way to decide: the automation gateway takes personal access tokens only.
    const forged = await ctx.app.inject({ method: 'POST', url: `/api/dev/automation/proposals/${proposalId}/approve`, headers: { authorization: `Bearer ${chain.secret}` }, payload: {} });
    expect(forged.statusCode).toBe(401);
    // A member without automation.review cannot either.
    const editor = await accountWithToken(ctx.db.pool, 'team');
    await addMember(ctx.db.pool, { workspaceId: chain.workspaceId, accountId: editor.account.id, role: 'editor' });
    expect((await devClient(ctx.app, editor.token).request('POST', `/api/dev/automation/proposals/${proposalId}/approve`, { body: {} })).data).toMatchObject({
      code: 'permission_denied',
    });

    const reviewer = await reviewerOf(chain);
    expect((await reviewer.request('POST', `/api/dev/automation/proposals/${proposalId}/approve`, { body: { reason: 'accurate' } })).data).toMatchObject({ state: 'approved' });
    const executed = await waitForState(owner, proposalId, ['executed', 'failed']);
    expect(executed.state).toBe('executed');
    expect(executed.executions[0].receipt.changes).toEqual([
      { path: `scope-memory/course-algebra-1/${proposalId}`, operation: 'create', beforeRevision: null, afterRevision: null, eventId: null },
    ]);
    const memory = await client.request('GET', '/scopes/course-algebra-1/memory');
    expect(memory.data).toMatchObject({ status: 'complete', data: { scopeId: 'course-algebra-1', hasMore: false } });
    expect(memory.data.data.items).toEqual([expect.objectContaining({ memoryId: proposalId, proposalId, content: body.content, scopeId: 'course-algebra-1' })]);
    // Memory is per scope: the parent does not show it.
    expect((await client.request('GET', '/scopes/district/memory')).data.data.items).toEqual([]);
    expect((await follow()).data).toMatchObject({
      status: 'complete',
      data: { state: 'executed', shared: true, decision: { decision: 'approved', reason: 'accurate' }, receipts: [{ kind: 'apply', changes: [{ operation: 'create' }] }] },
      missing: [],
    });

    expect((await reviewer.request('POST', `/api/dev/automation/proposals/${proposalId}/undo`)).statusCode).toBe(202);
    expect((await waitForState(owner, proposalId, ['undone', 'executed'])).state).toBe('undone');
    expect((await client.request('GET', '/scopes/course-algebra-1/memory')).data.data.items).toEqual([]);
    expect((await follow()).data.data).toMatchObject({ state: 'undone', shared: false, receipts: [{ kind: 'apply' }, { kind: 'undo', changes: [{ operation: 'remove' }] }] });
  });

  it('is idempotent: a replay answers the same candidate, another body is 422, parallel calls make one proposal', async () => {
    const chain = await scopedChain();
    const client = runtimeClient(ctx.app, chain.secret);
    const key = randomUUID();
    const post = (content: string, k = key) => client.request('POST', '/scopes/district/memory-candidates', { body: { content }, headers: { 'idempotency-key': k } });
    const results = await Promise.all(Array.from({ length: 12 }, () => post('Parents prefer Friday updates.')));
    for (const r of results) expect([201, 409]).toContain(r.statusCode);
    const ids = new Set(results.filter((r) => r.statusCode === 201).map((r) => r.data.data.proposalId));
    expect(ids.size).toBe(1);
    const replay = await post('Parents prefer Friday updates.');
    expect(replay.data.data).toMatchObject({ proposalId: [...ids][0], replayed: true });
    expect((await post('Something else.')).data).toMatchObject({ code: 'idempotency_key_reused', status: 422 });
    expect((await client.request('POST', '/scopes/district/memory-candidates', { body: { content: 'x' } })).data).toMatchObject({ code: 'idempotency_key_required' });
    const listed = await devClient(ctx.app, chain.owner.token).request('GET', `/api/dev/automation/proposals?workspaceId=${chain.workspaceId}`);
    expect(listed.data.proposals.filter((p: { actionKind: string }) => p.actionKind === 'memory.promote')).toHaveLength(1);
  });

  it('refuses bad input and a scope whose policy forbids candidates', async () => {
    const chain = await scopedChain();
    const client = runtimeClient(ctx.app, chain.secret);
    const post = (body: unknown) => client.request('POST', '/scopes/district/memory-candidates', { body, headers: { 'idempotency-key': randomUUID() } });
    for (const body of [{}, { content: '' }, { content: 'x'.repeat(10_001) }, { content: 'x', rationale: 'y'.repeat(2_001) }, { content: 'x', audience: 'everyone' }, { content: 42 }]) {
      expect((await post(body)).data, JSON.stringify(body).slice(0, 50)).toMatchObject({ code: 'invalid_request' });
    }
    await setScopePolicy(ctx.db.pool, { workspaceId: chain.workspaceId, scopeKey: 'district', policy: { memory: { candidates: 'forbidden' } } });
    expect((await post({ content: 'x' })).data).toMatchObject({ code: 'permission_denied', policy: 'memory.candidates' });
    // The child inherits the prohibition.
    expect((await client.request('POST', '/scopes/course-algebra-1/memory-candidates', { body: { content: 'x' }, headers: { 'idempotency-key': randomUUID() } })).data).toMatchObject({
      code: 'permission_denied',
    });
  });
});
