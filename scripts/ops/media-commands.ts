// System Operations for private media (domain/media/library.ts): an organization's storage against
// `mediaStorageBytes` (set with `org set-runtime --media-storage-bytes`), an installation's stored
// media, and the sweep the worker runs every 10 minutes, on demand. Spread into the CLI by scripts/ops.ts.
import { z } from 'zod';
import { getMediaStorage, listAudio, sweepUnfinishedMedia } from '../../domain/media/library.ts';
import { createBlobStore } from '../../domain/media/setup.ts';
import { loadConfig, mediaStorageFrom } from '../../platform/config.ts';
import { command } from './commands.ts';
import { installationCaller } from './installation-caller.ts';
import type { Command } from './commands.ts';

const id = (what: string) => z.uuid().describe(`${what} id (UUID)`);

export const mediaCommands: Record<string, Record<string, Command>> = {
  media: {
    storage: command(
      "Show an organization's media storage: its mediaStorageBytes limit, bytes used (uploads in progress included) and available",
      z.object({ org: id('organization') }),
      (db, o) => getMediaStorage(db, o.org),
    ),
    list: command(
      "List an installation's stored media (records only: ids, references, types, sizes, SHA-256, durations), newest first",
      z.object({
        installation: id('installation'),
        limit: z.coerce.number().int().min(1).max(200).optional().describe('media per page (default 50, at most 200)'),
        cursor: z.string().max(512).optional().describe('nextCursor of the previous page'),
      }),
      async (db, o) => listAudio(db, await installationCaller(db, o.installation), { limit: o.limit ?? 50, cursor: o.cursor }),
    ),
    sweep: command(
      'Finish what a failing store or a stopped process left: unconfirmed uploads, deletions, and uploads stuck older than --grace-seconds, as the worker does every 10 minutes',
      z.object({ graceSeconds: z.coerce.number().int().min(0).max(86_400).optional().describe('how old an unfinished upload must be (default 600)') }),
      (db, o) => sweepUnfinishedMedia(db, createBlobStore(mediaStorageFrom(loadConfig()), db), o.graceSeconds),
    ),
  },
};
