// The Product Runtime chain refuses when any single link is missing, and names that link.
import { sql } from 'slonik';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createWorkspace } from '../domain/identity/workspaces.ts';
import { createVault } from '../domain/identity/vaults.ts';
import { authorizeProductRuntime, checkProductRuntimeChain } from '../domain/product-runtime/chain.ts';
import type { ChainLink } from '../domain/product-runtime/chain.ts';
import {
  assignWorkspace,
  createInstallation,
  createOrganization,
  createProductDefinition,
  createServicePrincipal,
  getOrganization,
  grantVault,
  issueServiceCredential,
  readProductRuntimeSettings,
  revokeServiceCredential,
  revokeVaultGrant,
  setInstallationIntelligenceSublimit,
  setInstallationStatus,
  setOrganizationStatus,
  setProductDefinitionStatus,
  setProductRuntimeSettings,
  setServicePrincipalStatus,
  unassignWorkspace,
} from '../domain/product-runtime/entities.ts';
import { useTestDatabase } from './support/harness.ts';
import { accountWithToken } from './support/fixtures.ts';

const db = useTestDatabase();

let slugCounter = 0;

/** A complete, valid chain with a write grant on one vault of the installation's workspace. */
async function buildChain() {
  const { account } = await accountWithToken(db.pool, 'team');
  const workspace = await createWorkspace(db.pool, { name: 'School district', ownerAccountId: account.id });
  const vault = await createVault(db.pool, { name: 'Curriculum', ownerWorkspaceId: workspace.id });
  const org = await createOrganization(db.pool, { name: 'District 9' });
  await assignWorkspace(db.pool, { organizationId: org.id, workspaceId: workspace.id });
  const product = await createProductDefinition(db.pool, { slug: `lesson-studio-${++slugCounter}`, name: 'Lesson Studio' });
  const installation = await createInstallation(db.pool, { organizationId: org.id, productDefinitionId: product.id, workspaceId: workspace.id });
  const principal = await createServicePrincipal(db.pool, { installationId: installation.id, name: 'lesson-studio-backend' });
  const credential = await issueServiceCredential(db.pool, { servicePrincipalId: principal.id, scopes: ['intelligence.execute', 'media.read'] });
  const grant = await grantVault(db.pool, { installationId: installation.id, vaultId: vault.id, access: 'write' });
  return { account, workspace, vault, org, product, installation, principal, credential, grant };
}

type Chain = Awaited<ReturnType<typeof buildChain>>;

const check = (chain: Chain, overrides: { scope?: 'intelligence.execute' | 'media.write'; access?: 'read' | 'write'; vaultId?: string } = {}) =>
  checkProductRuntimeChain(db.pool, {
    credential: chain.credential.secret,
    scope: overrides.scope ?? 'intelligence.execute',
    vault: { vaultId: overrides.vaultId ?? chain.vault.id, access: overrides.access ?? 'write' },
  });

describe('Product Runtime chain', () => {
  it('authorizes when every link holds, and returns the resolved context', async () => {
    const chain = await buildChain();
    const result = await check(chain);
    expect(result).toEqual({
      ok: true,
      operationsLimit: 100_000,
      context: expect.objectContaining({
        organizationId: chain.org.id,
        installationId: chain.installation.id,
        workspaceId: chain.workspace.id,
        vault: { vaultId: chain.vault.id, access: 'write', grantId: chain.grant.id },
      }),
    });
  });

  const breakers: Array<[ChainLink, string, (chain: Chain) => Promise<unknown>]> = [
    ['credential', 'revoked credential', (c) => revokeServiceCredential(db.pool, c.credential.record.id)],
    [
      'credential',
      'expired credential',
      (c) => db.pool.query(sql.type(z.object({}))`UPDATE service_credentials SET expires_at = now() - interval '1 second' WHERE id = ${c.credential.record.id}`),
    ],
    ['service_principal', 'disabled service principal', (c) => setServicePrincipalStatus(db.pool, c.principal.id, 'disabled')],
    ['installation', 'suspended installation', (c) => setInstallationStatus(db.pool, c.installation.id, 'suspended')],
    ['installation', 'uninstalled installation', (c) => setInstallationStatus(db.pool, c.installation.id, 'uninstalled')],
    ['product_definition', 'retired product definition', (c) => setProductDefinitionStatus(db.pool, c.product.id, 'retired')],
    ['organization', 'suspended organization', (c) => setOrganizationStatus(db.pool, c.org.id, 'suspended')],
    ['workspace_assignment', 'workspace assignment withdrawn', (c) => unassignWorkspace(db.pool, { organizationId: c.org.id, workspaceId: c.workspace.id })],
    ['vault_grant', 'vault grant revoked', (c) => revokeVaultGrant(db.pool, c.grant.id)],
  ];

  it.each(breakers)('refuses at link %s when there is a %s', async (link, _label, breakLink) => {
    const chain = await buildChain();
    expect((await check(chain)).ok).toBe(true);
    await breakLink(chain);
    const result = await check(chain);
    expect(result).toMatchObject({ ok: false, link });
    await expect(
      authorizeProductRuntime(db.pool, { credential: chain.credential.secret, scope: 'intelligence.execute', vault: { vaultId: chain.vault.id, access: 'write' } }),
    ).rejects.toMatchObject({ extensions: { failedLink: link } });
  });

  it('refuses at credential_scope when the credential lacks the scope', async () => {
    const chain = await buildChain();
    expect(await check(chain, { scope: 'media.write' })).toMatchObject({ ok: false, link: 'credential_scope', code: 'scope_missing' });
  });

  it('refuses an unknown or malformed credential at the first link', async () => {
    const chain = await buildChain();
    for (const credential of ['hnp_svc_' + 'x'.repeat(43), 'not-a-credential', chain.credential.secret.replace('hnp_svc_', 'hnp_pat_')]) {
      expect(await checkProductRuntimeChain(db.pool, { credential, scope: 'intelligence.execute' })).toMatchObject({ ok: false, link: 'credential', code: 'credential_invalid' });
    }
  });

  it('refuses write with a read-only grant, and a vault of another workspace even if named', async () => {
    const chain = await buildChain();
    await grantVault(db.pool, { installationId: chain.installation.id, vaultId: chain.vault.id, access: 'read' });
    expect((await check(chain, { access: 'read' })).ok).toBe(true);
    expect(await check(chain, { access: 'write' })).toMatchObject({ ok: false, link: 'vault_grant' });

    const other = await buildChain();
    expect(await check(chain, { vaultId: other.vault.id, access: 'read' })).toMatchObject({ ok: false, link: 'vault_grant' });
    await expect(grantVault(db.pool, { installationId: chain.installation.id, vaultId: other.vault.id, access: 'read' })).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('authorizes without a vault when the operation touches none', async () => {
    const chain = await buildChain();
    await revokeVaultGrant(db.pool, chain.grant.id);
    expect((await checkProductRuntimeChain(db.pool, { credential: chain.credential.secret, scope: 'media.read' })).ok).toBe(true);
  });

  it('stores only the hash of a service credential', async () => {
    const chain = await buildChain();
    const stored = await db.pool.oneFirst(sql.type(z.object({ row: z.string() }))`SELECT c::text AS row FROM service_credentials c WHERE id = ${chain.credential.record.id}`);
    expect(stored).not.toContain(chain.credential.secret.slice(8));
  });
});

describe('organization settings.productRuntime and installation sublimits', () => {
  it('merges settings, defaults media storage to 500 MiB, and only lets a sublimit lower the budget', async () => {
    const chain = await buildChain();
    expect(readProductRuntimeSettings(await getOrganization(db.pool, chain.org.id))).toEqual({ mediaStorageBytes: 524_288_000 });
    await setProductRuntimeSettings(db.pool, chain.org.id, { intelligenceBudgetMicrodollarsMonthly: 5_000_000, maxConcurrentIntelligence: 2 });
    const org = await setProductRuntimeSettings(db.pool, chain.org.id, { apiOperationsPerMonth: 10_000 });
    expect(readProductRuntimeSettings(org)).toEqual({
      apiOperationsPerMonth: 10_000,
      intelligenceBudgetMicrodollarsMonthly: 5_000_000,
      maxConcurrentIntelligence: 2,
      mediaStorageBytes: 524_288_000,
    });
    await expect(setProductRuntimeSettings(db.pool, chain.org.id, { apiOperationsPerMonth: -1 })).rejects.toThrow();

    const lowered = await setInstallationIntelligenceSublimit(db.pool, chain.installation.id, 1_000_000);
    expect(lowered.configuration).toEqual({ productRuntime: { intelligenceBudgetMicrodollarsMonthly: 1_000_000 } });
    await expect(setInstallationIntelligenceSublimit(db.pool, chain.installation.id, 6_000_000)).rejects.toMatchObject({ code: 'invalid_request' });
    const cleared = await setInstallationIntelligenceSublimit(db.pool, chain.installation.id, null);
    expect(cleared.configuration).toEqual({ productRuntime: {} });
  });
});
