// System Operations: every command is a zod-described option set plus a call into the domain.
// The CLI (scripts/ops.ts) derives flags, --help and validation from these definitions.
import { z } from 'zod';
import {
  createAccount,
  findAccountByEmail,
  getAccount,
  issueAccessToken,
  listAccessTokens,
  listAccounts,
  revokeAccessToken,
  rotateAccessToken,
  updateAccount,
} from '../../domain/identity/accounts.ts';
import { AppError } from '../../domain/errors.ts';
import { UsageError } from './errors.ts';
import { accountStatusSchema, planSchema } from '../../domain/identity/plans.ts';
import { createMapping, createVault, getVault, listMappings, listVaultsOfAccount, revokeMapping } from '../../domain/identity/vaults.ts';
import {
  addMember,
  createRole,
  createWorkspace,
  getWorkspace,
  listMembers,
  listRoles,
  listWorkspacesOfAccount,
  permissions,
  permissionSchema,
  removeMember,
  setRolePermissions,
} from '../../domain/identity/workspaces.ts';
import { importLimits } from '../../domain/notes/knowledge.ts';
import { DEFAULT_IMPORT_BATCH, exportVault, importVault } from '../../domain/notes/vault-transfer.ts';
import { progressReporter } from './progress.ts';
import { checkProductRuntimeChain } from '../../domain/product-runtime/chain.ts';
import {
  assignWorkspace,
  createInstallation,
  createOrganization,
  createProductDefinition,
  createServicePrincipal,
  getOrganization,
  grantVault,
  issueServiceCredential,
  listInstallations,
  listProductDefinitions,
  listServiceCredentials,
  listServicePrincipals,
  listVaultGrants,
  revokeServiceCredential,
  revokeVaultGrant,
  scopeSchema,
  scopes,
  setInstallationIntelligenceSublimit,
  setInstallationStatus,
  setOrganizationStatus,
  setProductDefinitionStatus,
  setProductReturnTargets,
  setProductRuntimeSettings,
  setServicePrincipalStatus,
  unassignWorkspace,
} from '../../domain/product-runtime/entities.ts';

import { command } from './command.ts';
import type { Command } from './command.ts';

export { command };
export type { Command };

const id = (what: string) => z.uuid().describe(`${what} id (UUID)`);
const count = (what: string) => z.coerce.number().int().min(0).optional().describe(what);
const list = <T extends z.ZodType>(item: T, what: string) => z.array(item).min(1).describe(`${what} (repeat the flag for several)`);
const flag = (what: string) => z.boolean().optional().describe(what);
const timestamp = z.iso.datetime({ offset: true }).optional().describe('expiry, ISO-8601 (e.g. 2027-01-01T00:00:00Z); none by default');

export const commands: Record<string, Record<string, Command>> = {
  account: {
    create: command(
      'Create an account on a plan',
      z.object({ email: z.email().describe('e-mail address'), name: z.string().min(1).max(200).describe('display name'), plan: planSchema.describe(`plan: ${planSchema.options.join(', ')}`) }),
      (db, o) => createAccount(db, { email: o.email, displayName: o.name, plan: o.plan }),
    ),
    get: command(
      'Show one account',
      z
        .object({ id: id('account').optional(), email: z.email().optional().describe('or look up by e-mail') })
        .refine((o) => Boolean(o.id) !== Boolean(o.email), 'Give exactly one of --id or --email.'),
      async (db, o) => (o.id ? getAccount(db, o.id) : ((await findAccountByEmail(db, o.email!)) ?? Promise.reject(new AppError('not_found', `No account ${o.email}.`)))),
    ),
    list: command('List accounts', z.object({}), (db) => listAccounts(db)),
    'set-plan': command('Change the plan (takes effect on the next request)', z.object({ id: id('account'), plan: planSchema.describe('new plan') }), (db, o) =>
      updateAccount(db, o.id, { plan: o.plan }),
    ),
    'set-status': command(
      'Activate, suspend or close an account',
      z.object({ id: id('account'), status: accountStatusSchema.describe(`status: ${accountStatusSchema.options.join(', ')}`) }),
      (db, o) => updateAccount(db, o.id, { status: o.status }),
    ),
  },
  token: {
    create: command(
      'Issue a personal access token (shown once; only its hash is stored)',
      z.object({ account: id('account'), name: z.string().min(1).max(100).describe('a label for the token'), expiresAt: timestamp }),
      (db, o) => issueAccessToken(db, { accountId: o.account, name: o.name, expiresAt: o.expiresAt ?? null }),
    ),
    list: command('List the tokens of an account (never the secrets)', z.object({ account: id('account') }), (db, o) => listAccessTokens(db, o.account)),
    rotate: command('Issue a replacement token and revoke this one', z.object({ id: id('token') }), (db, o) => rotateAccessToken(db, o.id)),
    revoke: command('Revoke a token', z.object({ id: id('token') }), (db, o) => revokeAccessToken(db, o.id)),
  },
  workspace: {
    create: command('Create a workspace; the owner becomes a member with role owner', z.object({ name: z.string().min(1).max(200).describe('workspace name'), owner: id('owner account') }), (db, o) =>
      createWorkspace(db, { name: o.name, ownerAccountId: o.owner }),
    ),
    get: command('Show one workspace', z.object({ id: id('workspace') }), (db, o) => getWorkspace(db, o.id)),
    list: command("List an account's workspaces", z.object({ account: id('account') }), (db, o) => listWorkspacesOfAccount(db, o.account)),
    members: command('List members with their roles', z.object({ workspace: id('workspace') }), (db, o) => listMembers(db, o.workspace)),
    'add-member': command('Add a member or change their role', z.object({ workspace: id('workspace'), account: id('account'), role: z.string().describe('role name, e.g. editor') }), (db, o) =>
      addMember(db, { workspaceId: o.workspace, accountId: o.account, role: o.role }),
    ),
    'remove-member': command('Remove a member', z.object({ workspace: id('workspace'), account: id('account') }), async (db, o) => {
      await removeMember(db, { workspaceId: o.workspace, accountId: o.account });
      return { removed: true };
    }),
  },
  role: {
    permissions: command('List the permission names roles are made of', z.object({}), async () => permissions),
    list: command("List a workspace's roles", z.object({ workspace: id('workspace') }), (db, o) => listRoles(db, o.workspace)),
    create: command('Create a custom role', z.object({ workspace: id('workspace'), name: z.string().describe('role name'), permission: list(permissionSchema, 'permission') }), (db, o) =>
      createRole(db, { workspaceId: o.workspace, name: o.name, permissions: o.permission }),
    ),
    'set-permissions': command(
      "Replace a custom role's permissions",
      z.object({ workspace: id('workspace'), name: z.string().describe('role name'), permission: list(permissionSchema, 'permission') }),
      (db, o) => setRolePermissions(db, { workspaceId: o.workspace, name: o.name, permissions: o.permission }),
    ),
  },
  vault: {
    create: command(
      'Create a hosted vault owned by an account or a workspace',
      z
        .object({ name: z.string().min(1).max(200).describe('vault name'), ownerAccount: id('owner account').optional(), ownerWorkspace: id('owner workspace').optional() })
        .refine((o) => Boolean(o.ownerAccount) !== Boolean(o.ownerWorkspace), 'Give exactly one of --owner-account or --owner-workspace.'),
      (db, o) => (o.ownerAccount ? createVault(db, { name: o.name, ownerAccountId: o.ownerAccount }) : createVault(db, { name: o.name, ownerWorkspaceId: o.ownerWorkspace! })),
    ),
    get: command('Show one vault', z.object({ id: id('vault') }), (db, o) => getVault(db, o.id)),
    list: command('List the vaults an account can reach', z.object({ account: id('account') }), (db, o) => listVaultsOfAccount(db, o.account)),
    import: command(
      'Import a folder of Markdown notes (an Obsidian-style vault) through the knowledge core, in batches',
      z.object({
        folder: z.string().min(1).describe('the folder to import'),
        mapping: id('mapping'),
        account: z.uuid().describe('id (UUID) of the acting account: it must be able to write the vault; provenance events name it'),
        existing: z.enum(['refuse', 'skip', 'replace']).optional().describe('a stored note with other content: refuse the import (default), skip the file, or replace the note'),
        skipInvalid: flag('import the valid notes and list the invalid files, instead of refusing the whole import'),
        dryRun: flag('check and plan only; write nothing'),
        batchSize: z.coerce.number().int().min(1).max(importLimits.maxBatchNotes).optional().describe(`notes per transaction (default ${DEFAULT_IMPORT_BATCH})`),
      }),
      async (db, o) => {
        const progress = progressReporter('vault import');
        try {
          return await importVault(
            db,
            { folder: o.folder, mappingId: o.mapping, accountId: o.account, existing: o.existing ?? 'refuse', skipInvalid: o.skipInvalid ?? false, dryRun: o.dryRun ?? false, batchSize: o.batchSize ?? DEFAULT_IMPORT_BATCH },
            progress.update,
          );
        } finally {
          progress.end();
        }
      },
      { positional: ['folder'] },
    ),
    export: command(
      "Export a vault's notes as Markdown files with the exact bytes stored, into a new or empty folder",
      z.object({
        folder: z.string().min(1).describe('the folder to write (created if missing; must be empty)'),
        mapping: id('mapping'),
        account: z.uuid().describe('id (UUID) of the acting account: it must be able to read the vault'),
      }),
      async (db, o) => {
        const progress = progressReporter('vault export', { unit: { write: 'files' } });
        try {
          return await exportVault(db, { folder: o.folder, mappingId: o.mapping, accountId: o.account }, progress.update);
        } finally {
          progress.end();
        }
      },
      { positional: ['folder'] },
    ),
  },
  mapping: {
    create: command('Create an explicit hosted mapping (the mappingId gateways use)', z.object({ vault: id('vault'), label: z.string().max(200).optional().describe('label') }), (db, o) =>
      createMapping(db, { vaultId: o.vault, label: o.label ?? '' }),
    ),
    list: command("List a vault's mappings", z.object({ vault: id('vault') }), (db, o) => listMappings(db, o.vault)),
    revoke: command('Revoke a mapping (the vault and its notes stay)', z.object({ id: id('mapping') }), (db, o) => revokeMapping(db, o.id)),
  },
  org: {
    create: command('Create a product organization', z.object({ name: z.string().min(1).max(200).describe('organization name') }), (db, o) => createOrganization(db, { name: o.name })),
    get: command('Show an organization with its settings', z.object({ id: id('organization') }), (db, o) => getOrganization(db, o.id)),
    'set-status': command('Activate or suspend', z.object({ id: id('organization'), status: z.enum(['active', 'suspended']).describe('active or suspended') }), (db, o) =>
      setOrganizationStatus(db, o.id, o.status),
    ),
    'set-runtime': command(
      'Set fields of settings.productRuntime (others unchanged)',
      z.object({
        id: id('organization'),
        apiOperationsPerMonth: count('monthly API operation allowance'),
        intelligenceBudgetMicrodollarsMonthly: count('monthly intelligence budget in microdollars (1,000,000 = US$1); missing or 0 fails closed'),
        maxConcurrentIntelligence: count('concurrent intelligence executions'),
        mediaStorageBytes: count('private media storage ceiling in bytes (default 524288000)'),
      }),
      (db, { id: orgId, ...settings }) =>
        setProductRuntimeSettings(db, orgId, Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined))),
    ),
    'assign-workspace': command('Assign a workspace to the organization', z.object({ id: id('organization'), workspace: id('workspace') }), async (db, o) => {
      await assignWorkspace(db, { organizationId: o.id, workspaceId: o.workspace });
      return { organizationId: o.id, workspaceId: o.workspace, assigned: true };
    }),
    'unassign-workspace': command('Withdraw a workspace assignment', z.object({ id: id('organization'), workspace: id('workspace') }), async (db, o) => {
      await unassignWorkspace(db, { organizationId: o.id, workspaceId: o.workspace });
      return { organizationId: o.id, workspaceId: o.workspace, assigned: false };
    }),
  },
  product: {
    create: command(
      'Create a product definition',
      z.object({
        slug: z.string().describe('stable slug, e.g. lesson-studio'),
        name: z.string().describe('product name'),
        redirectUri: z.array(z.string()).optional().describe('registered HTTPS return origin (https://host) or exact redirect URI (repeatable)'),
      }),
      (db, o) => createProductDefinition(db, { slug: o.slug, name: o.name, redirectUris: o.redirectUri ?? [] }),
    ),
    'set-return-targets': command(
      'Replace the HTTPS return origins / exact redirect URIs registered on a product definition',
      z.object({ id: id('product definition'), redirectUri: z.array(z.string()).describe('https origin or exact redirect URI (repeatable; none clears)').optional() }),
      (db, o) => setProductReturnTargets(db, o.id, o.redirectUri ?? []),
    ),
    list: command('List product definitions', z.object({}), (db) => listProductDefinitions(db)),
    'set-status': command('Activate or retire', z.object({ id: id('product definition'), status: z.enum(['active', 'retired']).describe('active or retired') }), (db, o) =>
      setProductDefinitionStatus(db, o.id, o.status),
    ),
  },
  installation: {
    create: command(
      'Install a product for an organization in one of its workspaces',
      z.object({ org: id('organization'), product: id('product definition'), workspace: id('workspace') }),
      (db, o) => createInstallation(db, { organizationId: o.org, productDefinitionId: o.product, workspaceId: o.workspace }),
    ),
    list: command(
      'List installations of an organization or a workspace',
      z.object({ org: id('organization').optional(), workspace: id('workspace').optional() }),
      async (db, o) => {
        if (!o.org && !o.workspace) throw new UsageError('Give --org or --workspace.');
        return listInstallations(db, { organizationId: o.org, workspaceId: o.workspace });
      },
    ),
    'set-status': command('Activate, suspend or uninstall', z.object({ id: id('installation'), status: z.enum(['active', 'suspended', 'uninstalled']).describe('new status') }), (db, o) =>
      setInstallationStatus(db, o.id, o.status),
    ),
    'set-sublimit': command(
      'Set configuration.productRuntime.intelligenceBudgetMicrodollarsMonthly (may only lower the org budget)',
      z.object({ id: id('installation'), intelligenceBudgetMicrodollarsMonthly: z.union([z.literal('none'), z.coerce.number().int().min(0)]).describe('microdollars, or none to clear') }),
      (db, o) => setInstallationIntelligenceSublimit(db, o.id, o.intelligenceBudgetMicrodollarsMonthly === 'none' ? null : o.intelligenceBudgetMicrodollarsMonthly),
    ),
  },
  principal: {
    create: command('Create a service principal for an installation', z.object({ installation: id('installation'), name: z.string().min(1).max(200).describe('principal name') }), (db, o) =>
      createServicePrincipal(db, { installationId: o.installation, name: o.name }),
    ),
    list: command("List an installation's service principals", z.object({ installation: id('installation') }), (db, o) => listServicePrincipals(db, o.installation)),
    'set-status': command('Enable or disable', z.object({ id: id('service principal'), status: z.enum(['active', 'disabled']).describe('active or disabled') }), (db, o) =>
      setServicePrincipalStatus(db, o.id, o.status),
    ),
  },
  credential: {
    create: command(
      'Issue a service credential with scopes (shown once)',
      z.object({ principal: id('service principal'), scope: list(scopeSchema, `scope: ${scopes.join(', ')}`), expiresAt: timestamp }),
      (db, o) => issueServiceCredential(db, { servicePrincipalId: o.principal, scopes: o.scope, expiresAt: o.expiresAt ?? null }),
    ),
    list: command("List a principal's credentials (prefix, scopes, last use; never the secret)", z.object({ principal: id('service principal') }), (db, o) =>
      listServiceCredentials(db, o.principal),
    ),
    revoke: command('Revoke a service credential', z.object({ id: id('credential') }), (db, o) => revokeServiceCredential(db, o.id)),
  },
  grant: {
    create: command(
      'Grant an installation access to one logical vault of its workspace',
      z.object({ installation: id('installation'), vault: id('vault'), access: z.enum(['read', 'write']).describe('read or write') }),
      (db, o) => grantVault(db, { installationId: o.installation, vaultId: o.vault, access: o.access }),
    ),
    list: command("List an installation's vault grants", z.object({ installation: id('installation'), all: flag('include revoked grants') }), (db, o) =>
      listVaultGrants(db, o.installation, { includeRevoked: o.all ?? false }),
    ),
    revoke: command('Revoke a vault grant (content stays)', z.object({ id: id('grant') }), (db, o) => revokeVaultGrant(db, o.id)),
  },
  chain: {
    check: command(
      'Check the whole Product Runtime chain for a credential; names the first failing link',
      z.object({
        scope: scopeSchema.optional().describe('scope the operation needs (none: the operations that need none)'),
        vault: id('vault').optional(),
        access: z.enum(['read', 'write']).optional().describe('vault access needed (default read)'),
      }),
      async (db, o) => {
        // The secret comes from the environment, never argv, so it stays out of shell history.
        const credential = process.env['HNP_SERVICE_CREDENTIAL'];
        if (!credential) throw new UsageError('Set HNP_SERVICE_CREDENTIAL to the credential secret.');
        return checkProductRuntimeChain(db, { credential, scope: o.scope ?? null, ...(o.vault ? { vault: { vaultId: o.vault, access: o.access ?? 'read' } } : {}) });
      },
    ),
  },
};
