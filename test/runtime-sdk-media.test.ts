// Private audio media through the Runtime SDK: the hosted adapter over real HTTP to the app on
// loopback, with the committed audio fixtures. Upload (raw bytes, metadata in headers, keyed),
// replay, ranged and conditional reads, paging, metadata, deletion, and the refusals a product
// branches on, each a RuntimeError with the service's code.
import { createHash, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createHostedRuntime, MEDIA_LIMITS } from '@hosted-notes/runtime-sdk';
import type { AudioUploadInput, HostedRuntime } from '@hosted-notes/runtime-sdk';
import type { Scope } from '../domain/product-runtime/entities.ts';
import { useTestApp } from './support/harness.ts';
import { audioFixture } from './support/media.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';
import { expectEnvelope, expectRefusal } from './support/runtime-conformance.ts';

const ctx = useTestApp({ listen: true });

let chain: RuntimeChain;
let runtime: HostedRuntime;
beforeAll(async () => {
  chain = await buildRuntimeChain(ctx.db.pool);
  runtime = createHostedRuntime({ baseUrl: ctx.url, credential: chain.secret });
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** An upload of test/fixtures/media/<name> (each a 3 s tone) under a fresh key. */
function upload(name: string, overrides: Partial<AudioUploadInput> = {}): AudioUploadInput {
  return { idempotencyKey: `media-${randomUUID()}`, reference: `lesson-42/${name}`, declaredDurationSeconds: 3, bytes: new Uint8Array(audioFixture(name)), ...overrides };
}

/** A runtime for a new installation; in `chain`'s organization when `sameOrganization`. */
async function otherRuntime(options: { sameOrganization: boolean; scopes?: readonly Scope[] }) {
  const other = await buildRuntimeChain(ctx.db.pool, {
    ...(options.sameOrganization ? { organization: { id: chain.organizationId, workspaceId: chain.workspaceId } } : {}),
    ...(options.scopes ? { scopes: options.scopes } : {}),
  });
  return createHostedRuntime({ baseUrl: ctx.url, credential: other.secret });
}

describe('hosted adapter: uploadAudio', () => {
  it('stores the bytes as sent and answers the record (never a storage address); the same key and bytes replay the same mediaId', async () => {
    const input = upload('tone-3s.webm', { contentType: 'audio/webm' });
    const stored = await runtime.uploadAudio(input);
    expectEnvelope('service.media-audio', stored);
    expect(stored).toMatchObject({ kind: 'service.media-audio', status: 'complete', missing: [] });
    expect(stored.data).toMatchObject({
      reference: input.reference,
      mediaType: 'audio/webm',
      container: 'webm',
      sizeBytes: input.bytes.byteLength,
      sha256: sha256(input.bytes),
      declaredDurationSeconds: 3,
      replayed: false,
    });
    expect(JSON.stringify(stored)).not.toMatch(/https?:|s3:|bucket/i);

    const again = await runtime.uploadAudio(input);
    expect(again.data).toEqual({ ...stored.data, replayed: true });
  });

  it('the same key with other bytes is idempotency_key_reused, and the refusal names the key to keep', async () => {
    const first = upload('tone-3s.webm');
    await runtime.uploadAudio(first);
    const reused = await expectRefusal(runtime.uploadAudio({ ...upload('tone-3s.ogg'), idempotencyKey: first.idempotencyKey }), 'idempotency_key_reused', 422);
    expect(reused.idempotencyKey).toBe(first.idempotencyKey);
  });

  it('sends the declared duration rounded to the millisecond, as the wire format wants (1.4 + 1.7 goes out as 3.1)', async () => {
    const stored = await runtime.uploadAudio(upload('tone-3s.ogg', { declaredDurationSeconds: 1.4 + 1.7, contentType: 'audio/ogg' }));
    expect(stored.data).toMatchObject({ declaredDurationSeconds: 3.1, mediaType: 'audio/ogg' });
  });

  it('refusals are RuntimeError with the media codes: oversized (3 MiB + 1 byte), not audio, empty, a bad reference or duration', async () => {
    const before = (await runtime.listAudio({ limit: MEDIA_LIMITS.listPage })).data!;
    const oversized = upload('tone-3s.webm', { bytes: new Uint8Array(MEDIA_LIMITS.maxAudioBytes + 1) });
    const tooLarge = await expectRefusal(runtime.uploadAudio(oversized), 'payload_too_large', 413);
    expect(tooLarge.idempotencyKey).toBe(oversized.idempotencyKey);
    await expectRefusal(runtime.uploadAudio(upload('tone-3s.mp3')), 'media_type_unsupported', 415);
    await expectRefusal(runtime.uploadAudio(upload('video-2s.webm')), 'media_type_unsupported', 415);
    await expectRefusal(runtime.uploadAudio(upload('tone-3s.webm', { bytes: new Uint8Array(0) })), 'media_empty', 400);
    await expectRefusal(runtime.uploadAudio(upload('tone-3s.webm', { reference: '' })), 'media_reference_invalid', 400);
    await expectRefusal(runtime.uploadAudio(upload('tone-3s.webm', { declaredDurationSeconds: 0 })), 'media_duration_invalid', 400);
    await expectRefusal(runtime.uploadAudio(upload('tone-3s.webm', { declaredDurationSeconds: 121 })), 'media_duration_exceeded', 422);
    await expectRefusal(runtime.uploadAudio(upload('tone-3s.webm', { declaredDurationSeconds: 60 })), 'media_duration_mismatch', 422);
    // Nothing was stored by any of them.
    const after = (await runtime.listAudio({ limit: MEDIA_LIMITS.listPage })).data!;
    expect(after.media).toEqual(before.media);
    expect(after.storage.usedBytes).toBe(before.storage.usedBytes);
  });

  it('a product mistake the service could not even receive is a TypeError before anything is sent', async () => {
    const { idempotencyKey: _key, ...unkeyed } = upload('tone-3s.webm');
    await expect(runtime.uploadAudio(unkeyed as AudioUploadInput)).rejects.toThrow(TypeError);
    await expect(runtime.uploadAudio(upload('tone-3s.webm', { reference: 'leçon-42' }))).rejects.toThrow(/visible ASCII/);
  });

  it('needs media.write: a credential with media.read only is scope_missing', async () => {
    const reader = await otherRuntime({ sameOrganization: true, scopes: ['media.read'] });
    await expectRefusal(reader.uploadAudio(upload('tone-3s.webm')), 'scope_missing', 403);
  });
});

describe('hosted adapter: readAudio', () => {
  let file: Buffer;
  let mediaId: string;
  let etag: string;
  beforeAll(async () => {
    file = audioFixture('tone-3s.webm');
    mediaId = (await runtime.uploadAudio(upload('tone-3s.webm'))).data!.mediaId;
    etag = `"${sha256(file)}"`;
  });

  it('whole: status 200, the recognized type, the strong ETag and exactly the uploaded bytes', async () => {
    const whole = await runtime.readAudio(mediaId);
    expect(whole).toMatchObject({ status: 200, mediaType: 'audio/webm', etag, sizeBytes: file.byteLength, range: null });
    expect(whole.bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(whole.bytes).equals(file)).toBe(true);
  });

  it('a range: status 206, the slice and where it lies; an open range runs to the end', async () => {
    const part = await runtime.readAudio(mediaId, { range: { start: 100, end: 1099 } });
    expect(part).toMatchObject({ status: 206, mediaType: 'audio/webm', etag, sizeBytes: file.byteLength, range: { start: 100, end: 1099, size: file.byteLength } });
    expect(Buffer.from(part.bytes).equals(file.subarray(100, 1100))).toBe(true);

    const tail = await runtime.readAudio(mediaId, { range: { start: file.byteLength - 10 } });
    expect(tail.range).toEqual({ start: file.byteLength - 10, end: file.byteLength - 1, size: file.byteLength });
    expect(Buffer.from(tail.bytes).equals(file.subarray(file.byteLength - 10))).toBe(true);
  });

  it('a range starting past the end is range_not_satisfiable with the size; an impossible range is a TypeError, not a request', async () => {
    const refused = await expectRefusal(runtime.readAudio(mediaId, { range: { start: file.byteLength } }), 'range_not_satisfiable', 416);
    expect(refused.extensions['sizeBytes']).toBe(file.byteLength);
    await expect(runtime.readAudio(mediaId, { range: { start: 10, end: 5 } })).rejects.toThrow(TypeError);
    await expect(runtime.readAudio(mediaId, { range: { start: -1 } })).rejects.toThrow(TypeError);
  });

  it('ifNoneMatch with the current ETag is 304 with no bytes; with another ETag the whole media', async () => {
    const unchanged = await runtime.readAudio(mediaId, { ifNoneMatch: etag });
    expect(unchanged).toEqual({ status: 304, mediaType: null, etag, sizeBytes: null, range: null, bytes: new Uint8Array(0) });
    const changed = await runtime.readAudio(mediaId, { ifNoneMatch: `"${'0'.repeat(64)}"` });
    expect(changed.status).toBe(200);
    expect(Buffer.from(changed.bytes).equals(file)).toBe(true);
  });

  it('a missing mediaId is media_not_found', async () => {
    await expectRefusal(runtime.readAudio(randomUUID()), 'media_not_found', 404);
  });
});

describe('hosted adapter: listAudio, getAudioMetadata, deleteAudio', () => {
  it('listAudio pages the installation media newest first with an opaque cursor, and the organization storage', async () => {
    // A fresh installation, so the listing is exactly what this test uploaded.
    const own = await buildRuntimeChain(ctx.db.pool);
    const lister = createHostedRuntime({ baseUrl: ctx.url, credential: own.secret });
    const records = [];
    for (const name of ['tone-3s.webm', 'tone-3s.ogg', 'tone-3s.m4a']) {
      const { replayed: _r, storage: _s, ...record } = (await lister.uploadAudio(upload(name))).data!;
      records.push(record);
    }
    const first = await lister.listAudio({ limit: 2 });
    expectEnvelope('service.media-audio-list', first);
    expect(first.data!.media).toEqual([records[2], records[1]]);
    expect(first.data!.nextCursor).toEqual(expect.any(String));
    const second = await lister.listAudio({ limit: 2, cursor: first.data!.nextCursor! });
    expect(second.data!.media).toEqual([records[0]]);
    expect(second.data!.nextCursor).toBeNull();
    const total = records.reduce((sum, r) => sum + r.sizeBytes, 0);
    expect(second.data!.storage).toMatchObject({ usedBytes: total });
    expect(second.data!.storage.availableBytes).toBe(second.data!.storage.limitBytes - total);
  });

  it('getAudioMetadata answers the record of the upload without its bytes', async () => {
    const stored = (await runtime.uploadAudio(upload('tone-3s.m4a'))).data!;
    const metadata = await runtime.getAudioMetadata(stored.mediaId);
    expectEnvelope('service.media-audio-record', metadata);
    const { replayed: _r, storage: _s, ...record } = stored;
    expect(metadata.data).toEqual(record);
    expect(metadata.data).toMatchObject({ mediaType: 'audio/mp4', container: 'mp4' });
  });

  it('deleteAudio frees the bytes; then the media is media_not_found to every operation', async () => {
    const stored = (await runtime.uploadAudio(upload('tone-3s.ogg'))).data!;
    const deleted = await runtime.deleteAudio(stored.mediaId);
    expectEnvelope('service.media-deletion', deleted);
    expect(deleted.data).toMatchObject({ mediaId: stored.mediaId, deleted: true, freedBytes: stored.sizeBytes });
    expect(deleted.data!.storage.usedBytes).toBe(stored.storage.usedBytes - stored.sizeBytes);
    await expectRefusal(runtime.readAudio(stored.mediaId), 'media_not_found', 404);
    await expectRefusal(runtime.getAudioMetadata(stored.mediaId), 'media_not_found', 404);
    await expectRefusal(runtime.deleteAudio(stored.mediaId), 'media_not_found', 404);
    const listed = await runtime.listAudio({ limit: MEDIA_LIMITS.listPage });
    expect(listed.data!.media.map((m) => m.mediaId)).not.toContain(stored.mediaId);
  });
});

describe('hosted adapter: media of another installation', () => {
  it('is media_not_found (as if missing) to another installation of the same organization and to another organization; it stays the owner’s', async () => {
    const stored = (await runtime.uploadAudio(upload('tone-3s.webm'))).data!;
    for (const stranger of [await otherRuntime({ sameOrganization: true }), await otherRuntime({ sameOrganization: false })]) {
      await expectRefusal(stranger.readAudio(stored.mediaId), 'media_not_found', 404);
      await expectRefusal(stranger.getAudioMetadata(stored.mediaId), 'media_not_found', 404);
      await expectRefusal(stranger.deleteAudio(stored.mediaId), 'media_not_found', 404);
      expect((await stranger.listAudio()).data!.media.map((m) => m.mediaId)).not.toContain(stored.mediaId);
    }
    const owner = await runtime.readAudio(stored.mediaId);
    expect(Buffer.from(owner.bytes).equals(audioFixture('tone-3s.webm'))).toBe(true);
  });
});
