// System Operations for context scopes: people define scopes and grant installations sight of them;
// a service principal never can (domain/context-scopes/scopes.ts).
import { z } from 'zod';
import { audienceKinds, createScope, grantScope, listWorkspaceScopes, revokeScopeGrant, scopeKinds, scopePolicyInputSchema, setScopePolicy } from '../../domain/context-scopes/scopes.ts';
import { command } from './commands.ts';
import type { Command } from './commands.ts';
import { UsageError } from './errors.ts';

const id = (what: string) => z.uuid().describe(`${what} id (UUID)`);
const key = z.string().min(1).max(100).describe('stable scope id (a-z, 0-9, ".", "_", "-"), e.g. course-algebra-1');

/** --policy takes JSON (e.g. '{"memory":{"candidates":"forbidden"}}'), checked against the policy schema. */
function parsePolicy(raw: string | undefined) {
  if (raw === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new UsageError('--policy must be JSON, e.g. \'{"memory":{"candidates":"forbidden"}}\'.');
  }
  const parsed = scopePolicyInputSchema.safeParse(json);
  if (!parsed.success) throw new UsageError(`--policy: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

const policyHelp = 'own policy as JSON: {"memory":{"candidates":"allowed|forbidden","maxEntries":N},"intelligence":{"use":"allowed|forbidden"},"retentionDays":N}';

export const contextScopeCommands: Record<string, Record<string, Command>> = {
  scope: {
    create: command(
      'Define a context scope in a workspace (its policy inherits from --parent)',
      z.object({
        workspace: id('workspace'),
        key,
        name: z.string().min(1).max(200).describe('display name'),
        kind: z.enum(scopeKinds).describe(`what it stands for: ${scopeKinds.join(', ')}`),
        parent: key.optional().describe('parent scope id in the same workspace'),
        audienceKind: z.enum(audienceKinds).describe(`who it is for: ${audienceKinds.join(', ')}`),
        audience: z.string().min(1).max(500).describe('who, in words (shown to products)'),
        vault: id('hosted vault of the workspace').optional(),
        policy: z.string().optional().describe(policyHelp),
      }),
      (db, o) =>
        createScope(db, {
          workspaceId: o.workspace,
          scopeKey: o.key,
          name: o.name,
          kind: o.kind,
          parentKey: o.parent,
          audienceKind: o.audienceKind,
          audienceDescription: o.audience,
          vaultId: o.vault,
          policy: parsePolicy(o.policy),
        }),
    ),
    list: command("List a workspace's scopes", z.object({ workspace: id('workspace') }), (db, o) => listWorkspaceScopes(db, o.workspace)),
    'set-policy': command(
      "Replace a scope's own policy (inherited settings stay inherited)",
      z.object({ workspace: id('workspace'), key, policy: z.string().describe(policyHelp) }),
      (db, o) => setScopePolicy(db, { workspaceId: o.workspace, scopeKey: o.key, policy: parsePolicy(o.policy) ?? {} }),
    ),
    grant: command(
      'Let an installation of the workspace see a scope',
      z.object({ workspace: id('workspace'), key, installation: id('installation') }),
      (db, o) => grantScope(db, { workspaceId: o.workspace, scopeKey: o.key, installationId: o.installation }),
    ),
    'revoke-grant': command('Withdraw an installation\'s sight of a scope', z.object({ id: id('scope grant') }), (db, o) => revokeScopeGrant(db, o.id)),
  },
};
