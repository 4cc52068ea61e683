// `npm run migrate`: applies pending migrations to DATABASE_SESSION_URL or DATABASE_URL (or the running
// local stack); migrations hold a session advisory lock, which a transaction pooler cannot keep.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { migrate } from '../db/migrate.ts';
import { projectRoot } from '../platform/project-root.ts';

const stateFile = join(projectRoot, '.data', 'local-stack.json');
const url =
  process.env['DATABASE_SESSION_URL'] ?? process.env['DATABASE_URL'] ?? (existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as { databaseUrl?: string }).databaseUrl : undefined);
if (!url) {
  console.error('Set DATABASE_URL, or run `npm start` so the local stack is up.');
  process.exit(2);
}
const applied = await migrate(url, (msg) => console.log(msg));
console.log(applied.length ? `applied: ${applied.join(', ')}` : 'up to date');
