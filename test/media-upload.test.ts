// Uploading private audio: what is accepted (WebM, Ogg, MP4 recognized from the bytes), every bound
// (3 MiB, 120 s, declared against stated duration, reference, key, content type), idempotent replay
// and conflict, and that nothing refused leaves a record, a byte or a byte of quota behind.
import { createHash, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { setProductRuntimeSettings } from '../domain/product-runtime/entities.ts';
import { useTestApp } from './support/harness.ts';
import { audioFixture, blobCount, grownMp4, mediaClient, mediaLedger, MEDIA_PATH } from './support/media.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';

const ctx = useTestApp({ listen: true });
const MiB = 1024 * 1024;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const upload = (rt: ReturnType<typeof mediaClient>, bytes: Buffer, options: { key?: string; reference?: string; duration?: string; contentType?: string } = {}) =>
  rt.upload(bytes, { key: randomUUID(), reference: 'lesson-42/attempt-1', duration: '3', ...options });

describe('accepted audio', () => {
  it.each([
    ['tone-3s.webm', 'audio/webm', 'webm', 'audio/webm'],
    ['tone-3s-live.webm', 'audio/webm', 'webm', 'audio/webm;codecs=opus'],
    ['tone-3s.ogg', 'audio/ogg', 'ogg', 'audio/ogg'],
    ['tone-3s.m4a', 'audio/mp4', 'mp4', 'audio/mp4'],
  ])('%s is stored as %s with its SHA-256, size and both durations', async (file, mediaType, container, declaredType) => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const rt = mediaClient(ctx.app, chain.secret);
    const bytes = audioFixture(file);
    const res = await upload(rt, bytes, { contentType: declaredType, reference: `ref ${file}` });
    expect(res.statusCode).toBe(201);
    const data = res.data['data'] as Record<string, unknown>;
    expect(res.data).toMatchObject({ runtimeVersion: '1', kind: 'service.media-audio', status: 'complete' });
    expect(data).toMatchObject({ mediaType, container, sizeBytes: bytes.length, sha256: sha256(bytes), declaredDurationSeconds: 3, reference: `ref ${file}`, replayed: false });
    expect(Math.abs((data['containerDurationSeconds'] as number) - 3)).toBeLessThan(0.2);
    expect(res.headers['location']).toBe(`${MEDIA_PATH}/${String(data['mediaId'])}`);
    expect(data['storage']).toEqual({ limitBytes: 524_288_000, usedBytes: bytes.length, availableBytes: 524_288_000 - bytes.length });
    expect(await mediaLedger(ctx.db.pool, chain.organizationId)).toMatchObject({ stored: 1, blobs: 1, usedBytes: bytes.length, storedBytes: bytes.length });
  });

  it('a MediaRecorder-style WebM without a Duration element gets its duration from a walk over the clusters', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const res = await upload(mediaClient(ctx.app, chain.secret), audioFixture('tone-3s-live.webm'));
    expect(res.data['data']).toMatchObject({ durationSource: 'cluster-walk' });
  });

  it('exactly 3 MiB is accepted; one byte more is refused while it is read', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const rt = mediaClient(ctx.app, chain.secret);
    const atLimit = await upload(rt, grownMp4(3 * MiB));
    expect(atLimit.statusCode).toBe(201);
    expect(atLimit.data['data']).toMatchObject({ sizeBytes: 3 * MiB, container: 'mp4' });
    const over = await upload(rt, grownMp4(3 * MiB + 1));
    expect(over.statusCode).toBe(413);
    expect(over.data).toMatchObject({ code: 'payload_too_large' });
    expect(await mediaLedger(ctx.db.pool, chain.organizationId)).toMatchObject({ stored: 1, usedBytes: 3 * MiB });
  });

  it('an endless chunked body is answered 413 without the server waiting for its end', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const { port } = new URL(ctx.url);
    // A raw socket: the request never ends, so only the server's refusal can stop it. What the
    // server wrote back is read even if it closes the connection while we are still writing.
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1');
      let received = '';
      const chunk = Buffer.alloc(64 * 1024, 1);
      const framed = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
      socket.on('data', (data: Buffer) => {
        received += data.toString('latin1');
        if (received.includes('\r\n\r\n')) {
          socket.destroy();
          resolve(received);
        }
      });
      socket.on('error', () => resolve(received));
      socket.on('close', () => resolve(received));
      socket.write(
        [
          `POST ${MEDIA_PATH}/audio HTTP/1.1`,
          `host: 127.0.0.1:${port}`,
          `authorization: Bearer ${chain.secret}`,
          'content-type: audio/webm',
          `idempotency-key: ${randomUUID()}`,
          'x-media-reference: endless',
          'x-media-duration-seconds: 3',
          'transfer-encoding: chunked',
          '',
          '',
        ].join('\r\n'),
      );
      const pump = () => {
        while (!socket.destroyed && socket.write(framed));
        if (!socket.destroyed) socket.once('drain', pump);
      };
      pump();
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(await mediaLedger(ctx.db.pool, chain.organizationId)).toMatchObject({ stored: 0, storing: 0, usedBytes: 0 });
  });
});

describe('refused uploads leave nothing behind', () => {
  const webm = audioFixture('tone-3s.webm');
  const ogg = audioFixture('tone-3s.ogg');
  const mp4 = audioFixture('tone-3s.m4a');
  it.each([
    { name: 'a text file named .webm', bytes: Buffer.from('This is not audio, whatever its name says.\n'.repeat(40)), contentType: 'audio/webm', status: 415, code: 'media_type_unsupported' },
    { name: 'an MP3', bytes: audioFixture('tone-3s.mp3'), contentType: 'audio/mpeg', status: 415, code: 'unsupported_media_type' },
    { name: 'an MP3 declared as WebM', bytes: audioFixture('tone-3s.mp3'), contentType: 'audio/webm', status: 415, code: 'media_type_unsupported' },
    { name: 'a WebM with a video track', bytes: audioFixture('video-2s.webm'), contentType: 'video/webm', status: 415, code: 'media_type_unsupported' },
    { name: 'a truncated WebM', bytes: webm.subarray(0, Math.floor(webm.length * 0.6)), contentType: 'audio/webm', status: 422, code: 'media_truncated' },
    { name: 'a truncated Ogg', bytes: ogg.subarray(0, ogg.length - 1), contentType: 'audio/ogg', status: 422, code: 'media_truncated' },
    { name: 'a truncated MP4', bytes: mp4.subarray(0, mp4.length - 100), contentType: 'audio/mp4', status: 422, code: 'media_truncated' },
    { name: 'an empty body', bytes: Buffer.alloc(0), contentType: 'audio/webm', status: 400, code: 'media_empty' },
  ])('$name → $status $code', async ({ bytes, contentType, status, code }) => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const res = await upload(mediaClient(ctx.app, chain.secret), bytes, { contentType });
    expect(res.statusCode).toBe(status);
    expect(res.data).toMatchObject({ code, status });
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(await mediaLedger(ctx.db.pool, chain.organizationId)).toMatchObject({ stored: 0, storing: 0, blobs: 0, usedBytes: 0 });
  });

  it('a container stating more than 120 s is refused, whatever was declared', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const rt = mediaClient(ctx.app, chain.secret);
    for (const file of ['tone-130s.ogg', 'tone-130s.webm']) {
      const res = await upload(rt, audioFixture(file), { duration: '119' });
      expect(res.statusCode).toBe(422);
      expect(res.data).toMatchObject({ code: 'media_duration_exceeded', maxDurationSeconds: 120, declaredDurationSeconds: 119 });
      expect(Math.round(res.data['containerDurationSeconds'] as number)).toBe(130);
    }
    expect(await mediaLedger(ctx.db.pool, chain.organizationId)).toMatchObject({ stored: 0, usedBytes: 0 });
  });

  it('a declared duration grossly unlike the container is refused; a small difference is recorded', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const rt = mediaClient(ctx.app, chain.secret);
    const gross = await upload(rt, audioFixture('tone-3s.ogg'), { duration: '10' });
    expect(gross.statusCode).toBe(422);
    expect(gross.data).toMatchObject({ code: 'media_duration_mismatch', declaredDurationSeconds: 10 });
    const close = await upload(rt, audioFixture('tone-3s.ogg'), { duration: '4.5' });
    expect(close.statusCode).toBe(201);
    expect(close.data['data']).toMatchObject({ declaredDurationSeconds: 4.5 });
  });

  it.each([
    ['120.001', 422, 'media_duration_exceeded'],
    ['121', 422, 'media_duration_exceeded'],
    ['0', 400, 'media_duration_invalid'],
    ['0.000', 400, 'media_duration_invalid'],
    ['-3', 400, 'media_duration_invalid'],
    ['3.1415', 400, 'media_duration_invalid'],
    ['1e2', 400, 'media_duration_invalid'],
    ['NaN', 400, 'media_duration_invalid'],
    ['three', 400, 'media_duration_invalid'],
    ['', 400, 'media_duration_invalid'],
    [undefined, 400, 'media_duration_invalid'],
  ])('declared duration %j → %i %s (before the body is read)', async (duration, status, code) => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const res = await mediaClient(ctx.app, chain.secret).upload(audioFixture('tone-3s.webm'), { key: randomUUID(), reference: 'r', duration: duration as string | undefined });
    expect(res.statusCode).toBe(status);
    expect(res.data).toMatchObject({ code });
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['201 characters', 'r'.repeat(201)],
    ['a control character', 'lesson\t42'],
    ['non-ASCII', 'leçon-42'],
    ['leading space', ' lesson'],
  ])('reference %s → 400 media_reference_invalid', async (_name, reference) => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const res = await mediaClient(ctx.app, chain.secret).upload(audioFixture('tone-3s.webm'), { key: randomUUID(), reference, duration: '3' });
    expect(res.statusCode).toBe(400);
    expect(res.data).toMatchObject({ code: 'media_reference_invalid' });
  });

  it('a reference of 200 visible characters with inner spaces is kept as sent', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const reference = `a b${'x'.repeat(197)}`;
    const res = await upload(mediaClient(ctx.app, chain.secret), audioFixture('tone-3s.webm'), { reference });
    expect(res.statusCode).toBe(201);
    expect(res.data['data']).toMatchObject({ reference });
  });

  it.each([
    ['application/json', 'unsupported_media_type'],
    ['multipart/form-data; boundary=x', 'unsupported_media_type'],
    ['text/plain', 'unsupported_media_type'],
  ])('Content-Type %s → 415 %s', async (contentType, code) => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const res = await upload(mediaClient(ctx.app, chain.secret), audioFixture('tone-3s.webm'), { contentType });
    expect(res.statusCode).toBe(415);
    expect(res.data).toMatchObject({ code });
  });

  it('no Content-Type, no Idempotency-Key or a malformed key are refused', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const rt = mediaClient(ctx.app, chain.secret);
    const bytes = audioFixture('tone-3s.webm');
    const res = await ctx.app.inject({
      method: 'POST',
      url: `${MEDIA_PATH}/audio`,
      headers: { authorization: `Bearer ${chain.secret}`, 'idempotency-key': randomUUID(), 'x-media-reference': 'r', 'x-media-duration-seconds': '3' },
      payload: bytes,
    });
    expect(res.statusCode).toBe(415);
    expect((await rt.upload(bytes, { reference: 'r', duration: '3' })).data).toMatchObject({ code: 'idempotency_key_required' });
    expect((await rt.upload(bytes, { key: 'has space', reference: 'r', duration: '3' })).data).toMatchObject({ code: 'invalid_idempotency_key' });
  });

  it('a body cut short on the wire is never stored', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const bytes = audioFixture('tone-3s.webm');
    const url = new URL(`${ctx.url}${MEDIA_PATH}/audio`);
    const outcome = await new Promise<string>((resolve) => {
      const req = httpRequest(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${chain.secret}`,
          'content-type': 'audio/webm',
          'content-length': String(bytes.length),
          'idempotency-key': randomUUID(),
          'x-media-reference': 'cut',
          'x-media-duration-seconds': '3',
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(String(res.statusCode));
      });
      req.on('error', () => resolve('connection closed'));
      req.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => setTimeout(() => req.destroy(), 50));
    });
    expect(outcome).not.toBe('201');
    // The server notices the abort; give it its turn before looking.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await mediaLedger(ctx.db.pool, chain.organizationId)).toMatchObject({ stored: 0, storing: 0, usedBytes: 0 });
  });

  it('needs media.write, before reading the body', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool, { scopes: ['media.read'] });
    const res = await upload(mediaClient(ctx.app, chain.secret), audioFixture('tone-3s.webm'));
    expect(res.statusCode).toBe(403);
    expect(res.data).toMatchObject({ code: 'scope_missing' });
  });
});

describe('idempotency', () => {
  it('the same key and bytes replay the same mediaId; other bytes, reference or duration are 422', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const rt = mediaClient(ctx.app, chain.secret);
    const key = randomUUID();
    const bytes = audioFixture('tone-3s.ogg');
    const first = await upload(rt, bytes, { key });
    const again = await upload(rt, bytes, { key });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((again.data['data'] as Record<string, unknown>)['mediaId']).toBe((first.data['data'] as Record<string, unknown>)['mediaId']);
    expect(again.data['data']).toMatchObject({ replayed: true });
    for (const other of [
      { bytes: audioFixture('tone-3s.webm') },
      { bytes, reference: 'another reference' },
      { bytes, duration: '3.5' },
    ]) {
      const res = await upload(rt, other.bytes, { key, ...(other.reference ? { reference: other.reference } : {}), ...(other.duration ? { duration: other.duration } : {}) });
      expect(res.statusCode).toBe(422);
      expect(res.data).toMatchObject({ code: 'idempotency_key_reused' });
    }
    expect(await mediaLedger(ctx.db.pool, chain.organizationId)).toMatchObject({ stored: 1, blobs: 1, usedBytes: bytes.length });
  });

  it('the key belongs to the installation: another installation may use the same key for its own upload', async () => {
    const a = await buildRuntimeChain(ctx.db.pool);
    const b = await buildRuntimeChain(ctx.db.pool, { organization: { id: a.organizationId, workspaceId: a.workspaceId } });
    const key = randomUUID();
    const first = await upload(mediaClient(ctx.app, a.secret), audioFixture('tone-3s.ogg'), { key });
    const second = await upload(mediaClient(ctx.app, b.secret), audioFixture('tone-3s.ogg'), { key });
    expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
    expect((first.data['data'] as { mediaId: string }).mediaId).not.toBe((second.data['data'] as { mediaId: string }).mediaId);
  });

  it('parallel uploads with one key store once', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const rt = mediaClient(ctx.app, chain.secret);
    const key = randomUUID();
    const bytes = audioFixture('tone-3s.webm');
    const answers = await Promise.all(Array.from({ length: 25 }, () => upload(rt, bytes, { key })));
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    // The others replay the stored upload, or were told it is still in flight (409, Retry-After).
    expect(statuses.every((s) => s === 201 || s === 200 || s === 409)).toBe(true);
    for (const answer of answers.filter((a) => a.statusCode === 409)) {
      expect(answer.data).toMatchObject({ code: 'idempotency_in_flight' });
      expect(answer.headers['retry-after']).toBe('1');
    }
    const ids = new Set(answers.filter((a) => a.statusCode < 300).map((a) => (a.data['data'] as { mediaId: string }).mediaId));
    expect(ids.size).toBe(1);
    expect(await mediaLedger(ctx.db.pool, chain.organizationId)).toMatchObject({ stored: 1, blobs: 1, usedBytes: bytes.length });
  });
});

describe('the organization storage cap', () => {
  it('200 parallel uploads over two installations never pass mediaStorageBytes', async () => {
    const a = await buildRuntimeChain(ctx.db.pool);
    const b = await buildRuntimeChain(ctx.db.pool, { organization: { id: a.organizationId, workspaceId: a.workspaceId } });
    const bytes = audioFixture('tone-3s.webm');
    const fits = 37;
    await setProductRuntimeSettings(ctx.db.pool, a.organizationId, { mediaStorageBytes: fits * bytes.length + Math.floor(bytes.length / 2) });
    const clients = [mediaClient(ctx.app, a.secret), mediaClient(ctx.app, b.secret)];
    const blobsBefore = await blobCount(ctx.db.pool);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => upload(clients[i % 2]!, bytes)));
    const stored = answers.filter((r) => r.statusCode === 201);
    const refused = answers.filter((r) => r.statusCode === 409);
    expect(stored).toHaveLength(fits);
    expect(refused).toHaveLength(200 - fits);
    for (const r of refused) expect(r.data).toMatchObject({ code: 'media_storage_exhausted', requiredBytes: bytes.length });
    // Both installations drew on the one shared allowance.
    const installations = new Set(answers.map((r, i) => (r.statusCode === 201 ? i % 2 : -1)).filter((i) => i >= 0));
    expect(installations.size).toBe(2);
    expect(await mediaLedger(ctx.db.pool, a.organizationId)).toMatchObject({ stored: fits, storing: 0, usedBytes: fits * bytes.length, storedBytes: fits * bytes.length });
    expect((await blobCount(ctx.db.pool)) - blobsBefore).toBe(fits);
  });

  it('0 allows none; deleting frees the space for the next upload', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const rt = mediaClient(ctx.app, chain.secret);
    const bytes = audioFixture('tone-3s.ogg');
    await setProductRuntimeSettings(ctx.db.pool, chain.organizationId, { mediaStorageBytes: 0 });
    expect((await upload(rt, bytes)).data).toMatchObject({ code: 'media_storage_exhausted', limitBytes: 0, usedBytes: 0 });
    await setProductRuntimeSettings(ctx.db.pool, chain.organizationId, { mediaStorageBytes: bytes.length });
    const first = await upload(rt, bytes);
    expect(first.statusCode).toBe(201);
    expect((await upload(rt, bytes)).statusCode).toBe(409);
    const removed = await rt.remove((first.data['data'] as { mediaId: string }).mediaId);
    expect(removed.data['data']).toMatchObject({ deleted: true, freedBytes: bytes.length, storage: { usedBytes: 0, availableBytes: bytes.length } });
    expect((await upload(rt, bytes)).statusCode).toBe(201);
  });
});
