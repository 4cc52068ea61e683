// Writes the two OpenAPI documents to files without starting anything: the app is built (routes,
// schemas, the completion pass of api/openapi.ts) on a database pool that refuses every use and a
// lazy Temporal connection that never connects, then both routes are asked through inject().
//   node api/openapi-export.ts [out-dir]   (default .data/openapi) → openapi.json, automation.openapi.json
// .ci/run lints the files with redocly (redocly.yaml).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import type { DatabasePool } from 'slonik';
import { lazyTemporalConnection } from '../platform/temporal.ts';
import { buildApp } from './app.ts';
import { documentationGaps } from './openapi.ts';

const outDir = process.argv[2] ?? '.data/openapi';

// Building the document touches no database: any use is a bug worth failing on.
const db = new Proxy({} as DatabasePool, {
  get(_target, property) {
    throw new Error(`openapi-export: the database was used (${String(property)}) while building the document.`);
  },
});
const connection = lazyTemporalConnection('127.0.0.1:7233');
const app = await buildApp({ db, temporal: { connection, namespace: 'default', taskQueue: 'openapi-export' }, logger: pino({ level: 'warn' }) });
try {
  await app.ready();
  mkdirSync(outDir, { recursive: true });
  for (const [url, file] of [
    ['/openapi.json', 'openapi.json'],
    ['/api/dev/automation/openapi.json', 'automation.openapi.json'],
  ] as const) {
    const res = await app.inject({ method: 'GET', url });
    if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}: ${res.body.slice(0, 500)}`);
    const gaps = url === '/openapi.json' ? documentationGaps(res.json()) : [];
    if (gaps.length) throw new Error(`The OpenAPI document is incomplete:\n- ${gaps.join('\n- ')}`);
    writeFileSync(join(outDir, file), `${JSON.stringify(res.json(), null, 2)}\n`);
    console.log(`${join(outDir, file)} (${Object.keys((res.json() as { paths: object }).paths).length} paths)`);
  }
} finally {
  await app.close();
}
