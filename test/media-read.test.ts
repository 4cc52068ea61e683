// Reading private audio: authorized on every read by organization and installation (a foreign id
// answers exactly like a missing one), streamed with type, length and a strong ETag, Range reads
// for seeking players, conditional requests, HEAD; listing, metadata and deletion.
import { createHash, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/harness.ts';
import { audioFixture, mediaClient, mediaLedger, MEDIA_PATH } from './support/media.ts';
import type { MediaClient, MediaResponse } from './support/media.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';

const ctx = useTestApp({ listen: true });

const bytes = audioFixture('tone-3s.webm');
const etag = `"${createHash('sha256').update(bytes).digest('hex')}"`;
let owner: RuntimeChain;
let rt: MediaClient;
let mediaId: string;

beforeAll(async () => {
  owner = await buildRuntimeChain(ctx.db.pool);
  rt = mediaClient(ctx.app, owner.secret);
  const res = await rt.upload(bytes, { key: randomUUID(), reference: 'read-me', duration: '3', contentType: 'audio/webm' });
  mediaId = (res.data['data'] as { mediaId: string }).mediaId;
});

describe('reads', () => {
  it('streams the whole media with its type, length and strong ETag, privately', async () => {
    const res = await rt.read(mediaId);
    expect(res.statusCode).toBe(200);
    expect(res.raw.equals(bytes)).toBe(true);
    expect(res.headers).toMatchObject({
      'content-type': 'audio/webm',
      'content-length': String(bytes.length),
      etag,
      'accept-ranges': 'bytes',
      'cache-control': 'private, no-cache',
      'x-content-type-options': 'nosniff',
      'x-service-runtime-version': '1',
    });
  });

  it('streams over real HTTP as well (fetch, chunked through the socket)', async () => {
    const res = await fetch(`${ctx.url}${MEDIA_PATH}/${mediaId}`, { headers: { authorization: `Bearer ${owner.secret}`, range: 'bytes=100-' } });
    expect(res.status).toBe(206);
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes.subarray(100))).toBe(true);
  });

  it.each([
    ['bytes=0-99', 0, 99],
    ['bytes=100-', 100, bytes.length - 1],
    ['bytes=-100', bytes.length - 100, bytes.length - 1],
    [`bytes=${bytes.length - 10}-${bytes.length + 500}`, bytes.length - 10, bytes.length - 1],
    ['bytes=0-0', 0, 0],
  ])('Range %s → 206 with exactly those bytes', async (range, start, end) => {
    const res = await rt.read(mediaId, { range });
    expect(res.statusCode).toBe(206);
    expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${bytes.length}`);
    expect(res.headers['content-length']).toBe(String(end - start + 1));
    expect(res.headers['etag']).toBe(etag);
    expect(res.raw.equals(bytes.subarray(start, end + 1))).toBe(true);
  });

  it('a range starting past the end is 416 with the size', async () => {
    const res = await rt.read(mediaId, { range: `bytes=${bytes.length}-` });
    expect(res.statusCode).toBe(416);
    expect(res.headers['content-range']).toBe(`bytes */${bytes.length}`);
    expect(res.data).toMatchObject({ code: 'range_not_satisfiable', sizeBytes: bytes.length });
  });

  it.each([
    ['several ranges', 'bytes=0-9,20-29'],
    ['a malformed range', 'bytes=abc'],
    ['another unit', 'items=0-5'],
  ])('%s → the whole media (200)', async (_name, range) => {
    const res = await rt.read(mediaId, { range });
    expect(res.statusCode).toBe(200);
    expect(res.raw.equals(bytes)).toBe(true);
  });

  it('If-Range: the range applies only while the ETag is current', async () => {
    expect((await rt.read(mediaId, { range: 'bytes=0-9', 'if-range': etag })).statusCode).toBe(206);
    const stale = await rt.read(mediaId, { range: 'bytes=0-9', 'if-range': `"${'0'.repeat(64)}"` });
    expect(stale.statusCode).toBe(200);
    expect(stale.raw.length).toBe(bytes.length);
  });

  it('If-None-Match answers 304 without a body; If-Match that does not match is 412', async () => {
    for (const tag of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await rt.read(mediaId, { 'if-none-match': tag });
      expect(res.statusCode).toBe(304);
      expect(res.raw.length).toBe(0);
      expect(res.headers['etag']).toBe(etag);
    }
    expect((await rt.read(mediaId, { 'if-none-match': '"other"' })).statusCode).toBe(200);
    expect((await rt.read(mediaId, { 'if-match': etag })).statusCode).toBe(200);
    const failed = await rt.read(mediaId, { 'if-match': '"other"' });
    expect(failed.statusCode).toBe(412);
    expect(failed.data).toMatchObject({ code: 'precondition_failed' });
  });

  it('HEAD answers the headers of GET without a body', async () => {
    const whole = await rt.head(mediaId);
    expect(whole.statusCode).toBe(200);
    expect(whole.headers).toMatchObject({ 'content-length': String(bytes.length), 'content-type': 'audio/webm', etag });
    expect(whole.raw.length).toBe(0);
    const part = await rt.head(mediaId, { range: 'bytes=0-9' });
    expect(part.statusCode).toBe(206);
    expect(part.headers).toMatchObject({ 'content-length': '10', 'content-range': `bytes 0-9/${bytes.length}` });
  });

  it('needs media.read', async () => {
    const writer = await buildRuntimeChain(ctx.db.pool, { scopes: ['media.write'] });
    const res = await mediaClient(ctx.app, writer.secret).read(mediaId);
    expect(res.statusCode).toBe(403);
    expect(res.data).toMatchObject({ code: 'scope_missing' });
  });
});

describe('tenancy: a foreign mediaId answers exactly like a missing one', () => {
  /** The problem without what legitimately differs between two requests. */
  const shape = (res: MediaResponse) => {
    const { requestId: _r, instance: _i, ...rest } = res.data as Record<string, unknown>;
    return { status: res.statusCode, body: rest, type: res.headers['content-type'] };
  };

  it('another installation of the same organization, and another organization, see 404 media_not_found', async () => {
    const sibling = await buildRuntimeChain(ctx.db.pool, { organization: { id: owner.organizationId, workspaceId: owner.workspaceId } });
    const stranger = await buildRuntimeChain(ctx.db.pool);
    const missing = randomUUID();
    for (const other of [mediaClient(ctx.app, sibling.secret), mediaClient(ctx.app, stranger.secret)]) {
      for (const [foreign, absent] of [
        [await other.read(mediaId), await other.read(missing)],
        [await other.head(mediaId), await other.head(missing)],
        [await other.read(mediaId, { range: 'bytes=0-1' }), await other.read(missing, { range: 'bytes=0-1' })],
        [await other.metadata(mediaId), await other.metadata(missing)],
        [await other.remove(mediaId), await other.remove(missing)],
      ] as const) {
        expect(foreign.statusCode).toBe(404);
        expect(shape(foreign)).toEqual(shape(absent));
      }
      expect((await other.read(mediaId)).data).toMatchObject({ code: 'media_not_found' });
      expect((await other.list()).data['data']).toMatchObject({ media: [] });
    }
    // Nothing of theirs touched the owner's media.
    expect((await rt.read(mediaId)).statusCode).toBe(200);
  });

  it('a malformed id is not found either, never a 400 that tells the shapes apart', async () => {
    for (const id of ['not-a-uuid', '5d0c3a1e-8f2b-4c6d-9e1a-3b5c7d9f1e2', "'; DROP TABLE media_objects; --"]) {
      const res = await rt.read(encodeURIComponent(id));
      expect(res.statusCode).toBe(404);
      expect(res.data).toMatchObject({ code: 'media_not_found' });
    }
  });
});

describe('list, metadata, delete', () => {
  it('lists this installation\'s media newest first, page by page, with the organization storage', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const client = mediaClient(ctx.app, chain.secret);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await client.upload(audioFixture('tone-3s.ogg'), { key: randomUUID(), reference: `take-${i}`, duration: '3' });
      ids.push((res.data['data'] as { mediaId: string }).mediaId);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = (await client.list(query)).data['data'] as { media: Array<{ mediaId: string; reference: string }>; nextCursor: string | null; storage: { usedBytes: number } };
      expect(page.media.length).toBeLessThanOrEqual(2);
      expect(page.storage.usedBytes).toBe(5 * audioFixture('tone-3s.ogg').length);
      seen.push(...page.media.map((m) => m.mediaId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    expect((await client.list('?cursor=bm90LWEtY3Vyc29y')).data).toMatchObject({ code: 'invalid_request' });
    expect((await client.list('?limit=201')).statusCode).toBe(400);
  });

  it('metadata without bytes; delete makes it unreadable, frees its size, and is 404 the second time', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const client = mediaClient(ctx.app, chain.secret);
    const key = randomUUID();
    const up = await client.upload(bytes, { key, reference: 'to-delete', duration: '3' });
    const id = (up.data['data'] as { mediaId: string }).mediaId;
    expect((await client.metadata(id)).data).toMatchObject({ kind: 'service.media-audio-record', data: { mediaId: id, reference: 'to-delete', sizeBytes: bytes.length } });
    const removed = await client.remove(id);
    expect(removed.statusCode).toBe(200);
    expect(removed.data).toMatchObject({ kind: 'service.media-deletion', data: { mediaId: id, deleted: true, freedBytes: bytes.length, storage: { usedBytes: 0 } } });
    expect((await client.read(id)).statusCode).toBe(404);
    expect((await client.remove(id)).data).toMatchObject({ code: 'media_not_found' });
    // The tombstone keeps the key spent: replaying the upload does not resurrect it.
    const replay = await client.upload(bytes, { key, reference: 'to-delete', duration: '3' });
    expect(replay.statusCode).toBe(422);
    expect(replay.data).toMatchObject({ code: 'idempotency_key_reused' });
    expect(await mediaLedger(ctx.db.pool, chain.organizationId)).toMatchObject({ stored: 0, deleted: 1, blobs: 0, usedBytes: 0 });
  });
});
