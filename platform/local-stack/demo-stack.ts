// The local stack's demo (`npm start`, `npm run topology`): the demo account with its workspace and
// vault, a Product Runtime installation on it and a reviewer, each kept in a state file under the
// data folder so a restart prints the same tokens.
import { join } from 'node:path';
import { createDatabasePool } from '../../db/pool.ts';
import { ensureDemo } from './demo.ts';
import { ensureDemoProduct } from './demo-product.ts';
import { ensureDemoReviewer } from './demo-reviewer.ts';

export async function seedLocalDemo(databaseUrl: string, dataDir: string) {
  const db = await createDatabasePool(databaseUrl, { maxPoolSize: 2 });
  try {
    const demo = await ensureDemo(db, join(dataDir, 'demo.json'));
    return {
      demo,
      product: await ensureDemoProduct(db, demo, join(dataDir, 'demo-product.json')),
      reviewer: await ensureDemoReviewer(db, demo, join(dataDir, 'demo-reviewer.json')),
    };
  } finally {
    await db.end();
  }
}
