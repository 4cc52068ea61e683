// The records that make up the Product Runtime chain, and the System Operations that manage them.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { runtimeScopes } from '@hosted-notes/runtime-sdk';
import { AppError } from '../errors.ts';
import { displayPrefix, generateSecret, hashSecret, secretPrefixes } from '../secrets.ts';
import { emptyRow, isoTimestamp } from '../../db/row-schemas.ts';

type Db = CommonQueryMethods;

/** Credential scopes: the SDK's operation table states them (runtimeScopes), with the operation each serves. */
export const scopes = runtimeScopes;
export const scopeSchema = z.enum(scopes);
export type Scope = z.infer<typeof scopeSchema>;

export const DEFAULT_MEDIA_STORAGE_BYTES = 524_288_000; // 500 MiB, from the spec

/** `organization.settings.productRuntime`. Missing or zero intelligence budget fails closed. */
export const productRuntimeSettingsSchema = z.strictObject({
  apiOperationsPerMonth: z.number().int().min(0).optional(),
  intelligenceBudgetMicrodollarsMonthly: z.number().int().min(0).optional(),
  maxConcurrentIntelligence: z.number().int().min(0).optional(),
  mediaStorageBytes: z.number().int().min(0).optional(),
});
export type ProductRuntimeSettings = z.infer<typeof productRuntimeSettingsSchema>;

export const organizationSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  status: z.enum(['active', 'suspended']),
  settings: z.record(z.string(), z.unknown()),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});
export type Organization = z.infer<typeof organizationSchema>;

const orgColumns = sql.fragment`o.id, o.name, o.status, o.settings, o.created_at AS "createdAt", o.updated_at AS "updatedAt"`;

export async function createOrganization(db: Db, input: { name: string }): Promise<Organization> {
  return db.one(sql.type(organizationSchema)`INSERT INTO organizations AS o (name) VALUES (${input.name}) RETURNING ${orgColumns}`);
}

export async function getOrganization(db: Db, id: string): Promise<Organization> {
  const org = await db.maybeOne(sql.type(organizationSchema)`SELECT ${orgColumns} FROM organizations o WHERE o.id = ${id}`);
  if (!org) throw new AppError('not_found', `No organization ${id}.`);
  return org;
}

export async function setOrganizationStatus(db: Db, id: string, status: Organization['status']): Promise<Organization> {
  const org = await db.maybeOne(sql.type(organizationSchema)`
    UPDATE organizations o SET status = ${status}, updated_at = now() WHERE o.id = ${id} RETURNING ${orgColumns}`);
  if (!org) throw new AppError('not_found', `No organization ${id}.`);
  return org;
}

/** Merges the given fields into `settings.productRuntime`; other settings are left alone. */
export async function setProductRuntimeSettings(db: Db, id: string, change: ProductRuntimeSettings): Promise<Organization> {
  const patch = productRuntimeSettingsSchema.parse(change);
  const org = await db.maybeOne(sql.type(organizationSchema)`
    UPDATE organizations o
       SET settings = jsonb_set(o.settings, '{productRuntime}', coalesce(o.settings -> 'productRuntime', '{}'::jsonb) || ${sql.jsonb(patch)}),
           updated_at = now()
     WHERE o.id = ${id}
    RETURNING ${orgColumns}`);
  if (!org) throw new AppError('not_found', `No organization ${id}.`);
  return org;
}

export function readProductRuntimeSettings(org: Organization): ProductRuntimeSettings & { mediaStorageBytes: number } {
  const parsed = productRuntimeSettingsSchema.safeParse(org.settings['productRuntime'] ?? {});
  const settings = parsed.success ? parsed.data : {};
  return { ...settings, mediaStorageBytes: settings.mediaStorageBytes ?? DEFAULT_MEDIA_STORAGE_BYTES };
}

export async function assignWorkspace(db: Db, input: { organizationId: string; workspaceId: string }): Promise<void> {
  await db.one(sql.type(z.object({ organizationId: z.uuid() }))`
    INSERT INTO organization_workspaces (organization_id, workspace_id) VALUES (${input.organizationId}, ${input.workspaceId})
    ON CONFLICT (organization_id, workspace_id) DO UPDATE SET revoked_at = NULL
    RETURNING organization_id AS "organizationId"`);
}

export async function unassignWorkspace(db: Db, input: { organizationId: string; workspaceId: string }): Promise<void> {
  const row = await db.maybeOne(sql.type(z.object({ organizationId: z.uuid() }))`
    UPDATE organization_workspaces SET revoked_at = coalesce(revoked_at, now())
     WHERE organization_id = ${input.organizationId} AND workspace_id = ${input.workspaceId}
    RETURNING organization_id AS "organizationId"`);
  if (!row) throw new AppError('not_found', 'That workspace is not assigned to that organization.');
}

export const productDefinitionSchema = z.object({
  id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  status: z.enum(['active', 'retired']),
  redirectUris: z.array(z.string()),
  createdAt: isoTimestamp,
});
export type ProductDefinition = z.infer<typeof productDefinitionSchema>;

const productColumns = sql.fragment`pd.id, pd.slug, pd.name, pd.status, pd.redirect_uris AS "redirectUris", pd.created_at AS "createdAt"`;

export async function createProductDefinition(db: Db, input: { slug: string; name: string; redirectUris?: string[] }): Promise<ProductDefinition> {
  const targets = validateReturnTargets(input.redirectUris ?? []);
  return db.one(sql.type(productDefinitionSchema)`
    INSERT INTO product_definitions AS pd (slug, name, redirect_uris)
    VALUES (${input.slug}, ${input.name}, ${sql.array(targets, 'text')})
    RETURNING ${productColumns}`);
}

export async function listProductDefinitions(db: Db): Promise<readonly ProductDefinition[]> {
  return db.any(sql.type(productDefinitionSchema)`SELECT ${productColumns} FROM product_definitions pd ORDER BY pd.slug`);
}

export async function setProductDefinitionStatus(db: Db, id: string, status: ProductDefinition['status']): Promise<ProductDefinition> {
  const pd = await db.maybeOne(sql.type(productDefinitionSchema)`
    UPDATE product_definitions pd SET status = ${status} WHERE pd.id = ${id} RETURNING ${productColumns}`);
  if (!pd) throw new AppError('not_found', `No product definition ${id}.`);
  return pd;
}

export const installationSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  productDefinitionId: z.uuid(),
  workspaceId: z.uuid(),
  status: z.enum(['active', 'suspended', 'uninstalled']),
  configuration: z.record(z.string(), z.unknown()),
  createdAt: isoTimestamp,
});
export type Installation = z.infer<typeof installationSchema>;

const installationColumns = sql.fragment`i.id, i.organization_id AS "organizationId", i.product_definition_id AS "productDefinitionId",
  i.workspace_id AS "workspaceId", i.status, i.configuration, i.created_at AS "createdAt"`;

export async function createInstallation(
  db: Db,
  input: { organizationId: string; productDefinitionId: string; workspaceId: string },
): Promise<Installation> {
  return db.one(sql.type(installationSchema)`
    INSERT INTO product_installations AS i (organization_id, product_definition_id, workspace_id)
    VALUES (${input.organizationId}, ${input.productDefinitionId}, ${input.workspaceId})
    RETURNING ${installationColumns}`);
}

export async function setInstallationStatus(db: Db, id: string, status: Installation['status']): Promise<Installation> {
  const inst = await db.maybeOne(sql.type(installationSchema)`
    UPDATE product_installations i SET status = ${status}, updated_at = now() WHERE i.id = ${id} RETURNING ${installationColumns}`);
  if (!inst) throw new AppError('not_found', `No installation ${id}.`);
  return inst;
}

/**
 * Sets `configuration.productRuntime.intelligenceBudgetMicrodollarsMonthly`, a sublimit that may
 * only lower the organization's budget (null clears it).
 */
export async function setInstallationIntelligenceSublimit(db: Db, id: string, microdollars: number | null): Promise<Installation> {
  if (microdollars !== null && (!Number.isSafeInteger(microdollars) || microdollars < 0)) {
    throw new AppError('invalid_request', 'The sublimit must be a non-negative integer of microdollars.');
  }
  return db.transaction(async (tx) => {
    const row = await tx.maybeOne(sql.type(z.object({ orgBudget: z.number().nullable() }))`
      SELECT (o.settings #>> '{productRuntime,intelligenceBudgetMicrodollarsMonthly}')::bigint AS "orgBudget"
        FROM product_installations i JOIN organizations o ON o.id = i.organization_id
       WHERE i.id = ${id} FOR UPDATE OF i`);
    if (!row) throw new AppError('not_found', `No installation ${id}.`);
    if (microdollars !== null && row.orgBudget !== null && microdollars > row.orgBudget) {
      throw new AppError('invalid_request', `The sublimit (${microdollars}) exceeds the organization budget (${row.orgBudget}); it may only lower it.`);
    }
    const value = microdollars === null ? sql.fragment`i.configuration #- '{productRuntime,intelligenceBudgetMicrodollarsMonthly}'`
      : sql.fragment`jsonb_set(i.configuration, '{productRuntime}',
          coalesce(i.configuration -> 'productRuntime', '{}'::jsonb) || jsonb_build_object('intelligenceBudgetMicrodollarsMonthly', ${microdollars}::bigint))`;
    return tx.one(sql.type(installationSchema)`
      UPDATE product_installations i SET configuration = ${value}, updated_at = now() WHERE i.id = ${id} RETURNING ${installationColumns}`);
  });
}

export const servicePrincipalSchema = z.object({
  id: z.uuid(),
  installationId: z.uuid(),
  name: z.string(),
  status: z.enum(['active', 'disabled']),
  createdAt: isoTimestamp,
});
export type ServicePrincipal = z.infer<typeof servicePrincipalSchema>;

const principalColumns = sql.fragment`sp.id, sp.installation_id AS "installationId", sp.name, sp.status, sp.created_at AS "createdAt"`;

export async function createServicePrincipal(db: Db, input: { installationId: string; name: string }): Promise<ServicePrincipal> {
  return db.one(sql.type(servicePrincipalSchema)`
    INSERT INTO service_principals AS sp (installation_id, name) VALUES (${input.installationId}, ${input.name})
    RETURNING ${principalColumns}`);
}

export async function setServicePrincipalStatus(db: Db, id: string, status: ServicePrincipal['status']): Promise<ServicePrincipal> {
  const sp = await db.maybeOne(sql.type(servicePrincipalSchema)`
    UPDATE service_principals sp SET status = ${status} WHERE sp.id = ${id} RETURNING ${principalColumns}`);
  if (!sp) throw new AppError('not_found', `No service principal ${id}.`);
  return sp;
}

export const serviceCredentialSchema = z.object({
  id: z.uuid(),
  servicePrincipalId: z.uuid(),
  displayPrefix: z.string(),
  scopes: z.array(scopeSchema),
  createdAt: isoTimestamp,
  lastUsedAt: isoTimestamp.nullable(),
  expiresAt: isoTimestamp.nullable(),
  revokedAt: isoTimestamp.nullable(),
});
export type ServiceCredential = z.infer<typeof serviceCredentialSchema>;

const credentialColumns = sql.fragment`c.id, c.service_principal_id AS "servicePrincipalId", c.display_prefix AS "displayPrefix", c.scopes,
  c.created_at AS "createdAt", c.last_used_at AS "lastUsedAt", c.expires_at AS "expiresAt", c.revoked_at AS "revokedAt"`;

/** Issues a credential; the raw secret is returned once and only its hash is stored. */
export async function issueServiceCredential(
  db: Db,
  input: { servicePrincipalId: string; scopes: Scope[]; expiresAt?: string | null },
): Promise<{ secret: string; record: ServiceCredential }> {
  const secret = generateSecret(secretPrefixes.serviceCredential);
  const record = await db.one(sql.type(serviceCredentialSchema)`
    INSERT INTO service_credentials AS c (service_principal_id, secret_hash, display_prefix, scopes, expires_at)
    VALUES (${input.servicePrincipalId}, ${hashSecret(secret)}, ${displayPrefix(secret, secretPrefixes.serviceCredential)},
            ${sql.array([...new Set(input.scopes)], 'text')}, ${input.expiresAt ?? null})
    RETURNING ${credentialColumns}`);
  return { secret, record };
}

export async function revokeServiceCredential(db: Db, id: string): Promise<ServiceCredential> {
  const record = await db.maybeOne(sql.type(serviceCredentialSchema)`
    UPDATE service_credentials c SET revoked_at = coalesce(c.revoked_at, now()) WHERE c.id = ${id} RETURNING ${credentialColumns}`);
  if (!record) throw new AppError('not_found', `No service credential ${id}.`);
  return record;
}

export const vaultGrantSchema = z.object({
  id: z.uuid(),
  installationId: z.uuid(),
  vaultId: z.uuid(),
  access: z.enum(['read', 'write']),
  createdAt: isoTimestamp,
  revokedAt: isoTimestamp.nullable(),
});
export type VaultGrant = z.infer<typeof vaultGrantSchema>;

const grantColumns = sql.fragment`g.id, g.installation_id AS "installationId", g.vault_id AS "vaultId", g.access, g.created_at AS "createdAt", g.revoked_at AS "revokedAt"`;

/** Grants an installation access to one logical vault of its workspace (replacing a live grant). */
export async function grantVault(db: Db, input: { installationId: string; vaultId: string; access: 'read' | 'write' }): Promise<VaultGrant> {
  return db.transaction(async (tx) => {
    const sameWorkspace = await tx.maybeOne(sql.type(z.object({ ok: z.boolean() }))`
      SELECT (v.owner_workspace_id = i.workspace_id) AS ok
        FROM product_installations i, vaults v WHERE i.id = ${input.installationId} AND v.id = ${input.vaultId}`);
    if (!sameWorkspace) throw new AppError('not_found', 'No such installation or vault.');
    if (!sameWorkspace.ok) throw new AppError('invalid_request', "The vault must belong to the installation's workspace.");
    await tx.query(sql.type(emptyRow)`
      UPDATE logical_vault_grants SET revoked_at = now()
       WHERE installation_id = ${input.installationId} AND vault_id = ${input.vaultId} AND revoked_at IS NULL`);
    return tx.one(sql.type(vaultGrantSchema)`
      INSERT INTO logical_vault_grants AS g (installation_id, vault_id, access)
      VALUES (${input.installationId}, ${input.vaultId}, ${input.access})
      RETURNING ${grantColumns}`);
  });
}

/** Revocation removes authority only; the vault and its notes stay untouched. */
export async function revokeVaultGrant(db: Db, id: string): Promise<VaultGrant> {
  const grant = await db.maybeOne(sql.type(vaultGrantSchema)`
    UPDATE logical_vault_grants g SET revoked_at = coalesce(g.revoked_at, now()) WHERE g.id = ${id} RETURNING ${grantColumns}`);
  if (!grant) throw new AppError('not_found', `No vault grant ${id}.`);
  return grant;
}

// ---- listings for System Operations (no secret ever leaves: credentials show their prefix) -------

/**
 * The return targets a product registers for OAuth round trips: an HTTPS origin
 * (`https://studio.example`, any path under it) or an exact HTTPS redirect URI (with a path).
 * No fragments, no credentials in the URL, at most 20.
 */
export function validateReturnTargets(targets: readonly string[]): string[] {
  if (targets.length > 20) throw new AppError('invalid_request', 'At most 20 return origins / redirect URIs per product.');
  return targets.map((raw) => {
    const url = URL.parse(raw);
    if (!url || url.protocol !== 'https:') throw new AppError('invalid_request', `A return target must be an absolute https URL: ${raw}`);
    if (url.hash || url.username || url.password) throw new AppError('invalid_request', `A return target may carry no fragment or credentials: ${raw}`);
    // An origin is kept as an origin; anything with a path is an exact URI, kept as given.
    return url.pathname === '/' && !url.search && !raw.endsWith('/') ? url.origin : url.href;
  });
}

export async function setProductReturnTargets(db: Db, id: string, targets: readonly string[]): Promise<ProductDefinition> {
  const valid = validateReturnTargets(targets);
  const pd = await db.maybeOne(sql.type(productDefinitionSchema)`
    UPDATE product_definitions pd SET redirect_uris = ${sql.array(valid, 'text')} WHERE pd.id = ${id} RETURNING ${productColumns}`);
  if (!pd) throw new AppError('not_found', `No product definition ${id}.`);
  return pd;
}

export async function listInstallations(db: Db, filter: { organizationId?: string | undefined; workspaceId?: string | undefined }): Promise<readonly Installation[]> {
  return db.any(sql.type(installationSchema)`
    SELECT ${installationColumns} FROM product_installations i
     WHERE (${filter.organizationId ?? null}::uuid IS NULL OR i.organization_id = ${filter.organizationId ?? null}::uuid)
       AND (${filter.workspaceId ?? null}::uuid IS NULL OR i.workspace_id = ${filter.workspaceId ?? null}::uuid)
     ORDER BY i.created_at, i.id`);
}

export async function listServicePrincipals(db: Db, installationId: string): Promise<readonly ServicePrincipal[]> {
  return db.any(sql.type(servicePrincipalSchema)`SELECT ${principalColumns} FROM service_principals sp WHERE sp.installation_id = ${installationId} ORDER BY sp.created_at, sp.id`);
}

export async function listServiceCredentials(db: Db, servicePrincipalId: string): Promise<readonly ServiceCredential[]> {
  return db.any(sql.type(serviceCredentialSchema)`SELECT ${credentialColumns} FROM service_credentials c WHERE c.service_principal_id = ${servicePrincipalId} ORDER BY c.created_at, c.id`);
}

export async function listVaultGrants(db: Db, installationId: string, options: { includeRevoked: boolean }): Promise<readonly VaultGrant[]> {
  return db.any(sql.type(vaultGrantSchema)`
    SELECT ${grantColumns} FROM logical_vault_grants g
     WHERE g.installation_id = ${installationId} AND (${options.includeRevoked} OR g.revoked_at IS NULL)
     ORDER BY g.created_at, g.id`);
}
