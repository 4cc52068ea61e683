// What an upload is and what claiming it takes: the terms library.ts (one upload alone) and
// upload-claims.ts (a statement of many, decision 108) share, and the organization's storage
// limit both read where they enforce it. Its own module so that neither of the two imports the
// other for them.
import { sql } from 'slonik';
import { DEFAULT_MEDIA_STORAGE_BYTES } from '../product-runtime/entities.ts';
import type { inspectAudio } from './audio-inspection.ts';
import type { BlobStore, SameDatabasePut } from './blob-store.ts';

/** Who acts: the admitted runtime caller. */
export type MediaCaller = { organizationId: string; installationId: string; servicePrincipalId: string; requestId: string };

export type AudioUploadRequest = {
  idempotencyKey: string;
  reference: string;
  declaredDurationMs: number;
  bytes: Uint8Array;
};

/** The organization's `mediaStorageBytes` (default 500 MiB), read where it is enforced. */
export const storageLimit = (organizationId: string) => sql.fragment`
  (SELECT coalesce((o.settings #>> '{productRuntime,mediaStorageBytes}')::bigint, ${DEFAULT_MEDIA_STORAGE_BYTES}::bigint)
     FROM organizations o WHERE o.id = ${organizationId})`;

export type ClaimInput = {
  keyHash: string;
  fingerprint: string;
  sha256: string;
  size: number;
  inspection: Awaited<ReturnType<typeof inspectAudio>>;
  containerMs: number | null;
  backend: BlobStore['kind'];
  /** The store's put, when it runs in this database: the claim's statement writes the bytes too. */
  put: SameDatabasePut | undefined;
};
