// The real API in its own process (buildApp with a pool, a Temporal connection and the intelligence
// settings given in INTELLIGENCE_SETTINGS as JSON), so a test can SIGKILL it mid-request. Prints
// LISTENING <url> once it serves.
import pino from 'pino';
import { buildApp } from '../../api/app.ts';
import { createDatabasePool } from '../../db/pool.ts';
import { createIntelligence } from '../../domain/intelligence/setup.ts';
import type { IntelligenceSettings } from '../../domain/intelligence/setup.ts';
import { lazyTemporalConnection } from '../../platform/temporal.ts';

const db = await createDatabasePool(process.env['DATABASE_URL']!, { maxPoolSize: 4 });
const settings = JSON.parse(process.env['INTELLIGENCE_SETTINGS']!) as IntelligenceSettings;
const app = await buildApp({
  db,
  temporal: { connection: lazyTemporalConnection(process.env['TEMPORAL_ADDRESS']!), namespace: 'default', taskQueue: process.env['TEMPORAL_TASK_QUEUE']! },
  logger: pino({ level: 'silent' }),
  intelligence: createIntelligence(settings),
});
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`LISTENING http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
