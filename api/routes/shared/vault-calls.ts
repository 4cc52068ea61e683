// What the REST routes and the MCP tools share around a call into the knowledge core: who calls,
// the vault a mapping names, the idempotency claim and provenance of an applied change, and the
// events page. Each interface keeps only how it reads its input and where its pointers point
// (/body/…, /querystring/…, /arguments/…).
import type { FastifyRequest } from 'fastify';
import type { DatabasePool } from 'slonik';
import { fingerprintOf, requireIdempotencyKey } from '../../../domain/idempotency.ts';
import type { IdempotencyScope } from '../../../domain/idempotency.ts';
import { resolveMappingForAccount } from '../../../domain/identity/vaults.ts';
import type { VaultAccess } from '../../../domain/identity/vaults.ts';
import type { Target } from '../../../domain/notes/knowledge.ts';
import { parseRevision } from '../../../domain/notes/markdown.ts';
import { listEventsPage } from '../../../domain/notes/store.ts';
import type { EventsPage, Provenance, Source } from '../../../domain/notes/store.ts';
import { principalOf } from '../../auth.ts';

/** Who calls and through which door: what access checks, idempotency records and provenance events name. */
export type Caller = { accountId: string; requestId: string; source: Source };

/** The caller of a REST or automation request (authenticated by the interface's hook). */
export function restCaller(request: FastifyRequest): Caller {
  return { accountId: principalOf(request).account.id, requestId: request.id, source: 'rest' };
}

/** The vault a mapping names, if the caller has `access` to it (mapping_not_found, permission_denied otherwise). */
export async function resolveTarget(db: DatabasePool, caller: Caller, mappingId: string, access: VaultAccess): Promise<Target> {
  const resolved = await resolveMappingForAccount(db, mappingId, caller.accountId, access);
  return { vaultId: resolved.vaultId, mappingId: resolved.mappingId };
}

/**
 * The idempotency claim of an operation (`route`, e.g. `POST /api/dev/notes` or `mcp:<tool>`) on
 * `scope` (a mapping, a workspace). The key is required: missing is idempotency_key_required,
 * malformed invalid_idempotency_key. The fingerprint covers everything that decides the outcome.
 */
export function idempotencyScope(caller: Caller, route: string, scope: string, rawKey: string | undefined, payload: unknown): IdempotencyScope {
  return { accountId: caller.accountId, route, scope, key: requireIdempotencyKey(rawKey), fingerprint: fingerprintOf(payload) };
}

export function provenanceOf(caller: Caller, idempotencyKey: string | null): Provenance {
  return { actor: { type: 'account', id: caller.accountId }, source: caller.source, requestId: caller.requestId, idempotencyKey };
}

/** What an applied change needs besides its input: its idempotency claim, and provenance naming the same key. */
export function applyContext(caller: Caller, route: string, target: Target, rawKey: string | undefined, payload: unknown): { idempotency: IdempotencyScope; provenance: Provenance } {
  const idempotency = idempotencyScope(caller, route, target.mappingId, rawKey, payload);
  return { idempotency, provenance: provenanceOf(caller, idempotency.key) };
}

/** A transaction's actions with their revisions parsed; a malformed one points at its action (/actions/N/expectedHash). */
export function parseActionRevisions<A extends { expectedHash?: string | undefined }>(actions: readonly A[]): Array<A & { expectedHash: string | undefined }> {
  return actions.map((action, index) => ({
    ...action,
    expectedHash: action.expectedHash === undefined ? undefined : parseRevision(action.expectedHash, `/actions/${index}/expectedHash`),
  }));
}

/** One page of a vault's provenance events, oldest first; `sincePointer` is where the interface takes the cursor from. */
export async function eventsPage(
  db: DatabasePool,
  caller: Caller,
  mappingId: string,
  page: { since: string | undefined; limit: number; sincePointer: string },
): Promise<{ mappingId: string } & EventsPage> {
  const target = await resolveTarget(db, caller, mappingId, 'read');
  return { mappingId: target.mappingId, ...(await listEventsPage(db, target.vaultId, { cursor: page.since, limit: page.limit, cursorPointer: page.sincePointer })) };
}
