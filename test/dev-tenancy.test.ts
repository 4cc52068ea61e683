// Tenancy: another account's mapping is refused on every route, indistinguishable from a missing
// one; workspace roles decide read and write; revoked mappings stop working.
import type { FastifyInstance } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMapping, createVault, revokeMapping } from '../domain/identity/vaults.ts';
import { addMember, createWorkspace } from '../domain/identity/workspaces.ts';
import type { TestDatabase } from './support/database.ts';
import { newCaller, useCaller } from './support/harness.ts';
import { devClient } from './support/dev-client.ts';
import type { DevClient } from './support/dev-client.ts';
import { accountWithToken, personalMapping } from './support/fixtures.ts';

let db: TestDatabase;
let app: FastifyInstance;
let owner: DevClient;
let stranger: DevClient;
let ownerMapping: string;
let trashId: string;
let revision: string;

const ctx = useCaller({ plan: 'team' });

beforeAll(async () => {
  ({ db, app, api: owner, mappingId: ownerMapping } = ctx);
  ({ api: stranger } = await newCaller(ctx, { plan: 'team', mapping: false }));
  const created = await owner.apply({ mappingId: ownerMapping, path: 'Private/Secret.md', content: 'owner only' });
  revision = created.data.afterRevision as string;
  await owner.apply({ mappingId: ownerMapping, path: 'Private/Gone.md', content: 'deleted' });
  const gone = await owner.remove(ownerMapping, 'Private/Gone.md', { dryRun: false, headers: { 'if-match': (await owner.read(ownerMapping, 'Private/Gone.md')).data.revision as string, 'idempotency-key': 'gone' } });
  trashId = gone.data.trashId as string;
});

const missing = '00000000-0000-4000-8000-00000000abcd';

/** Every route that takes a mapping, as the given client, against `mappingId`. */
function everyRoute(api: DevClient, mappingId: string) {
  return {
    inventory: () => api.inventory(mappingId),
    read: () => api.read(mappingId, 'Private/Secret.md'),
    readViaHeader: () => api.request('GET', '/api/dev/notes/Private/Secret.md', { headers: { 'x-service-mapping': mappingId } }),
    preview: () => api.preview({ mappingId, path: 'Private/Secret.md', content: 'x' }),
    apply: () => api.apply({ mappingId, path: 'Private/Secret.md', content: 'x', expectedHash: revision }),
    deletePreview: () => api.remove(mappingId, 'Private/Secret.md'),
    deleteApply: () => api.remove(mappingId, 'Private/Secret.md', { dryRun: false, headers: { 'if-match': revision, 'idempotency-key': 'x1' } }),
    transactionPreview: () => api.transaction({ mappingId, actions: [{ type: 'write-note', path: 'Private/Secret.md', content: 'x', expectedHash: revision }] }),
    transactionApply: () => api.transaction({ mappingId, dryRun: false, actions: [{ type: 'write-note', path: 'Private/Secret.md', content: 'x', expectedHash: revision }] }, 'x2'),
    events: () => api.events(mappingId),
    trash: () => api.trash(mappingId),
    restorePreview: () => api.restore(mappingId, trashId, true),
    restoreApply: () => api.restore(mappingId, trashId, false, 'x3'),
  };
}

describe("another account's mappingId", () => {
  it.each(Object.keys(everyRoute(owner!, missing)))('is refused on %s exactly like a mapping that does not exist', async (route) => {
    const foreign = await everyRoute(stranger, ownerMapping)[route as keyof ReturnType<typeof everyRoute>]();
    const absent = await everyRoute(stranger, missing)[route as keyof ReturnType<typeof everyRoute>]();
    expect(foreign.statusCode).toBe(404);
    expect(foreign.data.code).toBe('mapping_not_found');
    expect({ status: absent.statusCode, code: absent.data.code }).toEqual({ status: 404, code: 'mapping_not_found' });
    expect(foreign.body).not.toContain('owner only');
  });

  it('left the owner\'s note untouched after all those attempts', async () => {
    const note = await owner.read(ownerMapping, 'Private/Secret.md');
    expect(note.data).toMatchObject({ content: 'owner only', revision });
    expect((await owner.trash(ownerMapping)).data.items).toHaveLength(1);
  });
});

describe('workspace vaults', () => {
  it('lets members read and write by role, and refuses non-members as not found', async () => {
    const lead = await accountWithToken(db.pool, 'team');
    const viewer = await accountWithToken(db.pool, 'developer_agent');
    const editor = await accountWithToken(db.pool, 'developer_agent');
    const outsider = await accountWithToken(db.pool, 'developer_agent');
    const ws = await createWorkspace(db.pool, { name: 'Shared', ownerAccountId: lead.account.id });
    await addMember(db.pool, { workspaceId: ws.id, accountId: viewer.account.id, role: 'viewer' });
    await addMember(db.pool, { workspaceId: ws.id, accountId: editor.account.id, role: 'editor' });
    const vault = await createVault(db.pool, { name: 'Shared vault', ownerWorkspaceId: ws.id });
    const { mappingId } = await createMapping(db.pool, { vaultId: vault.id });

    const leadApi = devClient(app, lead.token);
    expect((await leadApi.apply({ mappingId, path: 'Team/Plan.md', content: 'plan' })).statusCode).toBe(201);

    const viewerApi = devClient(app, viewer.token);
    expect((await viewerApi.read(mappingId, 'Team/Plan.md')).data.content).toBe('plan');
    const viewerWrite = await viewerApi.apply({ mappingId, path: 'Team/Viewer.md', content: 'no' });
    expect(viewerWrite.statusCode).toBe(403);
    expect(viewerWrite.data).toMatchObject({ code: 'permission_denied', requiredPermission: 'vault.write' });
    expect((await viewerApi.preview({ mappingId, path: 'Team/Viewer.md', content: 'no' })).statusCode).toBe(403);

    const editorApi = devClient(app, editor.token);
    expect((await editorApi.apply({ mappingId, path: 'Team/Editor.md', content: 'yes' })).statusCode).toBe(201);
    const events = (await viewerApi.events(mappingId)).data.events as Array<{ actor: { id: string } }>;
    expect(events.map((e) => e.actor.id)).toEqual([lead.account.id, editor.account.id]);

    expect((await devClient(app, outsider.token).read(mappingId, 'Team/Plan.md')).data.code).toBe('mapping_not_found');
  });

  it('stops answering for a revoked mapping, and a new mapping reaches the same notes', async () => {
    const acct = await accountWithToken(db.pool, 'team');
    const api = devClient(app, acct.token);
    const { mappingId, vaultId } = await personalMapping(db.pool, acct.account.id);
    await api.apply({ mappingId, path: 'Keep/Me.md', content: 'kept' });
    await revokeMapping(db.pool, mappingId);
    expect((await api.read(mappingId, 'Keep/Me.md')).data.code).toBe('mapping_not_found');
    const fresh = await createMapping(db.pool, { vaultId });
    expect((await api.read(fresh.mappingId, 'Keep/Me.md')).data.content).toBe('kept');
  });
});
