// A platform worker in its own process that stops dead inside a Forge step, once its receipt is kept
// or, for notes whose path begins with CRASH_BEFORE_RECEIPT_UNDER, once its note write committed: it prints
// CRASH-POINT and hangs, and the test kills it with SIGKILL.
import { NativeConnection } from '@temporalio/worker';
import pino from 'pino';
import { createDatabasePool } from '../../db/pool.ts';
import { installTemporalLogging } from '../../platform/temporal-logging.ts';
import { createPlatformWorker } from '../../workers/worker.ts';

async function crash(): Promise<void> {
  process.stdout.write('CRASH-POINT\n');
  await new Promise(() => {});
}

installTemporalLogging(pino({ level: 'error' }), 'ERROR');
const db = await createDatabasePool(process.env['DATABASE_URL']!, { maxPoolSize: 2 });
const connection = await NativeConnection.connect({ address: process.env['TEMPORAL_ADDRESS']! });
const worker = await createPlatformWorker({
  connection,
  namespace: 'default',
  taskQueue: process.env['TEMPORAL_TASK_QUEUE']!,
  deps: {
    db,
    forgeCrashPoints: {
      // Notes whose path begins with CRASH_BEFORE_RECEIPT_UNDER stop it after the write, before the receipt; the rest after the receipt.
      afterNoteWrite: async (written) => {
        const under = process.env['CRASH_BEFORE_RECEIPT_UNDER'];
        if (under && written.changes.some((c) => c.path.startsWith(under))) await crash();
      },
      afterReceipt: crash,
    },
  },
});
process.stdout.write('POLLING\n');
await worker.run();
