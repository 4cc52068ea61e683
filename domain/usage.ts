// Request allowances: a monthly allowance per plan and a requests-per-minute boundary, per account
// and interface, counted atomically in Postgres. One conditional upsert both checks and counts, so
// parallel requests can never overshoot; a rejected request counts nothing.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from './errors.ts';
import { authenticatedSchema, livePrincipalQuery, touchToken } from './identity/accounts.ts';
import type { Principal } from './identity/accounts.ts';
import { assertEntitled, interfaceEntitlements } from './identity/plans.ts';
import type { Interface, Plan } from './identity/plans.ts';
import { looksLikeSecret, secretPrefixes } from './secrets.ts';

export type Allowance = { perMinute: number; perMonth: Partial<Record<Plan, number>> };
export type Allowances = { rest: Allowance; mcp: Allowance };

/** Defaults; each can be overridden by environment variables (README, "Configuration"). */
export const defaultAllowances: Allowances = {
  rest: { perMinute: 600, perMonth: { developer_agent: 100_000, team: 1_000_000 } },
  mcp: { perMinute: 300, perMonth: { premium: 10_000, professional: 50_000, developer_agent: 100_000, team: 500_000 } },
};

const currentSchema = z.object({ monthFull: z.boolean(), secondsToNextMinute: z.number(), secondsToNextMonth: z.number() });

/**
 * The conditional upsert that checks and counts one request, reading the account and its monthly
 * limit from a CTE named `chargeable(account_id, month_limit)`; it returns no row when a boundary
 * is reached (or chargeable is empty). Every request of an account updates this one row, so its
 * commit must not wait for a WAL flush: set_config(…, true) makes the statement's own transaction
 * commit asynchronously. A crash may forget the last few counts, which is acceptable for an
 * allowance; note writes stay synchronous.
 */
function countRequest(iface: keyof Allowances, minuteLimit: number) {
  return sql.fragment`
    INSERT INTO usage_counters AS u (account_id, interface, month_start, month_count, minute_start, minute_count)
    SELECT c.account_id, ${iface}, date_trunc('month', now(), 'UTC'), 1, date_trunc('minute', now()), 1
      FROM chargeable c, (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit
     WHERE c.month_limit > 0 AND ${minuteLimit} > 0
    ON CONFLICT (account_id, interface) DO UPDATE SET
      month_count = CASE WHEN u.month_start = excluded.month_start THEN u.month_count + 1 ELSE 1 END,
      month_start = excluded.month_start,
      minute_count = CASE WHEN u.minute_start = excluded.minute_start THEN u.minute_count + 1 ELSE 1 END,
      minute_start = excluded.minute_start
    WHERE (u.month_start <> excluded.month_start OR u.month_count < (SELECT month_limit FROM chargeable))
      AND (u.minute_start <> excluded.minute_start OR u.minute_count < ${minuteLimit})
    RETURNING u.month_count, u.minute_count`;
}

export type UsageSnapshot = { monthLimit: number; monthUsed: number; minuteLimit: number; minuteUsed: number };

/** Which boundary refused the request, and when it lifts (only runs on the refused path). */
export async function refusal(db: CommonQueryMethods, accountId: string, plan: Plan, iface: keyof Allowances, monthLimit: number, minuteLimit: number): Promise<AppError> {
  const current = await db.one(sql.type(currentSchema)`
    SELECT coalesce((SELECT u.month_start = date_trunc('month', now(), 'UTC') AND u.month_count >= ${monthLimit}
                       FROM usage_counters u WHERE u.account_id = ${accountId} AND u.interface = ${iface}), ${monthLimit} <= 0) AS "monthFull",
           ceil(extract(epoch FROM date_trunc('minute', now()) + interval '1 minute' - now()))::int AS "secondsToNextMinute",
           ceil(extract(epoch FROM date_trunc('month', now(), 'UTC') + interval '1 month' - now()))::int AS "secondsToNextMonth"`);
  const limits = { monthLimit, minuteLimit };
  if (current.monthFull) {
    return new AppError('monthly_limit_exceeded', `The ${plan} plan allows ${monthLimit} ${iface.toUpperCase()} requests a month.`, {
      headers: { 'retry-after': String(Math.max(1, current.secondsToNextMonth)) },
      extensions: { ...limits, interface: iface },
    });
  }
  return new AppError('rate_limited', `At most ${minuteLimit} ${iface.toUpperCase()} requests a minute.`, {
    headers: { 'retry-after': String(Math.max(1, current.secondsToNextMinute)) },
    extensions: { ...limits, interface: iface },
  });
}

export const chargedSchema = authenticatedSchema.extend({ monthLimit: z.number().nullable(), monthCount: z.number().nullable(), minuteCount: z.number().nullable() });
export type ChargedRow = z.infer<typeof chargedSchema>;

/**
 * The CTEs `principal`, `chargeable` and `counted` of a statement that authenticates a personal
 * access token and counts the request against the account's allowance for `iface`. Only an active,
 * entitled account is charged, so authentication, inactive-account and entitlement failures count
 * nothing. Select `chargedColumns` from `principal p`, then pass the row to settleCharge.
 */
export function chargeCtes(rawToken: string, iface: keyof Allowances & Interface, allowances: Allowances) {
  const allowance = allowances[iface];
  return sql.fragment`
    principal AS (${livePrincipalQuery(rawToken)}),
    chargeable AS (
      SELECT p.id AS account_id, coalesce((${sql.jsonb(allowance.perMonth)} ->> p.plan)::int, 0) AS month_limit
        FROM principal p
       WHERE p.status = 'active' AND p.plan = ANY (${sql.array([...interfaceEntitlements[iface]], 'text')})
    ),
    counted AS (${countRequest(iface, allowance.perMinute)})`;
}

/**
 * The same CTEs without counting (`counted` is empty): for callers that charge through an
 * AllowanceLeases instead (allowance-lease.ts). `chargeable` still holds only an active, entitled account.
 */
export function uncountedCtes(rawToken: string, iface: keyof Allowances & Interface) {
  return sql.fragment`
    principal AS (${livePrincipalQuery(rawToken)}),
    chargeable AS (
      SELECT p.id AS account_id, 0 AS month_limit FROM principal p
       WHERE p.status = 'active' AND p.plan = ANY (${sql.array([...interfaceEntitlements[iface]], 'text')})
    ),
    counted AS (SELECT NULL::int AS month_count, NULL::int AS minute_count WHERE false)`;
}

export const chargedColumns = sql.fragment`p.*, (SELECT month_limit FROM chargeable) AS "monthLimit",
  (SELECT month_count FROM counted) AS "monthCount", (SELECT minute_count FROM counted) AS "minuteCount"`;

/** Judges a charged row in order: invalid token, inactive account, entitlement, then allowance. */
export async function settleCharge(db: CommonQueryMethods, row: ChargedRow | null, iface: keyof Allowances & Interface, allowances: Allowances): Promise<Principal & { usage: UsageSnapshot }> {
  if (!row) throw new AppError('invalid_token');
  const { tokenId, tokenLastUsedAt, monthLimit, monthCount, minuteCount, ...account } = row;
  assertEntitled(account, iface);
  const minuteLimit = allowances[iface].perMinute;
  if (monthCount === null || minuteCount === null) throw await refusal(db, account.id, account.plan, iface, monthLimit ?? 0, minuteLimit);
  await touchToken(db, tokenId, tokenLastUsedAt);
  return { tokenId, account, usage: { monthLimit: monthLimit ?? 0, monthUsed: monthCount, minuteLimit, minuteUsed: minuteCount } };
}

/** Authenticates, checks the plan and charges the allowance in one round trip. */
export async function authenticateAndCharge(db: CommonQueryMethods, rawToken: string, iface: keyof Allowances & Interface, allowances: Allowances): Promise<Principal & { usage: UsageSnapshot }> {
  if (!looksLikeSecret(rawToken, secretPrefixes.accessToken)) throw new AppError('invalid_token');
  // A named prepared statement: planned once per connection (see db/pool.ts).
  const row = await db.maybeOne(sql.prepared('authenticate_and_charge', chargedSchema)`
    WITH ${chargeCtes(rawToken, iface, allowances)}
    SELECT ${chargedColumns} FROM principal p`);
  return settleCharge(db, row, iface, allowances);
}

/** The refusals of authenticateAndCharge: an MCP gateway answers these as protocol errors, not tool results. */
export const chargeRefusalCodes: ReadonlySet<string> = new Set([
  'authentication_required',
  'invalid_token',
  'account_inactive',
  'entitlement_required',
  'rate_limited',
  'monthly_limit_exceeded',
]);
