// The admission caches (decisions 111 and 112, migrations 0028 and 0029,
// domain/principals/admission-cache.ts): a kept admission answers only while the admission epoch
// stands still, and every change to a row admission reads advances the epoch when it commits. Held
// here, for the hot read's personal access tokens and for the Product Runtime's chains: what the
// cache keeps and counts, that each kind of change ends a kept admission exactly as a fresh admission
// would refuse, expiry, the triggers' coverage read from the catalog (a new column of these tables
// fails it until someone decides), that the hot paths' own writes leave the epoch alone, that a
// change takes effect at its commit and not before, concurrent requests around a revocation, and two
// processes sharing one change.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { issueAccessToken, revokeAccessToken, rotateAccessToken, touchToken, updateAccount } from '../domain/identity/accounts.ts';
import { createMapping, createVault, revokeMapping } from '../domain/identity/vaults.ts';
import { addMember, createRole, createWorkspace, removeMember, setRolePermissions } from '../domain/identity/workspaces.ts';
import { applyTransaction } from '../domain/notes/knowledge.ts';
import { admitInventory } from '../domain/notes/inventory.ts';
import { readNoteAsCaller } from '../domain/notes/read-as-caller.ts';
import { AdmissionCache, admissionCacheLimits } from '../domain/principals/admission-cache.ts';
import type { TokenAdmission } from '../domain/principals/admission-cache.ts';
import { checkProductRuntimeChain } from '../domain/product-runtime/chain.ts';
import type { ChainAdmission, ChainLink } from '../domain/product-runtime/chain.ts';
import { noteReadFusion } from '../domain/product-runtime/runtime-notes.ts';
import {
  revokeServiceCredential,
  revokeVaultGrant,
  setInstallationStatus,
  setOrganizationStatus,
  setProductDefinitionStatus,
  setProductRuntimeSettings,
  setServicePrincipalStatus,
  unassignWorkspace,
  issueServiceCredential,
} from '../domain/product-runtime/entities.ts';
import { createMetricsRegistry } from '../platform/metrics.ts';
import { hashSecret } from '../domain/secrets.ts';
import { createDatabasePool } from '../db/pool.ts';
import { useAllowanceLeases, useTestDatabase } from './support/harness.ts';
import { buildTestApp } from './support/app.ts';
import { accountWithToken, bearer, personalMapping } from './support/fixtures.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';

const db = useTestDatabase();
const allowance = useAllowanceLeases(db);

const epoch = () => db.pool.oneFirst(sql.type(z.object({ epoch: z.uuid() }))`SELECT epoch FROM admission_epoch`);

/** Writes `content` at `path` through the knowledge core, as the account. */
async function write(accountId: string, target: { vaultId: string; mappingId: string }, path: string, content: string) {
  const provenance = { actor: { type: 'account' as const, id: accountId }, source: 'ops' as const, requestId: null, idempotencyKey: null };
  const key = randomUUID();
  await applyTransaction(db.pool, target, [{ type: 'write-note', path, content }], provenance, { accountId, route: 'test:admission-cache', scope: target.mappingId, key, fingerprint: key });
}

/** A caller with a personal vault holding one note. */
async function personalReader() {
  const caller = await accountWithToken(db.pool, 'team');
  const target = await personalMapping(db.pool, caller.account.id);
  await write(caller.account.id, target, 'Notes/One.md', '# One\n');
  return { ...caller, ...target };
}

/** A workspace vault the caller reads as a member with a custom `reader` role (vault.read), the owner holding the workspace. */
async function memberReader() {
  const owner = await accountWithToken(db.pool, 'team');
  const caller = await accountWithToken(db.pool, 'team');
  const workspaceId = (await createWorkspace(db.pool, { name: `Cache ${randomUUID().slice(0, 8)}`, ownerAccountId: owner.account.id })).id;
  await createRole(db.pool, { workspaceId, name: 'reader', permissions: ['vault.read'] });
  await addMember(db.pool, { workspaceId, accountId: caller.account.id, role: 'reader' });
  const vault = await createVault(db.pool, { name: 'Shared', ownerWorkspaceId: workspaceId });
  const { mappingId } = await createMapping(db.pool, { vaultId: vault.id });
  await write(owner.account.id, { vaultId: vault.id, mappingId }, 'Notes/One.md', '# One\n');
  return { ...caller, workspaceId, vaultId: vault.id, mappingId };
}

const tokenCache = () => new AdmissionCache<TokenAdmission>();

/**
 * A kept admission, then `change`: the next request through the cache is refused with `refused`, as
 * one admitted in full (no cache) is, and the entry is gone.
 */
async function expectChangeEnds<C extends AdmissionCache<TokenAdmission> | AdmissionCache<ChainAdmission>>(
  cache: C,
  request: (cache: C | undefined) => Promise<string>,
  change: () => Promise<unknown>,
  refused: string,
) {
  expect(await request(cache)).toBe('admitted');
  await change();
  expect(await request(cache)).toBe(refused);
  expect(await request(undefined)).toBe(refused);
  expect(cache.counts).toEqual({ hit: 0, miss: 1, stale: 1 });
  expect(cache.size).toBe(0);
}

/**
 * One request fills the cache; then 100 are under way when `revoke` commits and 100 start after it:
 * every later one is refused with `refused`, the earlier ones answer as their snapshot saw it, and
 * nothing stays kept.
 */
async function raceRevocation(cache: { size: number }, request: () => Promise<string>, revoke: () => Promise<unknown>, refused: string) {
  expect(await request()).toBe('admitted');
  const before = Array.from({ length: 100 }, () => request());
  await revoke();
  const after = await Promise.all(Array.from({ length: 100 }, () => request()));
  expect(new Set(after)).toEqual(new Set([refused]));
  for (const answer of await Promise.all(before)) expect(['admitted', refused]).toContain(answer);
  expect(cache.size).toBe(0);
}

const read = (cache: AdmissionCache<TokenAdmission> | undefined, reader: { token: string; mappingId: string }, path = 'Notes/One.md') =>
  readNoteAsCaller(db.pool, { rawToken: reader.token, iface: 'rest', leases: allowance.leases, admissions: cache, mappingId: reader.mappingId, path });

/** The refusal code of a read, or 'admitted'. */
const outcome = (attempt: Promise<unknown>) =>
  attempt.then(
    () => 'admitted',
    (error: unknown) => (error as { code?: string }).code ?? String(error),
  );

describe('the hot read’s admission cache', () => {
  it('answers from a kept admission while nothing admission reads changes, charging and reading afresh each time', async () => {
    const cache = tokenCache();
    const reader = await personalReader();
    const first = await read(cache, reader);
    expect(cache.counts).toEqual({ hit: 0, miss: 1, stale: 0 });
    expect(cache.size).toBe(1);
    // A note write advances the vault's event sequence, not the epoch: the kept admission answers, and reads the new note.
    const before = await epoch();
    await write(reader.account.id, reader, 'Notes/Fresh.md', '# Fresh\n');
    expect(await epoch()).toBe(before);
    const second = await read(cache, reader, 'Notes/Fresh.md');
    expect(cache.counts).toEqual({ hit: 1, miss: 1, stale: 0 });
    expect(second.note).toMatchObject({ path: 'Notes/Fresh.md', content: '# Fresh\n' });
    expect(first.note).toMatchObject({ path: 'Notes/One.md', content: '# One\n' });
    expect(second.account).toEqual(first.account);
    expect(second.mapping).toEqual(first.mapping);
    expect(second.usage.monthUsed).toBe(first.usage.monthUsed + 1);
    // A path with no note: the kept admission still answers, with no note.
    expect((await read(cache, reader, 'Notes/Missing.md')).note).toBeNull();
    expect(cache.counts.hit).toBe(2);
  });

  it('serves the inventory’s admission too (the same entry), which reads the vault’s sequence afresh and is refused as a fresh one after a change', async () => {
    const cache = tokenCache();
    const reader = await personalReader();
    const inventory = () => admitInventory(db.pool, { rawToken: reader.token, leases: allowance.leases, admissions: cache, mappingId: reader.mappingId });
    await read(cache, reader);
    const first = await inventory();
    expect(cache.counts).toEqual({ hit: 1, miss: 1, stale: 0 });
    expect(first.mapping).toMatchObject({ mappingId: reader.mappingId, vaultId: reader.vaultId });
    // A note write advances the vault's sequence and leaves the epoch: the kept admission reads the new sequence.
    await write(reader.account.id, reader, 'Notes/Fresh.md', '# Fresh\n');
    const second = await inventory();
    expect(second.vaultSeq).toBe(first.vaultSeq + 1);
    expect(second.usage.monthUsed).toBe(first.usage.monthUsed + 1);
    expect(cache.counts).toEqual({ hit: 2, miss: 1, stale: 0 });
    await revokeMapping(db.pool, reader.mappingId);
    expect(await outcome(inventory())).toBe('mapping_not_found');
    expect(cache.counts).toEqual({ hit: 2, miss: 1, stale: 1 });
  });

  it('keeps nothing of an admission that was refused, nor of an unknown token', async () => {
    const cache = tokenCache();
    const reader = await personalReader();
    const stranger = await accountWithToken(db.pool, 'team');
    expect(await outcome(read(cache, { token: stranger.token, mappingId: reader.mappingId }))).toBe('mapping_not_found');
    expect(await outcome(read(cache, { token: `hnp_pat_${'A'.repeat(43)}`, mappingId: reader.mappingId }))).toBe('invalid_token');
    expect(cache.size).toBe(0);
    // Another account's token never finds this caller's entry: the key is the token's hash and the mapping.
    await read(cache, reader);
    expect(await outcome(read(cache, { token: stranger.token, mappingId: reader.mappingId }))).toBe('mapping_not_found');
    expect(cache.counts).toEqual({ hit: 0, miss: 4, stale: 0 });
  });

  const changes: [string, () => Promise<{ token: string; mappingId: string; change: () => Promise<unknown> }>, string][] = [
    ['the token revoked', async () => { const r = await personalReader(); return { ...r, change: () => revokeAccessToken(db.pool, r.tokenId) }; }, 'invalid_token'],
    ['the token rotated', async () => { const r = await personalReader(); return { ...r, change: () => rotateAccessToken(db.pool, r.tokenId) }; }, 'invalid_token'],
    ['the account suspended', async () => { const r = await personalReader(); return { ...r, change: () => updateAccount(db.pool, r.account.id, { status: 'suspended' }) }; }, 'account_inactive'],
    ['the plan changed to one without REST', async () => { const r = await personalReader(); return { ...r, change: () => updateAccount(db.pool, r.account.id, { plan: 'premium' }) }; }, 'entitlement_required'],
    ['the mapping revoked', async () => { const r = await personalReader(); return { ...r, change: () => revokeMapping(db.pool, r.mappingId) }; }, 'mapping_not_found'],
    [
      'the vault given to another account',
      async () => {
        const r = await personalReader();
        const other = await accountWithToken(db.pool, 'team');
        return { ...r, change: () => db.pool.query(sql.type(z.object({}))`UPDATE vaults SET owner_account_id = ${other.account.id} WHERE id = ${r.vaultId}`) };
      },
      'mapping_not_found',
    ],
    ['the member removed from the workspace', async () => { const r = await memberReader(); return { ...r, change: () => removeMember(db.pool, { workspaceId: r.workspaceId, accountId: r.account.id }) }; }, 'mapping_not_found'],
    ['the member’s role losing vault.read', async () => { const r = await memberReader(); return { ...r, change: () => setRolePermissions(db.pool, { workspaceId: r.workspaceId, name: 'reader', permissions: [] }) }; }, 'permission_denied'],
  ];

  it.each(changes)('a kept admission ends with %s, refused as a fresh admission refuses', async (_label, arrange, code) => {
    const cache = tokenCache();
    const reader = await arrange();
    await expectChangeEnds(cache, (kept) => outcome(read(kept, reader)), reader.change, code);
  });

  it('a kept admission ends when its token expires, though nothing changed', async () => {
    const cache = tokenCache();
    const reader = await personalReader();
    const expiring = await issueAccessToken(db.pool, { accountId: reader.account.id, name: 'expiring', expiresAt: new Date(Date.now() + 1_000).toISOString() });
    const caller = { token: expiring.token, mappingId: reader.mappingId };
    expect(await outcome(read(cache, caller))).toBe('admitted');
    const at = await epoch();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await epoch()).toBe(at);
    expect(await outcome(read(cache, caller))).toBe('invalid_token');
    expect(cache.counts).toEqual({ hit: 0, miss: 1, stale: 1 });
  });
});

describe('kept admissions and the token’s last use', () => {
  it('touch the token at most once a minute: the entry remembers the touch', async () => {
    const cache = tokenCache();
    const reader = await personalReader();
    const lastUse = () => db.pool.oneFirst(sql.type(z.object({ at: z.string().nullable() }))`SELECT last_used_at::text AS at FROM access_tokens WHERE id = ${reader.tokenId}`);
    await read(cache, reader);
    expect(await lastUse()).not.toBeNull();
    // Another process touched it two minutes ago, say; this one's entry remembers its own touch of just now.
    const twoMinutesAgo = async () => {
      await db.pool.query(sql.type(z.object({}))`UPDATE access_tokens SET last_used_at = now() - interval '2 minutes' WHERE id = ${reader.tokenId}`);
      return lastUse();
    };
    const aged = await twoMinutesAgo();
    await read(cache, reader);
    expect(await lastUse()).toBe(aged);
    // A minute later (the entry's memory aged by hand): the next kept read touches ...
    const entry = cache.get(AdmissionCache.key(hashSecret(reader.token), reader.mappingId))!;
    entry.row = { ...entry.row, tokenLastUsedAt: new Date(Date.now() - 61_000).toISOString() };
    await read(cache, reader);
    expect(await lastUse()).not.toBe(aged);
    // ... and remembers that touch: the read after it does not touch again.
    const agedAgain = await twoMinutesAgo();
    await read(cache, reader);
    expect(await lastUse()).toBe(agedAgain);
    expect(cache.counts.hit).toBe(3);
  });
});

describe('the admission cache’s bound', () => {
  it('keeps at most its limit, the least recently used going first', () => {
    const cache = new AdmissionCache<TokenAdmission>(2);
    const entry = (epoch: string) => ({ epoch, row: {} as TokenAdmission['row'], mapping: {} as TokenAdmission['mapping'] });
    cache.set('a', entry('1'));
    cache.set('b', entry('2'));
    expect(cache.get('a')?.epoch).toBe('1'); // used: now the most recent
    cache.set('c', entry('3'));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('a')?.epoch, cache.get('c')?.epoch]).toEqual(['1', '3']);
    expect(admissionCacheLimits.maxEntries).toBe(10_000);
  });
});

describe('the admission epoch', () => {
  // What admission reads (livePrincipalQuery, mappingAccessQuery, the runtime's chain statement) and
  // what it may leave out: the columns hot paths write that admission does not read.
  const tables = [
    'access_tokens',
    'accounts',
    'vault_mappings',
    'vaults',
    'workspace_members',
    'workspace_roles',
    'service_credentials',
    'service_principals',
    'product_installations',
    'product_definitions',
    'organizations',
    'organization_workspaces',
    'logical_vault_grants',
  ] as const;
  const leftOut: Record<string, string[]> = { access_tokens: ['last_used_at'], vaults: ['last_event_seq'], service_credentials: ['last_used_at'] };

  it('advances at the commit of a change to every column admission reads, on insert, update, delete and truncate', async () => {
    const triggers = await db.pool.any(sql.type(z.object({ table: z.string(), name: z.string(), deferred: z.boolean(), events: z.array(z.string()), columns: z.array(z.string()).nullable() }))`
      SELECT c.relname AS "table", t.tgname AS name, t.tginitdeferred AS deferred,
             array_remove(ARRAY[CASE WHEN t.tgtype & 4 <> 0 THEN 'insert' END, CASE WHEN t.tgtype & 8 <> 0 THEN 'delete' END,
                                CASE WHEN t.tgtype & 16 <> 0 THEN 'update' END, CASE WHEN t.tgtype & 32 <> 0 THEN 'truncate' END], NULL) AS events,
             (SELECT array_agg(a.attname::text ORDER BY a.attname) FROM unnest(t.tgattr::int2[]) k JOIN pg_attribute a ON a.attrelid = t.tgrelid AND a.attnum = k) AS columns
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
       WHERE p.proname = 'advance_admission_epoch' AND NOT t.tgisinternal
       ORDER BY 1, 2`);
    for (const table of tables) {
      const columns = await db.pool.anyFirst(sql.type(z.object({ name: z.string() }))`
        SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ${table} ORDER BY column_name`);
      const onChange = triggers.filter((t) => t.table === table && t.events.includes('update'));
      expect(onChange, table).toHaveLength(1);
      expect(onChange[0]!.events.sort(), table).toEqual(['delete', 'insert', 'update']);
      expect(onChange[0]!.deferred, table).toBe(true);
      // Every column but those left out: a column added to the table is not covered until it is listed here or there.
      const covered = onChange[0]!.columns ?? columns;
      expect([...covered].sort(), table).toEqual(columns.filter((c) => !(leftOut[table] ?? []).includes(c)));
      expect(triggers.filter((t) => t.table === table && t.events.includes('truncate')), table).toHaveLength(1);
    }
  });

  it('stands still for a token’s or a service credential’s touch and a note write, and advances only when a change commits', async () => {
    const reader = await personalReader();
    const runtime = await buildRuntimeChain(db.pool);
    const at = await epoch();
    await touchToken(db.pool, reader.tokenId, null);
    // The chain's statement touches a credential unused for a minute.
    expect((await checkProductRuntimeChain(db.pool, { credential: runtime.secret, scope: null })).ok).toBe(true);
    expect(await credentialLastUse(runtime)).not.toBeNull();
    await write(reader.account.id, reader, 'Notes/Two.md', '# Two\n');
    expect(await epoch()).toBe(at);
    // The revocation on a connection of its own, held open: until it commits, another connection sees the old epoch.
    const other = await createDatabasePool(db.url, { maxPoolSize: 1 });
    try {
      const updated = Promise.withResolvers<void>();
      const commit = Promise.withResolvers<void>();
      const transaction = other.transaction(async (tx) => {
        await tx.query(sql.type(z.object({}))`UPDATE access_tokens SET revoked_at = now() WHERE id = ${reader.tokenId}`);
        updated.resolve();
        await commit.promise;
      });
      await updated.promise;
      expect(await epoch()).toBe(at);
      expect(await outcome(read(undefined, reader))).toBe('admitted');
      commit.resolve();
      await transaction;
      expect(await epoch()).not.toBe(at);
      expect(await outcome(read(undefined, reader))).toBe('invalid_token');
    } finally {
      await other.end();
    }
  });

  it('two hundred concurrent reads around a revocation: none that starts after its commit is admitted', async () => {
    const cache = tokenCache();
    const reader = await personalReader();
    await raceRevocation(cache, () => outcome(read(cache, reader)), () => revokeAccessToken(db.pool, reader.tokenId), 'invalid_token');
  });

  it('a revocation ends the admissions every API process keeps, and the processes count them', async () => {
    const reader = await personalReader();
    const runtime = await runtimeReader();
    const metrics = createMetricsRegistry({ process: 'api' });
    const one = await buildTestApp(db.pool, { metrics });
    const two = await buildTestApp(db.pool);
    try {
      const get = (app: typeof one) => app.inject({ method: 'GET', url: `/api/dev/notes/Notes/One.md?mappingId=${reader.mappingId}`, headers: bearer(reader.token) });
      const runtimeGet = (app: typeof one) => runtimeClient(app, runtime.secret).readNote(runtime.vaultId, 'Notes/One.md');
      for (const app of [one, two, one, two]) {
        expect((await get(app)).statusCode).toBe(200);
        expect((await runtimeGet(app)).statusCode).toBe(200);
      }
      // As the operations CLI revokes a token and a credential: outside both processes.
      await revokeAccessToken(db.pool, reader.tokenId);
      await revokeServiceCredential(db.pool, runtime.credentialId);
      for (const app of [one, two]) {
        const refused = await get(app);
        expect(refused.statusCode).toBe(401);
        expect(refused.json()).toMatchObject({ code: 'invalid_token' });
        const runtimeRefused = await runtimeGet(app);
        expect(runtimeRefused.statusCode).toBe(401);
        expect(runtimeRefused.data).toMatchObject({ code: 'credential_invalid', failedLink: 'credential' });
      }
      const text = await metrics.metrics();
      for (const principal of ['personal_access_token', 'service_principal']) {
        for (const outcome of ['hit', 'miss', 'stale']) {
          expect(text).toMatch(new RegExp(`^hnp_admission_cache_lookups_total\\{principal="${principal}",outcome="${outcome}",process="api"\\} 1$`, 'm'));
        }
        expect(text).toMatch(new RegExp(`^hnp_admission_cache_entries\\{principal="${principal}",process="api"\\} 0$`, 'm'));
      }
    } finally {
      await one.close();
      await two.close();
    }
  });
});

/** A runtime chain with a read grant on its vault, which holds one note the owner wrote. */
async function runtimeReader() {
  const chain = await buildRuntimeChain(db.pool, { access: 'read' });
  await write(chain.owner.account.id, chain, 'Notes/One.md', '# One\n');
  return chain;
}

const chainCache = () => new AdmissionCache<ChainAdmission>();

const credentialLastUse = (chain: RuntimeChain) =>
  db.pool.oneFirst(sql.type(z.object({ at: z.string().nullable() }))`SELECT last_used_at::text AS at FROM service_credentials WHERE id = ${chain.credentialId}`);

/** The runtime's readNote admission (notes.read, a read grant on the chain's vault), the note fused into it. */
const runtimeRead = (cache: AdmissionCache<ChainAdmission> | undefined, chain: RuntimeChain, options: { path?: string; credential?: string } = {}) =>
  checkProductRuntimeChain(db.pool, { credential: options.credential ?? chain.secret, scope: 'notes.read', vault: { vaultId: chain.vaultId, access: 'read' } }, noteReadFusion(options.path ?? 'Notes/One.md'), cache);

/** The link a chain check refused at, or 'admitted'. */
const chainOutcome = async (attempt: Promise<{ ok: true } | { ok: false; link: ChainLink }>) => {
  const result = await attempt;
  return result.ok ? 'admitted' : result.link;
};

describe('the Product Runtime’s kept chains', () => {
  it('answer while nothing the chain reads changes, judging each request’s scope and access and reading the note afresh', async () => {
    const cache = chainCache();
    const chain = await runtimeReader();
    const first = await runtimeRead(cache, chain);
    expect(cache.counts).toEqual({ hit: 0, miss: 1, stale: 0 });
    const before = await epoch();
    await write(chain.owner.account.id, chain, 'Notes/Fresh.md', '# Fresh\n');
    expect(await epoch()).toBe(before);
    const second = await runtimeRead(cache, chain, { path: 'Notes/Fresh.md' });
    expect(cache.counts).toEqual({ hit: 1, miss: 1, stale: 0 });
    if (!first.ok || !second.ok) throw new Error('refused');
    expect(first.fused.note).toMatchObject({ path: 'Notes/One.md', content: '# One\n' });
    expect(second.fused.note).toMatchObject({ path: 'Notes/Fresh.md', content: '# Fresh\n' });
    expect(second.context).toEqual(first.context);
    expect(second.context.vault).toEqual({ vaultId: chain.vaultId, access: 'read', grantId: chain.grantId });
    expect(second.operationsLimit).toBe(first.operationsLimit);
    const missing = await runtimeRead(cache, chain, { path: 'Notes/Missing.md' });
    expect(missing.ok && missing.fused.note).toBeNull();
    // The same kept chain judges another request's needs as a fresh one does: write access on a read grant.
    const write_ = { credential: chain.secret, scope: 'notes.write' as const, vault: { vaultId: chain.vaultId, access: 'write' as const } };
    expect(await checkProductRuntimeChain(db.pool, write_, undefined, cache)).toMatchObject({ ok: false, link: 'vault_grant' });
    expect(await checkProductRuntimeChain(db.pool, write_)).toMatchObject({ ok: false, link: 'vault_grant' });
    expect(cache.counts).toEqual({ hit: 3, miss: 1, stale: 0 });
    // A request naming no vault is kept under its own key.
    for (let i = 0; i < 2; i++) expect((await checkProductRuntimeChain(db.pool, { credential: chain.secret, scope: null }, undefined, cache)).ok).toBe(true);
    expect(cache.counts).toEqual({ hit: 4, miss: 2, stale: 0 });
    expect(cache.size).toBe(2);
  });

  it('keep nothing of a refused chain, nor of an unknown credential', async () => {
    const cache = chainCache();
    const chain = await runtimeReader();
    const stranger = await buildRuntimeChain(db.pool);
    expect(await chainOutcome(runtimeRead(cache, chain, { credential: stranger.secret }))).toBe('vault_grant');
    expect(await chainOutcome(runtimeRead(cache, chain, { credential: `hnp_svc_${'A'.repeat(43)}` }))).toBe('credential');
    expect(cache.size).toBe(0);
    // Another installation's credential never finds this one's entry: the key is the credential's hash and the vault.
    await runtimeRead(cache, chain);
    expect(await chainOutcome(runtimeRead(cache, chain, { credential: stranger.secret }))).toBe('vault_grant');
    expect(cache.counts).toEqual({ hit: 0, miss: 4, stale: 0 });
  });

  const changes: [string, (chain: RuntimeChain) => Promise<unknown>, ChainLink][] = [
    ['the credential revoked', (c) => revokeServiceCredential(db.pool, c.credentialId), 'credential'],
    ['the credential’s scopes narrowed', (c) => db.pool.query(sql.type(z.object({}))`UPDATE service_credentials SET scopes = '{media.read}' WHERE id = ${c.credentialId}`), 'credential_scope'],
    ['the service principal disabled', (c) => setServicePrincipalStatus(db.pool, c.principalId, 'disabled'), 'service_principal'],
    ['the installation suspended', (c) => setInstallationStatus(db.pool, c.installationId, 'suspended'), 'installation'],
    ['the product definition retired', (c) => setProductDefinitionStatus(db.pool, c.productId, 'retired'), 'product_definition'],
    ['the organization suspended', (c) => setOrganizationStatus(db.pool, c.organizationId, 'suspended'), 'organization'],
    ['the workspace unassigned', (c) => unassignWorkspace(db.pool, { organizationId: c.organizationId, workspaceId: c.workspaceId }), 'workspace_assignment'],
    ['the vault grant revoked', (c) => revokeVaultGrant(db.pool, c.grantId!), 'vault_grant'],
    [
      'the vault moved to another workspace',
      async (c) => {
        const elsewhere = await createWorkspace(db.pool, { name: `Elsewhere ${randomUUID().slice(0, 8)}`, ownerAccountId: c.owner.account.id });
        await db.pool.query(sql.type(z.object({}))`UPDATE vaults SET owner_workspace_id = ${elsewhere.id} WHERE id = ${c.vaultId}`);
      },
      'vault_grant',
    ],
  ];

  it.each(changes)('end with %s, refused at the link a fresh chain refuses at', async (_label, change, link) => {
    const cache = chainCache();
    const chain = await runtimeReader();
    await expectChangeEnds(cache, (kept) => chainOutcome(runtimeRead(kept, chain)), () => change(chain), link);
  });

  it('end with a change to the organization’s settings: the new monthly operations limit is read', async () => {
    const cache = chainCache();
    const chain = await runtimeReader();
    expect(await runtimeRead(cache, chain)).toMatchObject({ ok: true, operationsLimit: 100_000 });
    await setProductRuntimeSettings(db.pool, chain.organizationId, { apiOperationsPerMonth: 5 });
    expect(await runtimeRead(cache, chain)).toMatchObject({ ok: true, operationsLimit: 5 });
    expect(cache.counts).toEqual({ hit: 0, miss: 1, stale: 1 });
  });

  it('end when the credential expires, though nothing changed', async () => {
    const cache = chainCache();
    const chain = await runtimeReader();
    const expiring = await issueServiceCredential(db.pool, { servicePrincipalId: chain.principalId, scopes: ['notes.read'], expiresAt: new Date(Date.now() + 1_000).toISOString() });
    expect(await chainOutcome(runtimeRead(cache, chain, { credential: expiring.secret }))).toBe('admitted');
    const at = await epoch();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await epoch()).toBe(at);
    expect(await chainOutcome(runtimeRead(cache, chain, { credential: expiring.secret }))).toBe('credential');
    expect(cache.counts).toEqual({ hit: 0, miss: 1, stale: 1 });
  });

  it('touch the credential at most once a minute: the entry remembers the touch', async () => {
    const cache = chainCache();
    const chain = await runtimeReader();
    await runtimeRead(cache, chain);
    const touched = await credentialLastUse(chain);
    expect(touched).not.toBeNull();
    // Another process touched it two minutes ago, say; this one's entry remembers its own touch of just now.
    const twoMinutesAgo = async () => {
      await db.pool.query(sql.type(z.object({}))`UPDATE service_credentials SET last_used_at = now() - interval '2 minutes' WHERE id = ${chain.credentialId}`);
      return credentialLastUse(chain);
    };
    const aged = await twoMinutesAgo();
    await runtimeRead(cache, chain);
    expect(await credentialLastUse(chain)).toBe(aged);
    // A minute later (the entry's memory aged by hand): the next kept read touches, once.
    const entry = cache.get(AdmissionCache.key(hashSecret(chain.secret), chain.vaultId))!;
    entry.row = { ...entry.row, credentialLastUsedAt: new Date(Date.now() - 61_000).toISOString() };
    await runtimeRead(cache, chain);
    expect(await credentialLastUse(chain)).not.toBe(aged);
    // ... and remembers that touch: the read after it does not touch again.
    const agedAgain = await twoMinutesAgo();
    await runtimeRead(cache, chain);
    expect(await credentialLastUse(chain)).toBe(agedAgain);
    expect(cache.counts.hit).toBe(3);
  });

  it('two hundred concurrent requests around a credential’s revocation: none that starts after its commit is admitted', async () => {
    const cache = chainCache();
    const chain = await runtimeReader();
    await raceRevocation(cache, () => chainOutcome(runtimeRead(cache, chain)), () => revokeServiceCredential(db.pool, chain.credentialId), 'credential');
  });
});
