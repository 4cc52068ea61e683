// Product Runtime notes and vault bindings: listNotes/readNote/publishNote through the knowledge
// core (preview by default, idempotent apply, current revision for updates, provenance naming the
// installation), bindHostedVault as a request a person grants, and revocation that keeps the notes.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addMember } from '../domain/identity/workspaces.ts';
import { useTestApp } from './support/harness.ts';
import { accountWithToken } from './support/fixtures.ts';
import { devClient } from './support/dev-client.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';

const ctx = useTestApp();

describe('publishNote', () => {
  it('previews by default and writes nothing', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const client = runtimeClient(ctx.app, chain.secret);
    const preview = await client.publish(chain.vaultId, { path: 'Units/Linear equations.md', content: '# Linear equations\n' });
    expect(preview.statusCode).toBe(200);
    expect(preview.data).toMatchObject({
      runtimeVersion: '1',
      kind: 'runtime.note-publication',
      status: 'complete',
      missing: [],
      data: { mode: 'preview', applied: false, operation: 'create', beforeRevision: null, eventId: null, revisionRequired: false },
    });
    expect(preview.data.data.diff).toContain('+# Linear equations');
    expect((await client.listNotes(chain.vaultId)).data.data.notes).toEqual([]);
  });

  it('applies with an Idempotency-Key, replays it, refuses it with another body, and names the installation in provenance', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const client = runtimeClient(ctx.app, chain.secret);
    const body = { path: 'Units/Quadratics.md', content: '# Quadratics\n', mode: 'apply' };
    expect((await client.publish(chain.vaultId, body)).data).toMatchObject({ code: 'idempotency_key_required' });
    const key = randomUUID();
    const first = await client.publish(chain.vaultId, body, key);
    expect(first.statusCode).toBe(201);
    expect(first.data.data).toMatchObject({ mode: 'apply', applied: true, operation: 'create', replayed: false });
    const again = await client.publish(chain.vaultId, body, key);
    expect(again.statusCode).toBe(201);
    expect(again.data.data).toEqual({ ...first.data.data, replayed: true });
    const other = await client.publish(chain.vaultId, { ...body, content: '# Other\n' }, key);
    expect(other.statusCode).toBe(422);
    expect(other.data).toMatchObject({ code: 'idempotency_key_reused' });

    const read = await client.readNote(chain.vaultId, 'Units/Quadratics.md');
    expect(read.data).toMatchObject({ kind: 'runtime.note', status: 'complete', data: { content: '# Quadratics\n', title: 'Quadratics', revision: first.data.data.afterRevision } });
    expect(read.headers['etag']).toBe(`"${first.data.data.afterRevision}"`);

    // The owner sees the event through their own mapping: the actor is the service principal, the source the runtime.
    const events = await devClient(ctx.app, chain.owner.token).events(chain.mappingId);
    const event = events.data.events.find((e: { path: string }) => e.path === 'Units/Quadratics.md');
    expect(event).toMatchObject({ type: 'note.created', actor: { type: 'service_principal', id: chain.principalId }, source: 'runtime', idempotencyKey: key });
    // The grant the change came through, under a name that says so (issue 27); mappingId keeps it for old readers.
    expect(chain.grantId).toBeTruthy();
    expect(event).toMatchObject({ grantId: chain.grantId, mappingId: chain.grantId });
    // The owner's own writes name no grant.
    expect((await devClient(ctx.app, chain.owner.token).apply({ mappingId: chain.mappingId, path: 'Owner.md', content: '# Owner\n' })).statusCode).toBe(201);
    const ownEvents = await devClient(ctx.app, chain.owner.token).events(chain.mappingId);
    expect(ownEvents.data.events.find((e: { path: string }) => e.path === 'Owner.md')).toMatchObject({ source: 'rest', grantId: null, mappingId: chain.mappingId });
  });

  it('parallel applies with one key write once', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const client = runtimeClient(ctx.app, chain.secret);
    const key = randomUUID();
    const body = { path: 'Race.md', content: '# Race\n', mode: 'apply' };
    const results = await Promise.all(Array.from({ length: 20 }, () => client.publish(chain.vaultId, body, key)));
    for (const r of results) expect([201, 409]).toContain(r.statusCode);
    const written = results.filter((r) => r.statusCode === 201);
    expect(written.length).toBeGreaterThan(0);
    expect(new Set(written.map((r) => r.data.data.eventId)).size).toBe(1);
    for (const r of results.filter((x) => x.statusCode === 409)) expect(r.data).toMatchObject({ code: 'idempotency_in_flight' });
    const events = await devClient(ctx.app, chain.owner.token).events(chain.mappingId);
    expect(events.data.events.filter((e: { path: string }) => e.path === 'Race.md')).toHaveLength(1);
  });

  it('needs the current revision to replace, and refuses a stale one', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const client = runtimeClient(ctx.app, chain.secret);
    const created = await client.publish(chain.vaultId, { path: 'Plan.md', content: 'v1', mode: 'apply' }, randomUUID());
    const v1 = created.data.data.afterRevision as string;
    const preview = await client.publish(chain.vaultId, { path: 'Plan.md', content: 'v2' });
    expect(preview.data.data).toMatchObject({ operation: 'replace', revisionRequired: true, beforeRevision: v1 });
    const unrevised = await client.publish(chain.vaultId, { path: 'Plan.md', content: 'v2', mode: 'apply' }, randomUUID());
    expect(unrevised.statusCode).toBe(428);
    expect(unrevised.data).toMatchObject({ code: 'revision_required', currentRevision: v1, errors: [{ pointer: '/body/expectedRevision', code: 'revision_required' }] });
    // The runtime's own field, never the REST API's expectedHash or If-Match (issue 27).
    expect(unrevised.data.detail).toContain('expectedRevision');
    expect(JSON.stringify(unrevised.data)).not.toMatch(/expectedHash|If-Match/);
    const replaced = await client.publish(chain.vaultId, { path: 'Plan.md', content: 'v2', mode: 'apply', expectedRevision: v1 }, randomUUID());
    expect(replaced.statusCode).toBe(200);
    const stale = await client.publish(chain.vaultId, { path: 'Plan.md', content: 'v3', mode: 'apply', expectedRevision: v1 }, randomUUID());
    expect(stale.statusCode).toBe(409);
    expect(stale.data).toMatchObject({ code: 'revision_conflict', currentRevision: replaced.data.data.afterRevision });
  });

  it('refuses bad input with the REST bounds: path rules, sizes, unknown fields, wrong types', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const client = runtimeClient(ctx.app, chain.secret);
    const cases: Array<[unknown, string]> = [
      [{ path: '../escape.md', content: 'x' }, 'invalid_path'],
      [{ path: 'no-extension', content: 'x' }, 'invalid_path'],
      [{ path: 'A.md', content: 'x'.repeat(1_048_577) }, 'note_too_large'],
      [{ path: 'A.md', content: 'x', extra: true }, 'invalid_request'],
      [{ path: 'A.md', content: 42 }, 'invalid_request'],
      [{ path: 'A.md', content: 'x', mode: 'force' }, 'invalid_request'],
      [{ path: 'A.md', content: 'x', expectedRevision: 'abc' }, 'invalid_request'],
      [{ content: 'x' }, 'invalid_request'],
    ];
    for (const [body, code] of cases) expect((await client.publish(chain.vaultId, body as Record<string, unknown>)).data, JSON.stringify(body).slice(0, 60)).toMatchObject({ code });
    const text = await client.request('POST', `/vaults/${chain.vaultId}/notes`, { body: 'path: A.md', headers: { 'content-type': 'application/x-yaml' } });
    expect(text.data).toMatchObject({ code: 'unsupported_media_type' });
    const truncated = await client.request('POST', `/vaults/${chain.vaultId}/notes`, { body: '{"path":"A.md","content":"x', headers: { 'content-type': 'application/json' } });
    expect(truncated.data).toMatchObject({ code: 'malformed_json' });
  });
});

describe('listNotes and readNote', () => {
  it('pages the inventory in path order with opaque cursors and bounds the limit', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const client = runtimeClient(ctx.app, chain.secret);
    for (const name of ['c', 'a', 'b']) await client.publish(chain.vaultId, { path: `${name}.md`, content: name, mode: 'apply' }, randomUUID());
    const first = await client.listNotes(chain.vaultId, '?limit=2');
    expect(first.data.data).toMatchObject({ vaultId: chain.vaultId, hasMore: true });
    expect(first.data.data.notes.map((n: { path: string }) => n.path)).toEqual(['a.md', 'b.md']);
    const second = await client.listNotes(chain.vaultId, `?limit=2&cursor=${encodeURIComponent(first.data.data.nextCursor)}`);
    expect(second.data.data).toMatchObject({ hasMore: false, nextCursor: null });
    expect(second.data.data.notes.map((n: { path: string }) => n.path)).toEqual(['c.md']);
    expect((await client.listNotes(chain.vaultId, '?limit=1001')).data).toMatchObject({ code: 'invalid_request' });
    expect((await client.listNotes(chain.vaultId, '?limit=0')).data).toMatchObject({ code: 'invalid_request' });
    expect((await client.listNotes(chain.vaultId, '?cursor=garbage')).data).toMatchObject({ code: 'invalid_request' });
    expect((await client.readNote(chain.vaultId, 'missing.md')).data).toMatchObject({ code: 'note_not_found' });
    expect((await client.readNote(chain.vaultId, '../x.md')).data).toMatchObject({ code: 'invalid_path' });
  });

  it("one organization's credential reads nothing of another's vault, and both look like a vault that does not exist", async () => {
    const a = await buildRuntimeChain(ctx.db.pool);
    const b = await buildRuntimeChain(ctx.db.pool);
    await runtimeClient(ctx.app, a.secret).publish(a.vaultId, { path: 'Secret.md', content: 'a', mode: 'apply' }, randomUUID());
    const stranger = runtimeClient(ctx.app, b.secret);
    const foreign = await stranger.readNote(a.vaultId, 'Secret.md');
    const nowhere = await stranger.readNote(randomUUID(), 'Secret.md');
    expect(foreign.statusCode).toBe(403);
    expect({ ...foreign.data, instance: null, requestId: null }).toEqual({ ...nowhere.data, instance: null, requestId: null, detail: foreign.data.detail });
    expect((await stranger.publish(a.vaultId, { path: 'Secret.md', content: 'b', mode: 'apply' }, randomUUID())).data).toMatchObject({ code: 'vault_not_granted' });
  });
});

describe('bindHostedVault', () => {
  it('asks a person, who grants; the product never grants itself; revoking cuts access and keeps the notes', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool, { access: null });
    const client = runtimeClient(ctx.app, chain.secret);
    const owner = devClient(ctx.app, chain.owner.token);

    const workspace = await client.workspace();
    expect(workspace.data).toMatchObject({ status: 'partial', data: { vaults: [] }, missing: [{ part: 'workspace.vaults', reason: 'grant_missing' }] });

    const asked = await client.bind({ vaultId: chain.vaultId, access: 'write', reason: 'Publish lesson plans' });
    expect(asked.statusCode).toBe(202);
    expect(asked.data).toMatchObject({ status: 'partial', data: { binding: { state: 'pending', vaultId: chain.vaultId }, grant: null }, missing: [{ reason: 'grant_pending' }] });
    const again = await client.bind({ vaultId: chain.vaultId, access: 'write', reason: 'Publish lesson plans' });
    expect(again.data.data.binding.bindingId).toBe(asked.data.data.binding.bindingId);
    expect((await client.workspace()).data.missing).toEqual([expect.objectContaining({ reason: 'grant_pending' })]);
    // Asking grants nothing.
    expect((await client.listNotes(chain.vaultId)).data).toMatchObject({ code: 'vault_not_granted' });
    // There is no runtime route that grants.
    expect((await client.request('POST', '/vault-grants', { body: { vaultId: chain.vaultId, access: 'write' } })).statusCode).toBe(404);

    // A member without workspace.manage cannot grant; a stranger does not see the workspace.
    const editor = await accountWithToken(ctx.db.pool, 'team');
    await addMember(ctx.db.pool, { workspaceId: chain.workspaceId, accountId: editor.account.id, role: 'editor' });
    const grantBody = { installationId: chain.installationId, vaultId: chain.vaultId, access: 'write' };
    expect((await devClient(ctx.app, editor.token).request('POST', `/api/dev/workspaces/${chain.workspaceId}/vault-grants`, { body: grantBody })).data).toMatchObject({
      code: 'permission_denied',
    });
    const stranger = await accountWithToken(ctx.db.pool, 'team');
    expect((await devClient(ctx.app, stranger.token).request('GET', `/api/dev/workspaces/${chain.workspaceId}/product-installations`)).data).toMatchObject({
      code: 'workspace_not_found',
    });

    const listed = await owner.request('GET', `/api/dev/workspaces/${chain.workspaceId}/product-installations`);
    expect(listed.data.installations).toEqual([
      expect.objectContaining({ installationId: chain.installationId, grants: [], pendingBindings: [expect.objectContaining({ bindingId: asked.data.data.binding.bindingId })] }),
    ]);
    const granted = await owner.request('POST', `/api/dev/workspaces/${chain.workspaceId}/vault-grants`, { body: grantBody });
    expect(granted.statusCode).toBe(201);
    expect(granted.data).toMatchObject({ access: 'write', grantedByAccountId: chain.owner.account.id, revokedAt: null });
    expect((await owner.request('POST', `/api/dev/workspaces/${chain.workspaceId}/vault-grants`, { body: grantBody })).statusCode).toBe(200);

    expect((await client.bindings()).data.data.bindings[0]).toMatchObject({ state: 'granted', grantId: granted.data.grantId });
    expect((await client.workspace()).data).toMatchObject({ status: 'complete', data: { vaults: [{ vaultId: chain.vaultId, access: 'write' }] } });
    expect((await client.bind({ vaultId: chain.vaultId, access: 'read' })).data).toMatchObject({ status: 'complete', data: { grant: { grantId: granted.data.grantId } } });
    await client.publish(chain.vaultId, { path: 'Kept.md', content: '# Kept\n', mode: 'apply' }, randomUUID());

    const revoked = await owner.request('DELETE', `/api/dev/workspaces/${chain.workspaceId}/vault-grants/${granted.data.grantId}`);
    expect(revoked.data.revokedAt).not.toBeNull();
    expect((await client.readNote(chain.vaultId, 'Kept.md')).data).toMatchObject({ code: 'vault_not_granted' });
    // The notes stay where they were.
    expect((await owner.inventory(chain.mappingId)).data.notes.map((n: { path: string }) => n.path)).toEqual(['Kept.md']);
  });

  it('lets the person choose the vault, declines, and refuses vaults outside the workspace like missing ones', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool, { access: null });
    const other = await buildRuntimeChain(ctx.db.pool);
    const client = runtimeClient(ctx.app, chain.secret);
    const owner = devClient(ctx.app, chain.owner.token);
    const foreign = await client.bind({ vaultId: other.vaultId, access: 'read' });
    const missing = await client.bind({ vaultId: randomUUID(), access: 'read' });
    expect(foreign.data).toMatchObject({ code: 'vault_not_found' });
    expect({ ...foreign.data, instance: null, requestId: null }).toEqual({ ...missing.data, instance: null, requestId: null });
    expect((await client.bind({ vaultId: 'local-vault', access: 'read' })).data).toMatchObject({ code: 'invalid_request' });

    const any = await client.bind({ access: 'read', reason: 'Any course vault' });
    expect(any.data.data.binding).toMatchObject({ vaultId: null, state: 'pending' });
    const declined = await owner.request('POST', `/api/dev/workspaces/${chain.workspaceId}/vault-binding-requests/${any.data.data.binding.bindingId}/decline`);
    expect(declined.data).toMatchObject({ state: 'declined', decidedAt: expect.any(String) });
    // Another workspace's binding request is not found through this workspace.
    expect((await owner.request('POST', `/api/dev/workspaces/${other.workspaceId}/vault-binding-requests/${any.data.data.binding.bindingId}/decline`)).data).toMatchObject({
      code: 'workspace_not_found',
    });
    const chosen = await client.bind({ access: 'read' });
    const granted = await owner.request('POST', `/api/dev/workspaces/${chain.workspaceId}/vault-grants`, {
      body: { installationId: chain.installationId, vaultId: chain.vaultId, access: 'read', bindingId: chosen.data.data.binding.bindingId },
    });
    expect(granted.statusCode).toBe(201);
    expect((await client.bindings()).data.data.bindings[0]).toMatchObject({ bindingId: chosen.data.data.binding.bindingId, state: 'granted', vaultId: chain.vaultId });
  });
});
