// What the authorization server no longer needs, removed in bounded batches (api/routes/oauth/
// sweeper.ts runs it in rounds): codes and tokens a day past their expiry (a used refresh token is
// kept until it expires, so its replay is still recognised and revokes the grant), grants revoked
// 30 days ago or left with no code or token, and clients registered a day ago that never got a
// grant (dynamic registration is open to anyone: this bounds what unused registrations keep).
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';

export const sweepAges = { expiredSeconds: 24 * 60 * 60, revokedGrantSeconds: 30 * 24 * 60 * 60, unusedClientSeconds: 24 * 60 * 60 } as const;

const removedRow = z.object({ removed: z.number() });

/** One round: at most `batch` rows of each kind; `removed` counts them all. */
export async function sweepOAuth(db: CommonQueryMethods, batch: number): Promise<{ removed: number; more: boolean }> {
  const expired = sql.fragment`now() - make_interval(secs => ${sweepAges.expiredSeconds})`;
  const counts = await Promise.all([
    db.one(sql.type(removedRow)`
      WITH gone AS (DELETE FROM oauth_authorization_codes WHERE code_hash IN (
        SELECT code_hash FROM oauth_authorization_codes WHERE expires_at < ${expired} LIMIT ${batch}) RETURNING 1)
      SELECT count(*)::int AS removed FROM gone`),
    db.one(sql.type(removedRow)`
      WITH gone AS (DELETE FROM oauth_tokens WHERE token_hash IN (
        SELECT token_hash FROM oauth_tokens WHERE expires_at < ${expired} LIMIT ${batch}) RETURNING 1)
      SELECT count(*)::int AS removed FROM gone`),
  ]);
  const grants = await db.one(sql.type(removedRow)`
    WITH gone AS (DELETE FROM oauth_grants WHERE id IN (
      SELECT g.id FROM oauth_grants g
       WHERE g.revoked_at < now() - make_interval(secs => ${sweepAges.revokedGrantSeconds})
          OR (g.created_at < ${expired}
              AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = g.id)
              AND NOT EXISTS (SELECT 1 FROM oauth_authorization_codes c WHERE c.grant_id = g.id))
       LIMIT ${batch}) RETURNING 1)
    SELECT count(*)::int AS removed FROM gone`);
  const clients = await db.one(sql.type(removedRow)`
    WITH gone AS (DELETE FROM oauth_clients WHERE id IN (
      SELECT cl.id FROM oauth_clients cl
       WHERE cl.created_at < now() - make_interval(secs => ${sweepAges.unusedClientSeconds})
         AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = cl.id)
       LIMIT ${batch}) RETURNING 1)
    SELECT count(*)::int AS removed FROM gone`);
  const all = [...counts, grants, clients].map((row) => row.removed);
  return { removed: all.reduce((a, b) => a + b, 0), more: all.some((n) => n >= batch) };
}
