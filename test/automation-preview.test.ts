// GET /api/dev/automation/proposals/:id/preview and the ?bridge= filter of the proposals list, on
// real Postgres and Temporal with the worker. Proves the preview is the knowledge core's diff
// against the notes as they are now, with a verdict that says whether Forge could apply the action
// (a stale expectedHash or a replace naming none would fail), that it needs vault.read as well as
// automation.view, and that another workspace's proposal is not found.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAccount, issueAccessToken } from '../domain/identity/accounts.ts';
import type { Plan } from '../domain/identity/plans.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { addMember, createRole, createWorkspace } from '../domain/identity/workspaces.ts';
import { revisionOf } from '../domain/notes/markdown.ts';
import type { DatabasePool } from '../db/pool.ts';
import { proposeViaApi } from './support/console.ts';
import { devClient } from './support/dev-client.ts';
import type { DevClient, Json } from './support/dev-client.ts';
import { useTestAppWithWorker } from './support/harness.ts';

const ctx = useTestAppWithWorker({ name: 'automation-preview', overrides: { proposalExpirySeconds: 3600 } });
let app: FastifyInstance;
let db: DatabasePool;
let owner: DevClient;
let reviewer: DevClient;
let watcher: DevClient; // automation.view without vault.read
let stranger: DevClient;
let workspaceId: string;
let mappingId: string;

async function client(displayName: string, plan: Plan = 'developer_agent'): Promise<{ id: string; api: DevClient }> {
  const account = await createAccount(db, { email: `${randomUUID()}@example.test`, displayName, plan });
  const { token } = await issueAccessToken(db, { accountId: account.id, name: 'preview' });
  return { id: account.id, api: devClient(app, token) };
}

const propose = (action: Json, bridge = 'test-bridge') => proposeViaApi(owner, { workspaceId, bridge, action });
const preview = (api: DevClient, id: string) => api.request('GET', `/api/dev/automation/proposals/${id}/preview`);

beforeAll(async () => {
  app = ctx.app;
  db = ctx.db.pool;
  const [o, r, w, s] = await Promise.all([client('Olive Owner', 'team'), client('Rita Reviewer'), client('Walt Watcher'), client('Sam Stranger', 'team')]);
  [owner, reviewer, watcher, stranger] = [o.api, r.api, w.api, s.api];
  workspaceId = (await createWorkspace(db, { name: 'Preview', ownerAccountId: o.id })).id;
  await addMember(db, { workspaceId, accountId: r.id, role: 'reviewer' });
  await createRole(db, { workspaceId, name: 'watcher', permissions: ['automation.view'] });
  await addMember(db, { workspaceId, accountId: w.id, role: 'watcher' });
  ({ mappingId } = await createMapping(db, { vaultId: (await createVault(db, { name: 'Preview vault', ownerWorkspaceId: workspaceId })).id }));
});

describe('proposal preview', () => {
  it('previews a create as applying, with a diff from /dev/null, and writes nothing', async () => {
    const id = await propose({ kind: 'note.write', mappingId, path: 'Preview/New.md', content: '# New\nline\n' });
    const res = await preview(reviewer, id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.data).toMatchObject({ proposalId: id, actionKind: 'note.write', verdict: 'applies', problem: null, computedAt: expect.any(String) });
    const [result] = res.data['transaction'].results;
    expect(result).toMatchObject({ path: 'Preview/New.md', operation: 'create', beforeRevision: null, afterRevision: revisionOf('# New\nline\n'), revisionRequired: false });
    expect(result.diff).toContain('--- /dev/null');
    expect(result.diff).toContain('+++ b/Preview/New.md');
    expect(result.diff).toContain('\n+# New\n+line\n');
    expect((await owner.read(mappingId, 'Preview/New.md')).statusCode).toBe(404);
  });

  it("previews a replace naming the current revision as applying, with '-' and '+' lines", async () => {
    const base = await owner.apply({ mappingId, path: 'Preview/Doc.md', content: 'alpha\nbeta\n' });
    const id = await propose({ kind: 'note.write', mappingId, path: 'Preview/Doc.md', content: 'alpha\ngamma\n', expectedHash: base.data['afterRevision'] });
    const res = await preview(reviewer, id);
    expect(res.data).toMatchObject({ verdict: 'applies', problem: null });
    const [result] = res.data['transaction'].results;
    expect(result).toMatchObject({ operation: 'replace', beforeRevision: revisionOf('alpha\nbeta\n'), afterRevision: revisionOf('alpha\ngamma\n') });
    expect(result.diff).toContain('\n-beta\n');
    expect(result.diff).toContain('\n+gamma\n');
    expect(result.diff).toContain('\n alpha\n');

    // The note changes under the proposal: the same preview now says it would fail, and why.
    await owner.apply({ mappingId, path: 'Preview/Doc.md', content: 'alpha\ndelta\n', expectedHash: base.data['afterRevision'] });
    const stale = await preview(reviewer, id);
    expect(stale.statusCode).toBe(200);
    expect(stale.data).toMatchObject({ verdict: 'would_fail', transaction: null, problem: { code: 'revision_conflict', errors: [{ code: 'revision_conflict' }] } });
    expect(stale.data['problem'].detail).toContain(revisionOf('alpha\ndelta\n'));
  });

  it('says a replace without expectedHash would fail with revision_required, pointing at the action', async () => {
    await owner.apply({ mappingId, path: 'Preview/Blind.md', content: 'one\n' });
    const id = await propose({ kind: 'note.transaction', mappingId, actions: [{ type: 'write-note', path: 'Preview/Fresh.md', content: 'x' }, { type: 'write-note', path: 'Preview/Blind.md', content: 'two\n' }] });
    const res = await preview(reviewer, id);
    expect(res.data).toMatchObject({
      verdict: 'would_fail',
      problem: { code: 'revision_required', errors: [{ pointer: '/actions/1/expectedHash', message: expect.stringContaining('Preview/Blind.md') }] },
    });
    // The diff is still there, so the reviewer sees what was meant.
    expect(res.data['transaction'].results.map((r: Json) => [r['path'], r['operation'], r['revisionRequired']])).toEqual([
      ['Preview/Fresh.md', 'create', false],
      ['Preview/Blind.md', 'replace', true],
    ]);
  });

  it('needs vault.read as well as automation.view, and hides another workspace\'s proposal', async () => {
    const id = await propose({ kind: 'note.write', mappingId, path: 'Preview/Private.md', content: 'p' });
    const denied = await preview(watcher, id);
    expect(denied.statusCode).toBe(403);
    expect(denied.data).toMatchObject({ code: 'permission_denied', requiredPermission: 'vault.read' });
    // The watcher may still read the proposal itself.
    expect((await watcher.request('GET', `/api/dev/automation/proposals/${id}`)).statusCode).toBe(200);

    const hidden = await preview(stranger, id);
    const missing = await preview(stranger, randomUUID());
    expect(hidden.statusCode).toBe(404);
    expect(hidden.data['code']).toBe('proposal_not_found');
    expect(missing.data['code']).toBe('proposal_not_found');
    expect(hidden.data['detail']).toBe(missing.data['detail']);
  });
});

describe('listing proposals by bridge', () => {
  it('lists only the named bridge, and refuses a malformed name', async () => {
    const alpha = [await propose({ kind: 'note.write', mappingId, path: 'Bridge/A1.md', content: 'a' }, 'bridge-alpha'), await propose({ kind: 'note.write', mappingId, path: 'Bridge/A2.md', content: 'a' }, 'bridge-alpha')];
    const beta = await propose({ kind: 'note.write', mappingId, path: 'Bridge/B.md', content: 'b' }, 'bridge-beta');
    const list = async (query: string) => {
      const res = await reviewer.request('GET', `/api/dev/automation/proposals?workspaceId=${workspaceId}${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return (res.data['proposals'] as Array<{ id: string; bridge: string }>);
    };
    expect((await list('&bridge=bridge-alpha')).map((p) => p.id)).toEqual([...alpha].reverse());
    expect((await list('&bridge=bridge-beta')).map((p) => p.id)).toEqual([beta]);
    expect(await list('&bridge=bridge-gamma')).toEqual([]);
    const all = await list('');
    expect(all.map((p) => p.id)).toEqual(expect.arrayContaining([...alpha, beta]));
    expect(new Set(all.map((p) => p.bridge))).toEqual(new Set(['test-bridge', 'bridge-alpha', 'bridge-beta']));
    const bad = await reviewer.request('GET', `/api/dev/automation/proposals?workspaceId=${workspaceId}&bridge=UPPER`);
    expect(bad.statusCode).toBe(400);
    expect(bad.data['code']).toBe('invalid_request');
  });
});
