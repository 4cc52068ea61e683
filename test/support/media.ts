// Private media in tests: the committed audio fixtures (scripts/make-audio-fixtures.sh made them
// with ffmpeg) and a small client for the media routes over app.inject, raw bytes in and out.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { z } from 'zod';
import type { DatabasePool } from '../../db/pool.ts';
import type { Json } from './dev-client.ts';

export const MEDIA_PATH = '/api/product/v1/intelligence/education/media';

/** The bytes of test/fixtures/media/<name>. */
export function audioFixture(name: string): Buffer {
  return readFileSync(new URL(`../fixtures/media/${name}`, import.meta.url));
}

/** The MP4 fixture grown to exactly `size` bytes with a trailing `free` box: still a well-formed file. */
export function grownMp4(size: number): Buffer {
  const base = audioFixture('tone-3s.m4a');
  const free = Buffer.alloc(size - base.length);
  free.writeUInt32BE(free.length, 0);
  free.write('free', 4, 'latin1');
  return Buffer.concat([base, free]);
}

export type MediaResponse = { statusCode: number; headers: Record<string, string | string[] | number | undefined>; data: Json; raw: Buffer };

export type UploadOptions = {
  key?: string | undefined;
  reference?: string | undefined;
  duration?: string | undefined;
  contentType?: string | undefined;
  headers?: Record<string, string>;
};

/** Requests to the media routes with the credential; uploads send the bytes as they are. */
export function mediaClient(app: FastifyInstance, secret: string) {
  const send = async (method: 'GET' | 'HEAD' | 'POST' | 'DELETE', url: string, headers: Record<string, string | undefined>, payload?: Buffer): Promise<MediaResponse> => {
    const sent: Record<string, string> = {};
    for (const [name, value] of Object.entries({ authorization: `Bearer ${secret}`, 'x-service-runtime-version': '1', ...headers })) if (value !== undefined) sent[name] = value;
    const res = await app.inject({ method, url, headers: sent, ...(payload ? { payload } : {}) });
    let data: Json = {};
    try {
      data = res.body && String(res.headers['content-type'] ?? '').includes('json') ? (JSON.parse(res.body) as Json) : {};
    } catch {
      data = {};
    }
    return { statusCode: res.statusCode, headers: res.headers, data, raw: res.rawPayload };
  };
  return {
    upload: (bytes: Buffer, options: UploadOptions = {}) =>
      send(
        'POST',
        `${MEDIA_PATH}/audio`,
        {
          'content-type': options.contentType ?? 'application/octet-stream',
          'idempotency-key': options.key,
          'x-media-reference': options.reference,
          'x-media-duration-seconds': options.duration,
          ...options.headers,
        },
        bytes,
      ),
    read: (mediaId: string, headers: Record<string, string> = {}) => send('GET', `${MEDIA_PATH}/${mediaId}`, headers),
    head: (mediaId: string, headers: Record<string, string> = {}) => send('HEAD', `${MEDIA_PATH}/${mediaId}`, headers),
    metadata: (mediaId: string) => send('GET', `${MEDIA_PATH}/${mediaId}/metadata`, {}),
    list: (query = '') => send('GET', `${MEDIA_PATH}${query}`, {}),
    remove: (mediaId: string) => send('DELETE', `${MEDIA_PATH}/${mediaId}`, {}),
  };
}
export type MediaClient = ReturnType<typeof mediaClient>;

/** What the database holds for an organization's media: records by state, blobs, and the storage counter. */
export async function mediaLedger(db: DatabasePool, organizationId: string) {
  return db.one(sql.type(z.object({ stored: z.number(), storing: z.number(), deleted: z.number(), blobs: z.number(), usedBytes: z.number(), storedBytes: z.number() }))`
    SELECT (SELECT count(*)::int FROM media_objects WHERE organization_id = ${organizationId} AND state = 'stored') AS stored,
           (SELECT count(*)::int FROM media_objects WHERE organization_id = ${organizationId} AND state = 'storing') AS storing,
           (SELECT count(*)::int FROM media_objects WHERE organization_id = ${organizationId} AND state = 'deleted') AS deleted,
           (SELECT count(*)::int FROM media_blobs b JOIN media_objects m ON m.blob_key = b.blob_key WHERE m.organization_id = ${organizationId}) AS blobs,
           coalesce((SELECT used_bytes FROM organization_media_storage WHERE organization_id = ${organizationId}), 0)::int AS "usedBytes",
           coalesce((SELECT sum(size_bytes) FROM media_objects WHERE organization_id = ${organizationId} AND state IN ('storing', 'stored', 'deleting')), 0)::int AS "storedBytes"`);
}

/** Every blob in the embedded store, whoever owns it (a refused upload must leave none behind). */
export async function blobCount(db: DatabasePool): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM media_blobs`);
}
