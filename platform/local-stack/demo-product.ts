// The demo Product Runtime chain `npm start` seeds beside the demo account: an organization with the
// demo workspace assigned, a product definition, its installation in that workspace, a service
// principal, a credential with every core scope, a write grant on the demo vault, the education
// pack, and a context scope over the demo vault granted to the installation. The raw
// credential exists only in the git-ignored state file (.data/demo-product.json, 0600) so a second
// start prints the same one; the database keeps its hash.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { runtimeScopes } from '@hosted-notes/runtime-sdk';
import { checkProductRuntimeChain } from '../../domain/product-runtime/chain.ts';
import {
  assignWorkspace,
  createInstallation,
  createOrganization,
  setProductRuntimeSettings,
  createProductDefinition,
  createServicePrincipal,
  grantVault,
  issueServiceCredential,
} from '../../domain/product-runtime/entities.ts';
import type { Scope } from '../../domain/product-runtime/entities.ts';
import { assignProductPack } from '../../domain/product-runtime/composition.ts';
import { createScope, grantScope } from '../../domain/context-scopes/scopes.ts';

const stateSchema = z.object({ organizationId: z.uuid(), installationId: z.uuid(), vaultId: z.uuid(), credential: z.string() });
export type DemoProduct = z.infer<typeof stateSchema>;

/** The scopes of the demo credential: every scope (connections answer unavailable until a Google client is configured). */
const demoScopes: Scope[] = [...runtimeScopes];
/** The newest scope above: a credential kept from an older start without it is replaced. */
const newestScope: Scope = 'connections.execute';

export async function ensureDemoProduct(db: DatabasePool, demo: { workspaceId: string; vaultId: string }, stateFile: string): Promise<DemoProduct> {
  if (existsSync(stateFile)) {
    const parsed = stateSchema.safeParse(JSON.parse(readFileSync(stateFile, 'utf8')));
    if (parsed.success && parsed.data.vaultId === demo.vaultId) {
      const check = await checkProductRuntimeChain(db, { credential: parsed.data.credential, scope: 'notes.read', vault: { vaultId: demo.vaultId, access: 'read' } });
      const current = await checkProductRuntimeChain(db, { credential: parsed.data.credential, scope: newestScope });
      if (check.ok && current.ok) return parsed.data;
    }
  }
  const state = await db.transaction(async (tx) => {
    const org = await createOrganization(tx, { name: 'Demo district' });
    await assignWorkspace(tx, { organizationId: org.id, workspaceId: demo.workspaceId });
    // US$5 a month and four executions at once: enough to try generate once a provider is configured.
    await setProductRuntimeSettings(tx, org.id, { intelligenceBudgetMicrodollarsMonthly: 5_000_000, maxConcurrentIntelligence: 4 });
    const product = await createProductDefinition(tx, { slug: `demo-studio-${org.id.slice(0, 8)}`, name: 'Demo Lesson Studio', redirectUris: ['https://studio.example.test'] });
    const installation = await createInstallation(tx, { organizationId: org.id, productDefinitionId: product.id, workspaceId: demo.workspaceId });
    const principal = await createServicePrincipal(tx, { installationId: installation.id, name: 'demo-studio-backend' });
    const { secret } = await issueServiceCredential(tx, { servicePrincipalId: principal.id, scopes: demoScopes });
    await grantVault(tx, { installationId: installation.id, vaultId: demo.vaultId, access: 'write' });
    // The education reference pack (getDomainComposition) and one context scope over the demo vault.
    await assignProductPack(tx, product.id, 'education@1');
    const scopeKey = `demo-${org.id.slice(0, 8)}`;
    await createScope(tx, {
      workspaceId: demo.workspaceId,
      scopeKey,
      name: 'Demo course',
      kind: 'course',
      audienceKind: 'course_educators',
      audienceDescription: 'Educators of the demo course',
      vaultId: demo.vaultId,
    });
    await grantScope(tx, { workspaceId: demo.workspaceId, scopeKey, installationId: installation.id });
    return { organizationId: org.id, installationId: installation.id, vaultId: demo.vaultId, credential: secret };
  });
  writeFileSync(stateFile, JSON.stringify(state, null, 2), { mode: 0o600 });
  return state;
}
