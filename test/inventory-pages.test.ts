// The inventory's pages kept per process under the vault's event sequence (domain/notes/inventory.ts,
// decision 95): a page served from the cache must be the page the database holds. Two apps over one
// database stand for two API processes; every way a note changes (a single write, a transaction, a
// delete, a restore, an import, a Forge-style domain transaction) is followed by a listing from both,
// compared with a fresh read of the rows.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyImportBatch, applyTransaction } from '../domain/notes/knowledge.ts';
import { InventoryPages } from '../domain/notes/inventory.ts';
import { listNoteSummaries } from '../domain/notes/store.ts';
import { buildTestApp } from './support/app.ts';
import { devClient } from './support/dev-client.ts';
import type { DevClient } from './support/dev-client.ts';
import { useCaller } from './support/harness.ts';

const caller = useCaller({ plan: 'developer_agent' });
let other: FastifyInstance;
let apis: DevClient[];

beforeAll(async () => {
  other = await buildTestApp(caller.db.pool, {});
  apis = [caller.api, devClient(other, caller.token)];
});
afterAll(async () => {
  await other?.close();
});

const provenance = { actor: { type: 'account' as const, id: '' }, source: 'ops' as const, requestId: null, idempotencyKey: null };

/** Every page of the inventory through `api`, two notes a page, as the client sees them. */
async function listAll(api: DevClient, mappingId: string): Promise<unknown[]> {
  const notes: unknown[] = [];
  let cursor = '';
  for (;;) {
    const res = await api.inventory(mappingId, `&limit=2${cursor}`);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.data as { notes: unknown[]; nextCursor: string | null; hasMore: boolean };
    notes.push(...page.notes);
    if (!page.hasMore) return notes;
    cursor = `&cursor=${page.nextCursor}`;
  }
}

/** Both apps list what the database holds now (each has pages of the previous state in its cache). */
async function expectFresh(what: string) {
  const rows = await listNoteSummaries(caller.db.pool, caller.vaultId, { limit: 1000 });
  for (const [i, api] of apis.entries()) expect(await listAll(api, caller.mappingId), `${what}, app ${i + 1}`).toEqual(rows);
}

describe('inventory pages kept by vault sequence', () => {
  it('lists every change at once, from either process, whichever way the note changed', async () => {
    const { api, mappingId, vaultId, accountId } = caller;
    const target = { vaultId, mappingId };
    const who = { ...provenance, actor: { type: 'account' as const, id: accountId } };
    for (const n of [1, 2, 3]) expect((await api.apply({ mappingId, path: `Inv/Note ${n}.md`, content: `# Note ${n}\n` })).statusCode).toBe(201);
    await expectFresh('after three writes');
    // A listing again, unchanged: served from the pages just kept, and still equal.
    await expectFresh('unchanged');

    const replaced = await api.read(mappingId, 'Inv/Note 2.md');
    await api.apply({ mappingId, path: 'Inv/Note 2.md', content: '# Note 2, replaced\n', expectedHash: replaced.data.revision });
    await expectFresh('after a replace (title changed)');

    const tx = await api.transaction({ mappingId, dryRun: false, actions: [{ type: 'write-note', path: 'Inv/Tx A.md', content: '# A\n' }, { type: 'write-note', path: 'Inv/Tx B.md', content: '# B\n' }] }, randomUUID());
    expect(tx.statusCode, tx.body).toBe(200);
    await expectFresh('after a transaction');

    const note1 = await api.read(mappingId, 'Inv/Note 1.md');
    const deleted = await api.remove(mappingId, 'Inv/Note 1.md', { dryRun: false, headers: { 'if-match': `"${note1.data.revision}"`, 'idempotency-key': randomUUID() } });
    expect(deleted.statusCode, deleted.body).toBe(200);
    await expectFresh('after a delete');

    const restored = await api.restore(mappingId, (deleted.data as { trashId: string }).trashId, false, randomUUID());
    expect(restored.statusCode, restored.body).toBe(200);
    await expectFresh('after a restore');

    await applyImportBatch(caller.db.pool, target, [{ path: 'Inv/Imported.md', content: '# Imported\n' }], who, 'skip');
    await expectFresh('after an import');

    await applyTransaction(caller.db.pool, target, [{ type: 'write-note', path: 'Inv/Forge.md', content: '# By Forge\n' }], who, {
      accountId,
      route: 'forge',
      scope: mappingId,
      key: randomUUID(),
      fingerprint: 'f',
    });
    await expectFresh('after a domain transaction (as Forge writes)');
    expect((await listNoteSummaries(caller.db.pool, vaultId, { limit: 1000 })).length).toBe(7);
  });

  it('answers 200 parallel listings of a vault being written with pages that each existed', async () => {
    const { api, mappingId, vaultId } = caller;
    const writes = Array.from({ length: 20 }, (_, n) => api.apply({ mappingId, path: `Race/${n}.md`, content: `# ${n}\n` }));
    const lists = Array.from({ length: 200 }, (_, n) => apis[n % 2]!.inventory(mappingId, '&limit=1000'));
    const [written, listed] = await Promise.all([Promise.all(writes), Promise.all(lists)]);
    for (const w of written) expect(w.statusCode).toBe(201);
    // Whatever each answer caught of the race, the notes from before it are all there, unchanged,
    // and once the writes are done both processes list exactly the database's rows.
    const before = (await listNoteSummaries(caller.db.pool, vaultId, { limit: 1000 })).filter((r) => !r.path.startsWith('Race/'));
    for (const res of listed) {
      expect(res.statusCode).toBe(200);
      const notes = (res.data as { notes: Array<{ path: string }> }).notes;
      expect(notes.filter((r) => !r.path.startsWith('Race/'))).toEqual(before);
    }
    await expectFresh('after the race');
  });
});

describe("the inventory's refusals, in order", () => {
  it('judges the token before the cursor: an unknown token with a bad cursor is 401, a known one 400', async () => {
    const { mappingId } = caller;
    const stranger = devClient(caller.app, 'hnp_pat_' + 'x'.repeat(43));
    const unknown = await stranger.inventory(mappingId, '&cursor=not-a-cursor');
    expect(unknown.statusCode).toBe(401);
    expect(unknown.data.code).toBe('invalid_token');
    const known = await caller.api.inventory(mappingId, '&cursor=not-a-cursor');
    expect(known.statusCode).toBe(400);
    expect(known.data).toMatchObject({ code: 'invalid_request', errors: [{ pointer: '/querystring/cursor' }] });
  });
});

describe('InventoryPages', () => {
  it('keeps pages up to its bound in text, evicting the least recently used', () => {
    const pages = new InventoryPages(10);
    const page = (notes: string) => ({ notes, lastPath: null, hasMore: false });
    pages.set('a', page('aaaa'));
    pages.set('b', page('bbbb'));
    expect(pages.get('a')?.notes).toBe('aaaa'); // a is now the most recently used
    pages.set('c', page('cccc')); // 12 > 10: b goes
    expect(pages.get('b')).toBeUndefined();
    expect(pages.get('a')?.notes).toBe('aaaa');
    expect(pages.get('c')?.notes).toBe('cccc');
    pages.set('big', page('x'.repeat(11))); // larger than the bound: not kept, nothing evicted
    expect(pages.get('big')).toBeUndefined();
    expect(pages.size).toBe(2);
    pages.set('a', page('aaaaaaaa')); // replaced: counted once, c evicted to fit
    expect(pages.get('c')).toBeUndefined();
    expect(pages.size).toBe(1);
  });

  it('keys a page by vault, sequence, cursor and size', () => {
    const keys = new Set([
      InventoryPages.key('v', 1, '', 1000),
      InventoryPages.key('v', 2, '', 1000),
      InventoryPages.key('w', 1, '', 1000),
      InventoryPages.key('v', 1, 'A.md', 1000),
      InventoryPages.key('v', 1, '', 2),
    ]);
    expect(keys.size).toBe(5);
  });
});
