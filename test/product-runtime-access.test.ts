// Product Runtime access: the version header, every chain link refused on its own on every route
// family, a missing scope per operation, the organization's monthly operations exact under
// concurrency (refusals count nothing), and what a presentation input can never grant.
import { sql } from 'slonik';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scopes } from '../domain/product-runtime/entities.ts';
import type { Scope } from '../domain/product-runtime/entities.ts';
import {
  revokeServiceCredential,
  revokeVaultGrant,
  setInstallationStatus,
  setOrganizationStatus,
  setProductDefinitionStatus,
  setProductRuntimeSettings,
  setServicePrincipalStatus,
  unassignWorkspace,
} from '../domain/product-runtime/entities.ts';
import { setInstallationIntelligenceSublimit } from '../domain/product-runtime/entities.ts';
import { buildTestApp } from './support/app.ts';
import { useTestApp } from './support/harness.ts';
import { unreachableIntelligence } from './support/scripted-provider.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import type { RuntimeChain, RuntimeResponse } from './support/product-runtime.ts';

const ctx = useTestApp();

const usedThisMonth = async (organizationId: string) =>
  (await ctx.db.pool.maybeOneFirst(sql.type(z.object({ used: z.number() }))`SELECT used FROM organization_api_usage WHERE organization_id = ${organizationId}`)) ?? 0;

/** One call of each route family, and the scope it needs. */
const families: Array<{ name: string; scope: Scope | null; call: (chain: RuntimeChain) => Promise<RuntimeResponse>; vault: boolean }> = [
  { name: 'getRuntimeContext', scope: null, vault: false, call: (c) => runtimeClient(ctx.app, c.secret).context() },
  { name: 'getCapabilities', scope: null, vault: false, call: (c) => runtimeClient(ctx.app, c.secret).capabilities() },
  { name: 'getWorkspace', scope: 'runtime.read', vault: false, call: (c) => runtimeClient(ctx.app, c.secret).workspace() },
  { name: 'listNotes', scope: 'notes.read', vault: true, call: (c) => runtimeClient(ctx.app, c.secret).listNotes(c.vaultId) },
  { name: 'readNote', scope: 'notes.read', vault: true, call: (c) => runtimeClient(ctx.app, c.secret).readNote(c.vaultId, 'Missing.md') },
  { name: 'publishNote', scope: 'notes.write', vault: true, call: (c) => runtimeClient(ctx.app, c.secret).publish(c.vaultId, { path: 'Units/A.md', content: '# A\n' }) },
  { name: 'bindHostedVault', scope: 'vaults.bind', vault: false, call: (c) => runtimeClient(ctx.app, c.secret).bind({ access: 'read' }) },
  { name: 'listVaultBindings', scope: 'vaults.bind', vault: false, call: (c) => runtimeClient(ctx.app, c.secret).bindings() },
  { name: 'listAvailableScopes', scope: 'scopes.read', vault: false, call: (c) => runtimeClient(ctx.app, c.secret).request('GET', '/scopes') },
  { name: 'getScopeMemory', scope: 'scopes.read', vault: false, call: (c) => runtimeClient(ctx.app, c.secret).request('GET', '/scopes/none/memory') },
  {
    name: 'createSharedMemoryCandidate',
    scope: 'memory.propose',
    vault: false,
    call: (c) => runtimeClient(ctx.app, c.secret).request('POST', '/scopes/none/memory-candidates', { body: { content: 'x' }, headers: { 'idempotency-key': 'k-1' } }),
  },
];

describe('X-Service-Runtime-Version', () => {
  it('a missing header means version 1, and every answer says which version answered', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const client = runtimeClient(ctx.app, chain.secret);
    const missing = await client.request('GET', '/context', { headers: { 'x-service-runtime-version': undefined } });
    expect(missing.statusCode).toBe(200);
    expect(missing.headers['x-service-runtime-version']).toBe('1');
    expect(missing.data).toMatchObject({ runtimeVersion: '1', kind: 'runtime.context', status: 'complete' });
    const declared = await client.context();
    expect(declared.statusCode).toBe(200);
    expect(declared.headers['x-service-runtime-version']).toBe('1');
    // Refusals say it too.
    const refused = await runtimeClient(ctx.app, 'hnp_svc_unknown').context();
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['x-service-runtime-version']).toBe('1');
  });

  it('says the version on answers no route gives: 404, 405 and 414 under the mount (issue 27)', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const client = runtimeClient(ctx.app, chain.secret);
    const notFound = await client.request('GET', '/no-such-operation');
    expect(notFound.statusCode).toBe(404);
    expect(notFound.data).toMatchObject({ code: 'route_not_found' });
    expect(notFound.headers['x-service-runtime-version']).toBe('1');
    const notAllowed = await client.request('DELETE', '/context');
    expect(notAllowed.statusCode).toBe(405);
    expect(notAllowed.data).toMatchObject({ code: 'method_not_allowed' });
    expect(notAllowed.headers['allow']).toContain('GET');
    expect(notAllowed.headers['x-service-runtime-version']).toBe('1');
    const tooLong = await client.request('GET', `/vaults/${'v'.repeat(2_000)}/notes`);
    expect(tooLong.statusCode).toBe(414);
    expect(tooLong.data).toMatchObject({ code: 'uri_too_long' });
    expect(tooLong.headers['x-service-runtime-version']).toBe('1');
    // Outside the mount nothing changes: the header belongs to the runtime's answers only.
    const elsewhere = await ctx.app.inject({ method: 'GET', url: '/api/dev/no-such-route' });
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.headers['x-service-runtime-version']).toBeUndefined();
    const elsewhereLong = await ctx.app.inject({ method: 'GET', url: `/api/dev/vaults/${'v'.repeat(2_000)}/notes` });
    expect(elsewhereLong.headers['x-service-runtime-version']).toBeUndefined();
  });

  it('refuses unsupported and malformed versions in the same problem shape, naming the supported versions, before counting anything', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const client = runtimeClient(ctx.app, chain.secret);
    const before = await usedThisMonth(chain.organizationId);
    const shapes = new Set<string>();
    for (const [value, code] of [
      ['2', 'runtime_version_unsupported'],
      ['999', 'runtime_version_unsupported'],
      ['1.0', 'runtime_version_invalid'],
      ['01', 'runtime_version_invalid'],
      ['v1', 'runtime_version_invalid'],
      ['one', 'runtime_version_invalid'],
      ['', 'runtime_version_invalid'],
      ['-1', 'runtime_version_invalid'],
    ] as const) {
      const res = await client.request('GET', '/workspace', { headers: { 'x-service-runtime-version': value } });
      expect(res.statusCode, value).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.data, value).toMatchObject({ code, status: 400, supportedVersions: ['1'] });
      expect(res.headers['x-service-runtime-version']).toBe('1');
      shapes.add(Object.keys(res.data).sort().join(','));
    }
    // One shape for both refusals (detail differs, the members do not).
    expect(shapes.size).toBe(1);
    expect(await usedThisMonth(chain.organizationId)).toBe(before);
  });

  it('refuses the header sent twice', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/api/product/v1/context',
      headers: { authorization: `Bearer ${chain.secret}` },
      // Raw headers with the version twice.
      ...({ headers: { authorization: `Bearer ${chain.secret}`, 'x-service-runtime-version': ['1', '1'] } } as object),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'duplicate_header' });
  });
});

describe('the chain, link by link, on every route family', () => {
  const breakers: Array<[string, string, (c: RuntimeChain) => Promise<unknown>]> = [
    ['credential', 'credential_invalid', (c) => revokeServiceCredential(ctx.db.pool, c.credentialId)],
    ['service_principal', 'service_principal_inactive', (c) => setServicePrincipalStatus(ctx.db.pool, c.principalId, 'disabled')],
    ['installation', 'installation_inactive', (c) => setInstallationStatus(ctx.db.pool, c.installationId, 'suspended')],
    ['product_definition', 'product_definition_inactive', (c) => setProductDefinitionStatus(ctx.db.pool, c.productId, 'retired')],
    ['organization', 'organization_inactive', (c) => setOrganizationStatus(ctx.db.pool, c.organizationId, 'suspended')],
    ['workspace_assignment', 'workspace_not_assigned', (c) => unassignWorkspace(ctx.db.pool, { organizationId: c.organizationId, workspaceId: c.workspaceId })],
  ];

  it.each(breakers)('refuses at %s (%s) on every route family, counting nothing', async (link, code, breakLink) => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    // Admitted on every family first (readNote of a missing note is admitted, then not found).
    for (const family of families) {
      const res = await family.call(chain);
      expect(res.data.failedLink, family.name).toBeUndefined();
      expect(res.statusCode === 404 ? res.data.code : 'ok', family.name).toMatch(/^(ok|note_not_found|context_scope_not_found)$/);
    }
    const used = await usedThisMonth(chain.organizationId);
    await breakLink(chain);
    for (const family of families) {
      const res = await family.call(chain);
      expect(res.data, family.name).toMatchObject({ code, failedLink: link });
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
    expect(await usedThisMonth(chain.organizationId)).toBe(used);
  });

  it('refuses at vault_grant on the vault routes once the grant is revoked, and the other routes still work', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    await revokeVaultGrant(ctx.db.pool, chain.grantId!);
    for (const family of families) {
      const res = await family.call(chain);
      if (family.vault) expect(res.data, family.name).toMatchObject({ code: 'vault_not_granted', failedLink: 'vault_grant' });
      else expect(res.data.failedLink, family.name).toBeUndefined();
    }
  });

  it('refuses a read grant for publishNote but not for reads', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool, { access: 'read' });
    const client = runtimeClient(ctx.app, chain.secret);
    expect((await client.listNotes(chain.vaultId)).statusCode).toBe(200);
    expect((await client.publish(chain.vaultId, { path: 'A.md', content: 'a' })).data).toMatchObject({ code: 'vault_not_granted', failedLink: 'vault_grant' });
  });

  it('refuses a missing, malformed or personal credential at the credential link with a challenge', async () => {
    for (const authorization of [undefined, 'Bearer', 'Basic abc', 'Bearer hnp_svc_' + 'x'.repeat(43), 'Bearer hnp_pat_' + 'x'.repeat(43)]) {
      const res = await ctx.app.inject({ method: 'GET', url: '/api/product/v1/context', headers: authorization ? { authorization } : {} });
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.json()).toMatchObject({ code: 'credential_invalid', failedLink: 'credential' });
      expect(res.headers['www-authenticate']).toContain('Bearer');
    }
  });

  it.each(families.filter((f) => f.scope !== null))('$name needs $scope and nothing else grants it', async (family) => {
    const chain = await buildRuntimeChain(ctx.db.pool, { scopes: scopes.filter((s) => s !== family.scope) });
    const used = await usedThisMonth(chain.organizationId);
    const res = await family.call(chain);
    expect(res.statusCode).toBe(403);
    expect(res.data).toMatchObject({ code: 'scope_missing', failedLink: 'credential_scope' });
    expect(await usedThisMonth(chain.organizationId)).toBe(used);
  });

  it("records the credential's last use at most once a minute, and not for a refused request", async () => {
    const chain = await buildRuntimeChain(ctx.db.pool, { scopes: ['notes.read'] });
    const lastUsed = () => ctx.db.pool.oneFirst(sql.type(z.object({ at: z.string().nullable() }))`SELECT last_used_at::text AS at FROM service_credentials WHERE id = ${chain.credentialId}`);
    expect(await lastUsed()).toBeNull();
    // Refused at the scope link: not a use.
    expect((await runtimeClient(ctx.app, chain.secret).workspace()).data).toMatchObject({ code: 'scope_missing' });
    expect(await lastUsed()).toBeNull();
    await runtimeClient(ctx.app, chain.secret).context();
    const first = await lastUsed();
    expect(first).not.toBeNull();
    await runtimeClient(ctx.app, chain.secret).context();
    expect(await lastUsed()).toBe(first);
    // Two minutes on, as another API process would find it: this process's kept chain remembers its
    // own touch of just now and does not touch again (decision 112); the other, holding no kept
    // chain, touches it.
    await ctx.db.pool.query(sql.type(z.object({}))`UPDATE service_credentials SET last_used_at = now() - interval '2 minutes' WHERE id = ${chain.credentialId}`);
    const stale = await lastUsed();
    await runtimeClient(ctx.app, chain.secret).context();
    expect(await lastUsed()).toBe(stale);
    const other = await buildTestApp(ctx.db.pool);
    try {
      await runtimeClient(other, chain.secret).context();
      expect(await lastUsed()).not.toBe(stale);
    } finally {
      await other.close();
    }
  });

  it('getRuntimeContext and getCapabilities need no scope at all', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool, { scopes: [] });
    const client = runtimeClient(ctx.app, chain.secret);
    expect((await client.context()).data).toMatchObject({ status: 'complete', data: { credential: { scopes: [] } } });
    const capabilities = (await client.capabilities()).data;
    expect(capabilities.status).toBe('complete');
    expect(capabilities.data.capabilities.find((c: { id: string }) => c.id === 'notes.read')).toMatchObject({ available: false, reason: 'scope_missing' });
  });
});

describe("the organization's apiOperationsPerMonth", () => {
  it('200 concurrent callers across two installations of one organization get exactly the allowance; refusals count nothing', async () => {
    const first = await buildRuntimeChain(ctx.db.pool);
    const second = await buildRuntimeChain(ctx.db.pool, { organization: { id: first.organizationId, workspaceId: first.workspaceId } });
    await setProductRuntimeSettings(ctx.db.pool, first.organizationId, { apiOperationsPerMonth: 57 });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => runtimeClient(ctx.app, (i % 2 ? first : second).secret).context()),
    );
    const ok = results.filter((r) => r.statusCode === 200);
    const refused = results.filter((r) => r.statusCode === 429);
    expect(ok).toHaveLength(57);
    expect(refused).toHaveLength(143);
    const resetsAt = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1)).toISOString();
    for (const r of refused) {
      expect(r.data).toMatchObject({ code: 'organization_quota_exhausted', limit: 57, resetsAt });
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(await usedThisMonth(first.organizationId)).toBe(57);
    // The RateLimit fields of a counted answer.
    expect(ok[0]!.headers['ratelimit-policy']).toBe('"organization-month";q=57');

    // Refusals at the chain count nothing, and raising the limit lets requests through again.
    await setProductRuntimeSettings(ctx.db.pool, first.organizationId, { apiOperationsPerMonth: 58 });
    const unscoped = await buildRuntimeChain(ctx.db.pool, { scopes: [], organization: { id: first.organizationId, workspaceId: first.workspaceId } });
    expect((await runtimeClient(ctx.app, unscoped.secret).workspace()).data).toMatchObject({ code: 'scope_missing' });
    expect((await runtimeClient(ctx.app, first.secret).context()).statusCode).toBe(200);
    expect((await runtimeClient(ctx.app, first.secret).context()).data).toMatchObject({ code: 'organization_quota_exhausted' });
    expect(await usedThisMonth(first.organizationId)).toBe(58);
  });

  it('zero allows nothing; a new month starts from one', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    await setProductRuntimeSettings(ctx.db.pool, chain.organizationId, { apiOperationsPerMonth: 0 });
    expect((await runtimeClient(ctx.app, chain.secret).context()).data).toMatchObject({ code: 'organization_quota_exhausted', limit: 0 });
    await setProductRuntimeSettings(ctx.db.pool, chain.organizationId, { apiOperationsPerMonth: 3 });
    await ctx.db.pool.query(sql.type(z.object({}))`
      INSERT INTO organization_api_usage (organization_id, month_start, used) VALUES (${chain.organizationId}, date_trunc('month', now(), 'UTC') - interval '1 month', 3)
      ON CONFLICT (organization_id) DO UPDATE SET month_start = excluded.month_start, used = 3`);
    expect((await runtimeClient(ctx.app, chain.secret).context()).statusCode).toBe(200);
    expect(await usedThisMonth(chain.organizationId)).toBe(1);
  });
});

describe('presentation is not authority', () => {
  it("another organization's credential reaches nothing of this one, whatever Host or audience it claims", async () => {
    const a = await buildRuntimeChain(ctx.db.pool);
    const b = await buildRuntimeChain(ctx.db.pool);
    const client = runtimeClient(ctx.app, b.secret);
    const claims = { host: 'learn.district-a.example', 'x-forwarded-host': 'learn.district-a.example', 'x-service-audience': a.organizationId, origin: 'https://learn.district-a.example' };
    const foreign = await client.request('GET', `/vaults/${a.vaultId}/notes`, { headers: claims });
    const missing = await client.request('GET', `/vaults/6f0b0b8e-0000-4000-8000-000000000000/notes`, { headers: claims });
    const malformed = await client.request('GET', `/vaults/not-a-vault/notes`, { headers: claims });
    for (const res of [foreign, missing, malformed]) {
      expect(res.statusCode).toBe(403);
      expect(res.data).toMatchObject({ code: 'vault_not_granted', failedLink: 'vault_grant' });
    }
    const strip = (d: Record<string, unknown>) => ({ ...d, instance: undefined, requestId: undefined });
    expect(strip(foreign.data)).toEqual(strip(missing.data));
    const context = await client.request('GET', '/context', { headers: claims });
    expect(context.data.data.organization.id).toBe(b.organizationId);
    expect(JSON.stringify(context.data)).not.toContain(a.organizationId);
  });
});

describe('getCapabilities says what is available and why not, never assuming', () => {
  const capability = (res: RuntimeResponse, id: string) => (res.data.data.capabilities as Array<{ id: string }>).find((c) => c.id === id);

  it('computes each capability from configuration, scopes, grants and settings', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool, { scopes: ['notes.read', 'intelligence.execute'], access: 'read' });
    const res = await runtimeClient(ctx.app, chain.secret).capabilities();
    expect(res.data).toMatchObject({ kind: 'runtime.capabilities', status: 'complete', data: { adapter: 'hosted' } });
    expect(capability(res, 'notes.read')).toMatchObject({ available: true, reason: null });
    // A scope it lacks comes before the grant it lacks.
    expect(capability(res, 'notes.write')).toMatchObject({ available: false, reason: 'scope_missing', requiredScopes: ['notes.write'] });
    // No model provider on this service: not configured, whatever the scopes.
    expect(capability(res, 'intelligence.generate')).toMatchObject({ available: false, reason: 'capability_not_configured' });
    // Media storage needs no configuration; this credential lacks both media scopes.
    expect(capability(res, 'media.audio')).toMatchObject({ available: false, reason: 'scope_missing', requiredScopes: ['media.write', 'media.read'] });
    expect(capability(res, 'pulse')).toMatchObject({ available: false, reason: 'not_supported' });

    const writer = await buildRuntimeChain(ctx.db.pool, { scopes: ['notes.write'], access: 'read' });
    expect(capability(await runtimeClient(ctx.app, writer.secret).capabilities(), 'notes.write')).toMatchObject({ available: false, reason: 'grant_missing' });
  });

  it('with a provider configured, intelligence fails closed on a missing or zero budget, and opens with one', async () => {
    const app = await buildTestApp(ctx.db.pool, { intelligence: unreachableIntelligence() });
    try {
      const chain = await buildRuntimeChain(ctx.db.pool, { scopes: ['intelligence.execute'] });
      const client = runtimeClient(app, chain.secret);
      expect(capability(await client.capabilities(), 'intelligence.generate')).toMatchObject({ available: false, reason: 'budget_missing' });
      await setProductRuntimeSettings(ctx.db.pool, chain.organizationId, { intelligenceBudgetMicrodollarsMonthly: 0 });
      expect(capability(await client.capabilities(), 'intelligence.generate')).toMatchObject({ available: false, reason: 'budget_missing' });
      await setProductRuntimeSettings(ctx.db.pool, chain.organizationId, { intelligenceBudgetMicrodollarsMonthly: 5_000_000 });
      expect(capability(await client.capabilities(), 'intelligence.generate')).toMatchObject({ available: true });
      // An installation's zero sublimit closes it for that installation.
      await setInstallationIntelligenceSublimit(ctx.db.pool, chain.installationId, 0);
      expect(capability(await client.capabilities(), 'intelligence.education')).toMatchObject({ available: false, reason: 'budget_missing' });
    } finally {
      await app.close();
    }
  });
});
