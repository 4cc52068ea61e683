// A complete Product Runtime chain built through the same domain functions System Operations uses,
// and a small client for /api/product/v1 over app.inject.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { DatabasePool } from '../../db/pool.ts';
import { addMember, createWorkspace } from '../../domain/identity/workspaces.ts';
import { createMapping, createVault } from '../../domain/identity/vaults.ts';
import {
  assignWorkspace,
  createInstallation,
  createOrganization,
  createProductDefinition,
  createServicePrincipal,
  grantVault,
  issueServiceCredential,
  scopes,
} from '../../domain/product-runtime/entities.ts';
import type { Scope } from '../../domain/product-runtime/entities.ts';
import { accountWithToken } from './fixtures.ts';
import type { Json } from './dev-client.ts';

export type ChainOptions = {
  /** Scopes of the credential; every scope by default. */
  scopes?: readonly Scope[];
  /** The grant on the chain's vault; write by default, null for none. */
  access?: 'read' | 'write' | null;
  /** Another installation of an existing organization (and its workspace) instead of a new one. */
  organization?: { id: string; workspaceId: string };
};

/** Organization → workspace (owned by `owner`, a team account) → vault (+ the owner's mapping) → product → installation → principal → credential → grant. */
export async function buildRuntimeChain(db: DatabasePool, options: ChainOptions = {}) {
  const owner = await accountWithToken(db, 'team');
  let workspaceId = options.organization?.workspaceId;
  if (!workspaceId) workspaceId = (await createWorkspace(db, { name: 'District curriculum', ownerAccountId: owner.account.id })).id;
  else await addMember(db, { workspaceId, accountId: owner.account.id, role: 'admin' });
  const vault = await createVault(db, { name: `Curriculum ${randomUUID().slice(0, 8)}`, ownerWorkspaceId: workspaceId });
  const mapping = await createMapping(db, { vaultId: vault.id, createdByAccountId: owner.account.id });
  const organizationId = options.organization?.id ?? (await createOrganization(db, { name: 'District 9' })).id;
  if (!options.organization) await assignWorkspace(db, { organizationId, workspaceId });
  const product = await createProductDefinition(db, { slug: `studio-${randomUUID().slice(0, 8)}`, name: 'Lesson Studio' });
  const installation = await createInstallation(db, { organizationId, productDefinitionId: product.id, workspaceId });
  const principal = await createServicePrincipal(db, { installationId: installation.id, name: 'studio-backend' });
  const credential = await issueServiceCredential(db, { servicePrincipalId: principal.id, scopes: [...(options.scopes ?? scopes)] });
  const access = options.access === undefined ? 'write' : options.access;
  const grant = access ? await grantVault(db, { installationId: installation.id, vaultId: vault.id, access }) : null;
  return {
    owner,
    workspaceId,
    vaultId: vault.id,
    mappingId: mapping.mappingId,
    organizationId,
    productId: product.id,
    installationId: installation.id,
    principalId: principal.id,
    credentialId: credential.record.id,
    secret: credential.secret,
    grantId: grant?.id ?? null,
  };
}
export type RuntimeChain = Awaited<ReturnType<typeof buildRuntimeChain>>;

export type RuntimeResponse = { statusCode: number; headers: Record<string, unknown>; data: Json; body: string };

/** Requests to /api/product/v1 with the credential and X-Service-Runtime-Version: 1 (override either in `headers`). */
export function runtimeClient(app: FastifyInstance, secret: string) {
  const request = async (method: 'GET' | 'POST' | 'DELETE', path: string, options: { body?: unknown; headers?: Record<string, string | undefined> } = {}): Promise<RuntimeResponse> => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries({ authorization: `Bearer ${secret}`, 'x-service-runtime-version': '1', ...options.headers })) {
      if (value !== undefined) headers[name] = value;
    }
    const res = await app.inject({ method, url: `/api/product/v1${path}`, headers, ...(options.body !== undefined ? { payload: options.body as object } : {}) });
    let data: Json = {};
    try {
      data = res.body ? (JSON.parse(res.body) as Json) : {};
    } catch {
      data = {};
    }
    return { statusCode: res.statusCode, headers: res.headers, data, body: res.body };
  };
  return {
    request,
    context: () => request('GET', '/context'),
    capabilities: () => request('GET', '/capabilities'),
    workspace: () => request('GET', '/workspace'),
    listNotes: (vaultId: string, query = '') => request('GET', `/vaults/${vaultId}/notes${query}`),
    readNote: (vaultId: string, path: string) => request('GET', `/vaults/${vaultId}/note?path=${encodeURIComponent(path)}`),
    publish: (vaultId: string, body: Json, key?: string) => request('POST', `/vaults/${vaultId}/notes`, { body, headers: key ? { 'idempotency-key': key } : {} }),
    bind: (body: Json) => request('POST', '/vault-bindings', { body }),
    bindings: () => request('GET', '/vault-bindings'),
  };
}
export type RuntimeClient = ReturnType<typeof runtimeClient>;
