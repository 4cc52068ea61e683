// The person's side of binding hosted vaults to product installations: a member with
// workspace.manage sees the installations of the workspace with their grants and open requests,
// grants a vault (answering a product's bindHostedVault request or on their own), declines a
// request, and revokes a grant. Revoking cuts the product's access and never touches the notes.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import {
  bindingSchema,
  declineBinding,
  grantVaultAsPerson,
  installationGrantsSchema,
  listWorkspaceInstallations,
  revokeGrantAsPerson,
} from '../../../domain/product-runtime/vault-bindings.ts';
import { principalOf } from '../../auth.ts';

const tags = ['workspaces'];
const security = [{ bearerAuth: [] }];
const workspaceId = z.uuid().describe('The workspace (GET /api/dev/workspaces lists yours).');
const workspaceParams = z.strictObject({ workspaceId });

const grantSchema = z
  .object({
    grantId: z.uuid(),
    installationId: z.uuid(),
    vaultId: z.uuid(),
    access: z.enum(['read', 'write']),
    grantedAt: z.string(),
    grantedByAccountId: z.uuid().nullable(),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'VaultGrant' });

export const productInstallationRoutes: FastifyPluginAsyncZod<{ db: DatabasePool }> = async (app, { db }) => {
  app.get(
    '/workspaces/:workspaceId/product-installations',
    {
      schema: {
        tags,
        security,
        operationId: 'listProductInstallations',
        summary: 'Product installations of a workspace, with their vault grants and open binding requests',
        description: 'Needs workspace.manage. A binding request (a product\'s bindHostedVault) grants nothing until a member grants it here.',
        params: workspaceParams,
        response: { 200: z.object({ installations: z.array(installationGrantsSchema.meta({ id: 'ProductInstallationGrants' })) }) },
        problems: ['workspace_not_found', 'permission_denied'],
      },
    },
    async (request) => ({ installations: await listWorkspaceInstallations(db, request.params.workspaceId, principalOf(request).account.id) }),
  );

  app.post(
    '/workspaces/:workspaceId/vault-grants',
    {
      schema: {
        tags,
        security,
        operationId: 'grantVaultToInstallation',
        summary: 'Grant a product installation read or write access to a vault of the workspace',
        description:
          'Needs workspace.manage. The vault must be a hosted vault of this workspace and the installation one of its installations. Granting what is already ' +
          'granted answers the live grant (200); another access replaces it (201). Answers the open binding request it satisfies (or the one named by bindingId).',
        params: workspaceParams,
        body: z.strictObject({ installationId: z.uuid(), vaultId: z.uuid(), access: z.enum(['read', 'write']), bindingId: z.uuid().optional() }),
        response: { 200: grantSchema, 201: grantSchema },
        problems: ['workspace_not_found', 'permission_denied', 'installation_not_found', 'vault_not_found', 'binding_request_not_found'],
      },
    },
    async (request, reply) => {
      const { grant, created } = await grantVaultAsPerson(db, { ...request.body, workspaceId: request.params.workspaceId, accountId: principalOf(request).account.id });
      return reply.code(created ? 201 : 200).send(grant);
    },
  );

  app.delete(
    '/workspaces/:workspaceId/vault-grants/:grantId',
    {
      schema: {
        tags,
        security,
        operationId: 'revokeVaultGrant',
        summary: 'Revoke a vault grant: the product loses access, the notes stay',
        description: 'Needs workspace.manage. Revoking a revoked grant answers it again.',
        params: z.strictObject({ workspaceId, grantId: z.uuid().describe('The grant (listed by product-installations).') }),
        response: { 200: grantSchema },
        problems: ['workspace_not_found', 'permission_denied', 'vault_grant_not_found'],
      },
    },
    async (request) => revokeGrantAsPerson(db, { ...request.params, accountId: principalOf(request).account.id }),
  );

  app.post(
    '/workspaces/:workspaceId/vault-binding-requests/:bindingId/decline',
    {
      schema: {
        tags,
        security,
        operationId: 'declineVaultBinding',
        summary: 'Decline a product\'s vault binding request',
        description: 'Needs workspace.manage. Declining a declined request answers it again; a granted one is 409 (revoke the grant instead).',
        params: z.strictObject({ workspaceId, bindingId: z.uuid().describe("The product's binding request (listed by product-installations).") }),
        response: { 200: bindingSchema.meta({ id: 'VaultBindingRequest' }) },
        problems: ['workspace_not_found', 'permission_denied', 'binding_request_not_found', 'conflict'],
      },
    },
    async (request) => declineBinding(db, { ...request.params, accountId: principalOf(request).account.id }),
  );
};
