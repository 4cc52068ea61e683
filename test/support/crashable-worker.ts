// A platform worker in its own process that stops dead right after a Forge write commits: it
// prints CRASH-POINT and hangs, and the test kills it with SIGKILL.
import { NativeConnection } from '@temporalio/worker';
import pino from 'pino';
import { createDatabasePool } from '../../db/pool.ts';
import { installTemporalLogging } from '../../platform/temporal-logging.ts';
import { createPlatformWorker } from '../../workers/worker.ts';

installTemporalLogging(pino({ level: 'error' }), 'ERROR');
const db = await createDatabasePool(process.env['DATABASE_URL']!, { maxPoolSize: 2 });
const connection = await NativeConnection.connect({ address: process.env['TEMPORAL_ADDRESS']! });
const worker = await createPlatformWorker({
  connection,
  namespace: 'default',
  taskQueue: process.env['TEMPORAL_TASK_QUEUE']!,
  deps: {
    db,
    afterForgeWrite: async () => {
      process.stdout.write('CRASH-POINT\n');
      await new Promise(() => {});
    },
  },
});
process.stdout.write('POLLING\n');
await worker.run();
