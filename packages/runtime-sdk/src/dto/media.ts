// Private audio media: what an upload answers, the installation's listing, the organization's
// storage, and a deletion. Uploads are the raw audio bytes as the request body with the metadata in
// headers (MEDIA_HEADERS), so a product streams a recording without base64 (docs/media.md).
import { z } from 'zod';

export const MEDIA_LIMITS = {
  /** 3 MiB: a larger body is refused while it is read (413 payload_too_large). */
  maxAudioBytes: 3 * 1024 * 1024,
  /** Declared (and container-stated) duration, seconds. */
  maxDurationSeconds: 120,
  referenceChars: 200,
  listPage: 200,
} as const;

/** The request headers of an upload. */
export const MEDIA_HEADERS = {
  reference: 'X-Media-Reference',
  declaredDuration: 'X-Media-Duration-Seconds',
} as const;

/** Content types an upload may declare; the service recognizes the container from the bytes either way. */
export const AUDIO_UPLOAD_CONTENT_TYPES = ['audio/webm', 'audio/ogg', 'audio/mp4', 'audio/x-m4a', 'audio/opus', 'video/webm', 'application/octet-stream'] as const;

export const mediaStorageSchema = z
  .object({
    /** `mediaStorageBytes` of the organization (default 500 MiB), shared by all its installations. */
    limitBytes: z.number().int().min(0),
    /** Bytes held by the organization's media, uploads in progress included. */
    usedBytes: z.number().int().min(0),
    availableBytes: z.number().int().min(0),
  })
  .meta({ id: 'MediaStorage' });
export type MediaStorage = z.infer<typeof mediaStorageSchema>;

export const audioMediaSchema = z
  .object({
    mediaId: z.uuid(),
    /** The product's own opaque reference, as sent in X-Media-Reference. */
    reference: z.string(),
    /** Recognized from the bytes; the type the media is served back with. */
    mediaType: z.enum(['audio/webm', 'audio/ogg', 'audio/mp4']),
    container: z.enum(['webm', 'ogg', 'mp4']),
    codec: z.string().nullable(),
    sizeBytes: z.number().int().min(1),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    /** As declared by the product: bounded (≤ 120 s), not an attestation of the decoded audio. */
    declaredDurationSeconds: z.number(),
    /** What the container itself states, where it states one; null otherwise. */
    containerDurationSeconds: z.number().nullable(),
    durationSource: z.enum(['container-header', 'cluster-walk', 'granule-position', 'none']),
    createdAt: z.string(),
  })
  .meta({ id: 'AudioMedia' });
export type AudioMedia = z.infer<typeof audioMediaSchema>;

export const audioUploadSchema = audioMediaSchema
  .extend({
    /** True when this answer replays an earlier upload with the same Idempotency-Key (nothing stored twice). */
    replayed: z.boolean(),
    storage: mediaStorageSchema,
  })
  .meta({ id: 'AudioUpload' });
export type AudioUpload = z.infer<typeof audioUploadSchema>;

export const audioMediaListSchema = z
  .object({ media: z.array(audioMediaSchema), nextCursor: z.string().nullable(), storage: mediaStorageSchema })
  .meta({ id: 'AudioMediaList' });
export type AudioMediaList = z.infer<typeof audioMediaListSchema>;

export const mediaDeletionSchema = z
  .object({ mediaId: z.uuid(), deleted: z.literal(true), freedBytes: z.number().int().min(0), storage: mediaStorageSchema })
  .meta({ id: 'MediaDeletion' });
export type MediaDeletion = z.infer<typeof mediaDeletionSchema>;

/** What an upload sends besides the bytes. */
export type AudioUploadInput = {
  idempotencyKey: string;
  reference: string;
  declaredDurationSeconds: number;
  bytes: Uint8Array;
  /** The declared content type; default application/octet-stream (the service reads the bytes). */
  contentType?: (typeof AUDIO_UPLOAD_CONTENT_TYPES)[number];
};
