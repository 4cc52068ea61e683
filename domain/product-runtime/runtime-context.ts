// What an admitted installation may learn about itself: its runtime context, its capabilities
// (computed from configuration, scopes, grants and settings, never assumed), and its workspace as
// far as its grants reach. Every query is bounded by the caller's own chain ids.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Capability, CapabilityId, MissingPart } from '@hosted-notes/runtime-sdk';
import { isoTimestamp } from '../../db/row-schemas.ts';
import type { RuntimeContext } from './chain.ts';
import type { Scope } from './entities.ts';
import { listBindings } from './vault-bindings.ts';

type Db = CommonQueryMethods;

const contextRowSchema = z.object({
  organizationName: z.string(),
  productSlug: z.string(),
  productName: z.string(),
  principalName: z.string(),
  credentialPrefix: z.string(),
  credentialExpiresAt: isoTimestamp.nullable(),
  workspaceName: z.string(),
  intelligenceBudget: z.number().nullable(),
  installationSublimit: z.number().nullable(),
  readGrants: z.number(),
  writeGrants: z.number(),
});

/** The names behind the caller's chain ids, and what its capabilities are computed from. */
async function readChainDetails(db: Db, caller: RuntimeContext) {
  return db.one(sql.type(contextRowSchema)`
    SELECT o.name AS "organizationName", pd.slug AS "productSlug", pd.name AS "productName", sp.name AS "principalName",
           c.display_prefix AS "credentialPrefix", c.expires_at AS "credentialExpiresAt", w.name AS "workspaceName",
           (o.settings #>> '{productRuntime,intelligenceBudgetMicrodollarsMonthly}')::bigint AS "intelligenceBudget",
           (i.configuration #>> '{productRuntime,intelligenceBudgetMicrodollarsMonthly}')::bigint AS "installationSublimit",
           (SELECT count(*) FROM logical_vault_grants g JOIN vaults v ON v.id = g.vault_id
             WHERE g.installation_id = i.id AND g.revoked_at IS NULL AND v.owner_workspace_id = i.workspace_id)::int AS "readGrants",
           (SELECT count(*) FROM logical_vault_grants g JOIN vaults v ON v.id = g.vault_id
             WHERE g.installation_id = i.id AND g.revoked_at IS NULL AND g.access = 'write' AND v.owner_workspace_id = i.workspace_id)::int AS "writeGrants"
      FROM service_credentials c
      JOIN service_principals sp ON sp.id = c.service_principal_id
      JOIN product_installations i ON i.id = sp.installation_id
      JOIN product_definitions pd ON pd.id = i.product_definition_id
      JOIN organizations o ON o.id = i.organization_id
      JOIN workspaces w ON w.id = i.workspace_id
     WHERE c.id = ${caller.credentialId} AND sp.id = ${caller.servicePrincipalId} AND i.id = ${caller.installationId}`);
}

export async function getRuntimeContext(db: Db, caller: RuntimeContext, presentation: Record<string, unknown> | null) {
  const row = await readChainDetails(db, caller);
  return {
    adapter: 'hosted' as const,
    runtimeVersion: '1' as const,
    organization: { id: caller.organizationId, name: row.organizationName },
    product: { id: caller.productDefinitionId, slug: row.productSlug, name: row.productName },
    installation: { id: caller.installationId },
    principal: { id: caller.servicePrincipalId, name: row.principalName },
    credential: { id: caller.credentialId, displayPrefix: row.credentialPrefix, scopes: [...caller.scopes], expiresAt: row.credentialExpiresAt },
    workspace: { id: caller.workspaceId, name: row.workspaceName },
    presentation,
  };
}

/** What the service is configured with, beyond the database (the API's configuration). */
export type ServiceConfiguration = {
  /** A model provider is configured (domain/intelligence/setup.ts). */
  intelligenceProvider: boolean;
  /** The product definition has a domain composition (a pack assigned). */
  domainComposition: boolean;
  /** A Google OAuth client (and a secret box for its tokens) is configured (docs/connections.md). */
  googleConnections?: boolean;
};

type CapabilityRule = { id: CapabilityId; scopes: Scope[]; check: () => Pick<Capability, 'reason' | 'detail'> | null };

/**
 * Each capability with whether this caller can use it now, and if not the first reason why:
 * not offered by this service, not configured, scope missing, grant missing, budget missing.
 * Order of the reasons: what the service lacks before what the caller lacks.
 */
export async function getCapabilities(db: Db, caller: RuntimeContext, config: ServiceConfiguration): Promise<{ adapter: 'hosted'; capabilities: Capability[] }> {
  const row = await readChainDetails(db, caller);
  const budget = row.installationSublimit !== null && row.intelligenceBudget !== null ? Math.min(row.installationSublimit, row.intelligenceBudget) : row.intelligenceBudget;
  const notOffered = (what: string) => ({ reason: 'not_supported' as const, detail: `${what} is not offered by this service version.` });
  const intelligence = () => {
    if (!config.intelligenceProvider) return { reason: 'capability_not_configured' as const, detail: 'No model provider is configured on this service.' };
    if (!budget) return { reason: 'budget_missing' as const, detail: 'The organization has no intelligence budget (missing or zero fails closed).' };
    return null;
  };
  const rules: CapabilityRule[] = [
    { id: 'notes.read', scopes: ['notes.read'], check: () => (row.readGrants > 0 ? null : { reason: 'grant_missing', detail: 'No hosted vault is granted to this installation.' }) },
    { id: 'notes.write', scopes: ['notes.write'], check: () => (row.writeGrants > 0 ? null : { reason: 'grant_missing', detail: 'No hosted vault is granted for writing.' }) },
    { id: 'vaults.bind', scopes: ['vaults.bind'], check: () => null },
    {
      id: 'domain-composition',
      scopes: ['runtime.read'],
      check: () => (config.domainComposition ? null : { reason: 'setting_missing', detail: 'No domain composition (pack) is assigned to this product.' }),
    },
    { id: 'context-scopes', scopes: ['scopes.read'], check: () => null },
    { id: 'shared-memory.propose', scopes: ['memory.propose'], check: () => null },
    { id: 'intelligence.generate', scopes: ['intelligence.execute'], check: intelligence },
    { id: 'intelligence.education', scopes: ['intelligence.execute'], check: intelligence },
    // The deterministic education operations need the scope only: no provider, no budget.
    { id: 'intelligence.education-deterministic', scopes: ['intelligence.execute'], check: () => null },
    // Media storage is always configured (Postgres by default); the scopes decide.
    { id: 'media.audio', scopes: ['media.write', 'media.read'], check: () => null },
    {
      id: 'connections.google',
      scopes: ['connections.manage', 'connections.execute'],
      check: () => (config.googleConnections ? null : { reason: 'capability_not_configured', detail: 'No Google OAuth client is configured on this service.' }),
    },
    // Governed actions reach Forge through proposals a person reviews (shared-memory.propose today).
    { id: 'decisions.forge', scopes: ['memory.propose'], check: () => null },
    // The spec names "pulse" operations without defining them (docs/product-runtime.md).
    { id: 'pulse', scopes: [], check: () => notOffered('Pulse') },
  ];
  const capabilities = rules.map((rule): Capability => {
    const service = rule.check();
    // What the service lacks is said first: a scope would not help.
    if (service && (service.reason === 'not_supported' || service.reason === 'capability_not_configured')) {
      return { id: rule.id, available: false, ...service, requiredScopes: rule.scopes };
    }
    const lacking = rule.scopes.filter((s) => !caller.scopes.includes(s));
    // A capability with several scopes (media: write and read) is usable with any of them.
    if (rule.scopes.length > 0 && lacking.length === rule.scopes.length) {
      return { id: rule.id, available: false, reason: 'scope_missing', detail: `The credential lacks ${rule.scopes.join(' or ')}.`, requiredScopes: rule.scopes };
    }
    if (service) return { id: rule.id, available: false, ...service, requiredScopes: rule.scopes };
    return { id: rule.id, available: true, reason: null, detail: 'Available.', requiredScopes: rule.scopes };
  });
  return { adapter: 'hosted', capabilities };
}

const grantedVaultRowSchema = z.object({ vaultId: z.uuid(), name: z.string(), access: z.enum(['read', 'write']), grantId: z.uuid(), grantedAt: isoTimestamp });

/**
 * The installation's workspace as far as its grants reach: the vaults it holds a grant on and its
 * open binding requests. Partial when no vault is granted (the product then asks a person with
 * bindHostedVault); other vaults of the workspace are not listed, not even by name.
 */
export async function getWorkspace(db: Db, caller: RuntimeContext) {
  const workspace = await db.one(sql.type(z.object({ id: z.uuid(), name: z.string() }))`SELECT w.id, w.name FROM workspaces w WHERE w.id = ${caller.workspaceId}`);
  const vaults = await db.any(sql.type(grantedVaultRowSchema)`
    SELECT v.id AS "vaultId", v.name, g.access, g.id AS "grantId", g.created_at AS "grantedAt"
      FROM logical_vault_grants g JOIN vaults v ON v.id = g.vault_id
     WHERE g.installation_id = ${caller.installationId} AND g.revoked_at IS NULL AND v.owner_workspace_id = ${caller.workspaceId}
     ORDER BY v.name, v.id`);
  const pendingBindings = (await listBindings(db, caller, { limit: 100 })).filter((b) => b.state === 'pending');
  const missing: MissingPart[] =
    vaults.length === 0
      ? [{ part: 'workspace.vaults', reason: pendingBindings.length > 0 ? 'grant_pending' : 'grant_missing', detail: 'No hosted vault is granted to this installation yet.' }]
      : [];
  return { data: { workspace, vaults: [...vaults], pendingBindings }, missing };
}
