// Proposals → review (Workflow Update with a synchronous validator) → Forge → receipt → undo, on
// real Postgres and the real Temporal dev server with the real platform worker.
import { Client } from '@temporalio/client';
import type { Connection } from '@temporalio/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { proposalExecutions, proposalHistory } from '../domain/automation/proposals.ts';
import { createMapping, createVault, revokeMapping } from '../domain/identity/vaults.ts';
import { addMember, createRole, createWorkspace } from '../domain/identity/workspaces.ts';
import { revisionOf } from '../domain/notes/markdown.ts';
import type { TestDatabase } from './support/database.ts';
import { useTestAppWithWorker } from './support/harness.ts';
import { devClient } from './support/dev-client.ts';
import type { DevClient } from './support/dev-client.ts';
import { accountWithToken } from './support/fixtures.ts';
import type { FastifyInstance } from 'fastify';

const ctx = useTestAppWithWorker({ name: 'automation', overrides: { proposalExpirySeconds: 3600 } });
let db: TestDatabase;
let app: FastifyInstance;
let clientConnection: Connection;

let proposer: DevClient;
let reviewer: DevClient;
let viewer: DevClient;
let stranger: DevClient;
let proposerId: string;
let workspaceId: string;
let mappingId: string;
let teamVaultId: string;

beforeAll(async () => {
  ({ db, app, temporal: clientConnection } = ctx);

  const p = await accountWithToken(db.pool, 'team');
  const r = await accountWithToken(db.pool, 'developer_agent');
  const v = await accountWithToken(db.pool, 'developer_agent');
  const s = await accountWithToken(db.pool, 'team');
  proposerId = p.account.id;
  const ws = await createWorkspace(db.pool, { name: 'Automation', ownerAccountId: p.account.id });
  workspaceId = ws.id;
  await addMember(db.pool, { workspaceId, accountId: r.account.id, role: 'reviewer' });
  await createRole(db.pool, { workspaceId, name: 'watcher', permissions: ['automation.view', 'vault.read'] });
  await addMember(db.pool, { workspaceId, accountId: v.account.id, role: 'watcher' });
  const vault = await createVault(db.pool, { name: 'Team vault', ownerWorkspaceId: workspaceId });
  teamVaultId = vault.id;
  ({ mappingId } = await createMapping(db.pool, { vaultId: vault.id }));
  proposer = devClient(app, p.token);
  reviewer = devClient(app, r.token);
  viewer = devClient(app, v.token);
  stranger = devClient(app, s.token);
});

let keyCounter = 0;
const propose = (action: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  proposer.request('POST', '/api/dev/automation/proposals', {
    body: { workspaceId, bridge: 'test-bridge', action, summary: 'test', ...extra },
    headers: { 'idempotency-key': `p-${++keyCounter}` },
  });

async function waitForState(id: string, states: string[], timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await proposer.request('GET', `/api/dev/automation/proposals/${id}`);
    if (states.includes(res.data.state as string)) return res.data;
    if (Date.now() > until) throw new Error(`proposal ${id} stayed ${String(res.data.state)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('review', () => {
  it('refuses self-approval and reviewers without the permission; a reviewer approves; Forge executes with a receipt', async () => {
    const created = await propose({ kind: 'note.write', mappingId, path: 'Auto/Plan.md', content: '# Plan\n' });
    expect(created.statusCode).toBe(201);
    const id = created.data.id as string;
    // Opened with the proposal (decision 96): reviewable as soon as it is acknowledged.
    expect(created.data).toMatchObject({ state: 'pending_review', workflowId: `proposal-review-${id}`, actionKind: 'note.write' });
    expect((await proposer.request('GET', `/api/dev/automation/proposals/${id}`)).data.state).toBe('pending_review');
    // A proposal is never execution: nothing was written yet.
    expect((await proposer.read(mappingId, 'Auto/Plan.md')).statusCode).toBe(404);

    const self = await proposer.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} });
    expect(self.statusCode).toBe(403);
    expect(self.data.code).toBe('self_approval_forbidden');
    const agentForProposer = await reviewer.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: { actingForAccountId: proposerId } });
    expect(agentForProposer.data.code).toBe('self_approval_forbidden');
    const noPermission = await viewer.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} });
    expect(noPermission.statusCode).toBe(403);
    expect(noPermission.data.code).toBe('permission_denied');
    expect((await stranger.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} })).data.code).toBe('proposal_not_found');

    const approved = await reviewer.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: { reason: 'looks right' } });
    expect(approved.data).toEqual({ id, state: 'approved' });
    // The API records the decision before it answers (decision 94): a read right after it sees it.
    const readBack = await reviewer.request('GET', `/api/dev/automation/proposals/${id}`);
    expect(['approved', 'executing', 'executed']).toContain(readBack.data.state);
    const done = await waitForState(id, ['executed', 'failed']);
    expect(done.state).toBe('executed');
    expect(done.history.map((h: { state: string }) => h.state)).toEqual(['proposed', 'pending_review', 'approved', 'executing', 'executed']);
    const apply = done.executions.find((e: { kind: string }) => e.kind === 'apply');
    expect(apply).toMatchObject({
      state: 'succeeded',
      undoPlan: { mappingId, entries: [{ path: 'Auto/Plan.md', before: null }] },
      receipt: { proposalId: id, kind: 'apply', changes: [{ path: 'Auto/Plan.md', operation: 'create', afterRevision: revisionOf('# Plan\n'), eventId: expect.any(String) }] },
    });
    const events = (await proposer.events(mappingId)).data.events as Array<{ source: string; actor: { type: string; id: string } }>;
    expect(events[0]).toMatchObject({ source: 'forge', actor: { type: 'forge', id } });
    expect((await reviewer.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} })).data.code).toBe('proposal_not_pending');
  });

  it('rejects through the reviewer, and lists by state', async () => {
    const created = await propose({ kind: 'note.write', mappingId, path: 'Auto/No.md', content: 'no' });
    const id = created.data.id as string;
    await waitForState(id, ['pending_review']);
    expect((await reviewer.request('POST', `/api/dev/automation/proposals/${id}/reject`, { body: { reason: 'not now' } })).data.state).toBe('rejected');
    const rejected = await waitForState(id, ['rejected']);
    expect(rejected).toMatchObject({ decisionReason: 'not now' });
    const list = await viewer.request('GET', `/api/dev/automation/proposals?workspaceId=${workspaceId}&state=rejected`);
    expect((list.data.proposals as Array<{ id: string }>).map((p) => p.id)).toContain(id);
    expect((await stranger.request('GET', `/api/dev/automation/proposals?workspaceId=${workspaceId}`)).data.code).toBe('workspace_not_found');
  });

  // Expiry itself (in skipped time) is in test/workflows/proposal-review.test.ts.
  it('does not revive a decided proposal when its POST is retried', async () => {
    const body = { workspaceId, bridge: 'test-bridge', action: { kind: 'note.write', mappingId, path: 'Auto/Late.md', content: 'late' } };
    const created = await proposer.request('POST', '/api/dev/automation/proposals', { body, headers: { 'idempotency-key': 'late-1' } });
    const id = created.data.id as string;
    await waitForState(id, ['pending_review']);
    expect((await reviewer.request('POST', `/api/dev/automation/proposals/${id}/reject`, { body: {} })).data.state).toBe('rejected');
    await waitForState(id, ['rejected']);
    const client = new Client({ connection: clientConnection, namespace: 'default' });
    expect(await client.workflow.getHandle(`proposal-review-${id}`).result()).toBe('rejected');

    const retried = await proposer.request('POST', '/api/dev/automation/proposals', { body, headers: { 'idempotency-key': 'late-1' } });
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(retried.data.id).toBe(id);
    // No second review started: the closed one is the only run, and the proposal stays rejected.
    const runs: string[] = [];
    for await (const wf of client.workflow.list({ query: `WorkflowId = "proposal-review-${id}"` })) runs.push(wf.runId);
    expect(runs).toHaveLength(1);
    const after = (await proposer.request('GET', `/api/dev/automation/proposals/${id}`)).data;
    expect(after.history.map((h: { state: string }) => h.state)).toEqual(['proposed', 'pending_review', 'rejected']);
    expect((await reviewer.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} })).data.code).toBe('proposal_not_pending');
  });

  // Between the decision's read (pending in the database) and its update-with-start, the review can
  // end without the database hearing of it yet (here: terminated by an operator). The start of the
  // update-with-start is refused (the closed run is never started again) and the answer is 409.
  it('answers proposal_not_pending when the review ended after the read, and starts no second review', async () => {
    const created = await propose({ kind: 'note.write', mappingId, path: 'Auto/Ended.md', content: 'ended' });
    const id = created.data.id as string;
    await waitForState(id, ['pending_review']);
    const client = new Client({ connection: clientConnection, namespace: 'default' });
    await client.workflow.getHandle(`proposal-review-${id}`).terminate('an operator ended the review');
    const refused = await reviewer.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} });
    expect(refused.statusCode).toBe(409);
    expect(refused.data).toMatchObject({ code: 'proposal_not_pending' });
    const runs: string[] = [];
    for await (const wf of client.workflow.list({ query: `WorkflowId = "proposal-review-${id}"` })) runs.push(wf.runId);
    expect(runs).toHaveLength(1);
    // Nothing was decided or executed.
    const after = (await proposer.request('GET', `/api/dev/automation/proposals/${id}`)).data;
    expect(after.state).toBe('pending_review');
    expect(after.receipt ?? null).toBeNull();
  });

  it('lets policy reject a target outside the workspace before review', async () => {
    const own = await accountWithToken(db.pool, 'team');
    const vault = await createVault(db.pool, { name: 'Private', ownerAccountId: own.account.id });
    const foreign = await createMapping(db.pool, { vaultId: vault.id });
    const created = await propose({ kind: 'note.write', mappingId: foreign.mappingId, path: 'X/Y.md', content: 'x' });
    // The answer says so, with the reason: the policy ran in the transaction that stored it.
    expect(created.statusCode).toBe(201);
    expect(created.data).toMatchObject({ state: 'rejected', decisionReason: 'The target mapping is not a vault of this workspace.' });
    const rejected = await waitForState(created.data.id as string, ['rejected']);
    expect(rejected.history.map((h: { state: string }) => h.state)).toEqual(['proposed', 'rejected']);
    expect(rejected.history[1]).toMatchObject({ state: 'rejected', detail: { by: 'policy' } });
    // Its review workflow ran and closed with it; a reviewer's decision is refused.
    const closed = await new Client({ connection: clientConnection, namespace: 'default' }).workflow.getHandle(`proposal-review-${created.data.id as string}`).result();
    expect(closed).toBe('rejected');
    expect((await reviewer.request('POST', `/api/dev/automation/proposals/${created.data.id as string}/approve`, { body: {} })).data.code).toBe('proposal_not_pending');
  });

  it('creates a proposal once per Idempotency-Key and needs automation.manage', async () => {
    const body = { workspaceId, bridge: 'test-bridge', action: { kind: 'note.write', mappingId, path: 'Auto/Once.md', content: 'once' } };
    const [a, b] = await Promise.all([1, 2].map(() => proposer.request('POST', '/api/dev/automation/proposals', { body, headers: { 'idempotency-key': 'same-proposal' } })));
    const ok = [a!, b!].filter((r) => r.statusCode === 201);
    expect(new Set(ok.map((r) => r.data.id)).size).toBe(1);
    // Every 201, the replayed one too, says where the proposal is.
    for (const r of ok) expect(r.headers['location']).toBe(`/api/dev/automation/proposals/${r.data.id}`);
    expect((await proposer.request('GET', ok[0]!.headers['location'] as string)).data).toMatchObject({ id: ok[0]!.data.id });
    expect((await viewer.request('POST', '/api/dev/automation/proposals', { body, headers: { 'idempotency-key': 'v1' } })).data.code).toBe('permission_denied');
    expect((await proposer.request('POST', '/api/dev/automation/proposals', { body: { ...body, action: { kind: 'shell.exec', cmd: 'rm -rf /' } }, headers: { 'idempotency-key': 'bad' } })).statusCode).toBe(400);
  });
});

describe('operations', () => {
  it('lets an operator filter the workflows by typed search attributes', async () => {
    const created = await propose({ kind: 'note.write', mappingId, path: 'Auto/Search.md', content: 'sa' });
    await waitForState(created.data.id as string, ['pending_review']);
    const client = new Client({ connection: clientConnection, namespace: 'default' });
    let ids: string[] = [];
    for (let i = 0; i < 100 && !ids.includes(`proposal-review-${created.data.id}`); i++) {
      ids = [];
      for await (const wf of client.workflow.list({ query: `WorkspaceId = "${workspaceId}" AND ActionKind = "note.write" AND ProposalState = "pending_review"` })) ids.push(wf.workflowId);
      if (!ids.includes(`proposal-review-${created.data.id}`)) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ids).toContain(`proposal-review-${created.data.id}`);
  });

  it('shows a failed Forge apply as Failed in the workflow history and the visibility API, after recording the failed state', async () => {
    const base = await proposer.apply({ mappingId, path: 'Auto/Stale.md', content: 'one' });
    const created = await propose({ kind: 'note.write', mappingId, path: 'Auto/Stale.md', content: 'from forge', expectedHash: base.data.afterRevision });
    const id = created.data.id as string;
    await waitForState(id, ['pending_review']);
    // The note changes under the proposal: the approved write is now stale and must fail.
    await proposer.apply({ mappingId, path: 'Auto/Stale.md', content: 'two', expectedHash: base.data.afterRevision });
    await reviewer.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} });
    const failed = await waitForState(id, ['failed', 'executed']);
    expect(failed.state).toBe('failed');
    expect((await proposer.read(mappingId, 'Auto/Stale.md')).data.content).toBe('two');

    // The apply runs in the review workflow, which recorded the failed state and then failed itself.
    const client = new Client({ connection: clientConnection, namespace: 'default' });
    const review = client.workflow.getHandle(`proposal-review-${id}`);
    await expect(review.result()).rejects.toMatchObject({ cause: { type: 'revision_conflict' } });
    expect((await review.describe()).status.name).toBe('FAILED');
    // And an operator finds it through the visibility API as Failed, with its proposal's state.
    let listed: string[] = [];
    for (let i = 0; i < 100 && !listed.includes(`proposal-review-${id}`); i++) {
      listed = [];
      for await (const wf of client.workflow.list({ query: `WorkspaceId = "${workspaceId}" AND ExecutionStatus = "Failed" AND ProposalState = "failed"` })) listed.push(wf.workflowId);
      if (!listed.includes(`proposal-review-${id}`)) await new Promise((r) => setTimeout(r, 100));
    }
    expect(listed).toContain(`proposal-review-${id}`);
  });
});

describe('a target gone before the apply', () => {
  it('fails the apply as mapping_not_found when the mapping was revoked after the proposal was opened', async () => {
    const { mappingId: doomed } = await createMapping(db.pool, { vaultId: teamVaultId });
    const created = await propose({ kind: 'note.write', mappingId: doomed, path: 'Auto/Gone.md', content: 'never written' });
    const id = created.data.id as string;
    expect(created.data.state).toBe('pending_review');
    await revokeMapping(db.pool, doomed);
    await reviewer.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} });
    const failed = await waitForState(id, ['failed', 'executed']);
    expect(failed.state).toBe('failed');
    expect(failed.executions).toMatchObject([{ kind: 'apply', state: 'failed', error: { code: 'mapping_not_found' } }]);
    expect((await proposer.read(mappingId, 'Auto/Gone.md')).statusCode).toBe(404);
  });
});

describe('undo', () => {
  it('restores the prior revisions through the knowledge core as a new execution', async () => {
    const base = await proposer.apply({ mappingId, path: 'Undo/Doc.md', content: 'original' });
    const created = await propose({
      kind: 'note.transaction',
      mappingId,
      actions: [
        { type: 'write-note', path: 'Undo/Doc.md', content: 'changed by forge', expectedHash: base.data.afterRevision },
        { type: 'write-note', path: 'Undo/New.md', content: 'brand new' },
      ],
    });
    const id = created.data.id as string;
    await waitForState(id, ['pending_review']);
    await reviewer.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} });
    await waitForState(id, ['executed']);
    expect((await proposer.read(mappingId, 'Undo/Doc.md')).data.content).toBe('changed by forge');

    expect((await viewer.request('POST', `/api/dev/automation/proposals/${id}/undo`)).data.code).toBe('permission_denied');
    expect((await proposer.request('POST', `/api/dev/automation/proposals/${id}/undo`)).data.code).toBe('self_approval_forbidden');
    const undo = await reviewer.request('POST', `/api/dev/automation/proposals/${id}/undo`);
    expect(undo.statusCode).toBe(202);
    const undone = await waitForState(id, ['undone', 'executed']);
    expect(undone.state, JSON.stringify(undone.executions)).toBe('undone');
    const doc = await proposer.read(mappingId, 'Undo/Doc.md');
    expect(doc.data).toMatchObject({ content: 'original', revision: revisionOf('original') });
    expect((await proposer.read(mappingId, 'Undo/New.md')).statusCode).toBe(404);
    expect((await reviewer.request('POST', `/api/dev/automation/proposals/${id}/undo`)).data.code).toBe('proposal_not_executed');
    // The record is read in one statement: it says what the proposal's own readers say, in their order and form.
    const record = (await proposer.request('GET', `/api/dev/automation/proposals/${id}`)).data;
    expect(record.history).toEqual(JSON.parse(JSON.stringify(await proposalHistory(db.pool, id))));
    expect(record.executions).toEqual(JSON.parse(JSON.stringify(await proposalExecutions(db.pool, id))));
    expect(record.history.map((h: { state: string }) => h.state)).toEqual(['proposed', 'pending_review', 'approved', 'executing', 'executed', 'undoing', 'undone']);
    expect(record.executions.map((e: { kind: string }) => e.kind)).toEqual(['apply', 'undo']);
    const undoReceipt = undone.executions.find((e: { kind: string }) => e.kind === 'undo').receipt;
    expect(undoReceipt.changes.map((c: { path: string; operation: string }) => [c.path, c.operation])).toEqual([
      ['Undo/Doc.md', 'replace'],
      ['Undo/New.md', 'delete'],
    ]);
    // Restoring and trashing committed as one knowledge transaction.
    const undoEvents = ((await proposer.events(mappingId, '&limit=1000')).data.events as Array<{ source: string; transactionId: string; type: string; path: string }>).filter(
      (e) => e.source === 'forge' && e.transactionId === undoReceipt.transactionId,
    );
    expect(undoEvents.map((e) => [e.type, e.path])).toEqual([
      ['note.replaced', 'Undo/Doc.md'],
      ['note.deleted', 'Undo/New.md'],
    ]);
  });
});
