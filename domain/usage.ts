// Request allowances: a monthly allowance per plan and a requests-per-minute boundary, per account
// and interface, counted atomically in Postgres. One conditional upsert both checks and counts, so
// parallel requests can never overshoot; a rejected request counts nothing.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from './errors.ts';
import type { Plan } from './identity/plans.ts';

export type Allowance = { perMinute: number; perMonth: Partial<Record<Plan, number>> };
export type Allowances = { rest: Allowance; mcp: Allowance };

/** Defaults; each can be overridden by environment variables (README, "Configuration"). */
export const defaultAllowances: Allowances = {
  rest: { perMinute: 600, perMonth: { developer_agent: 100_000, team: 1_000_000 } },
  mcp: { perMinute: 300, perMonth: { premium: 10_000, professional: 50_000, developer_agent: 100_000, team: 500_000 } },
};

const countedSchema = z.object({ monthCount: z.number(), minuteCount: z.number() });
const currentSchema = z.object({ monthFull: z.boolean(), secondsToNextMinute: z.number(), secondsToNextMonth: z.number() });

export type UsageSnapshot = { monthLimit: number; monthUsed: number; minuteLimit: number; minuteUsed: number };

/**
 * Counts one request against the account's allowance for `iface`, or throws 429 with
 * Retry-After: `monthly_limit_exceeded` when the month is used up, else `rate_limited`.
 */
export async function consumeAllowance(db: CommonQueryMethods, accountId: string, plan: Plan, iface: keyof Allowances, allowances: Allowances): Promise<UsageSnapshot> {
  const allowance = allowances[iface];
  const monthLimit = allowance.perMonth[plan] ?? 0;
  const minuteLimit = allowance.perMinute;
  const counted = await db.maybeOne(sql.type(countedSchema)`
    INSERT INTO usage_counters AS u (account_id, interface, month_start, month_count, minute_start, minute_count)
    SELECT ${accountId}, ${iface}, date_trunc('month', now(), 'UTC'), 1, date_trunc('minute', now()), 1
     WHERE ${monthLimit} > 0 AND ${minuteLimit} > 0
    ON CONFLICT (account_id, interface) DO UPDATE SET
      month_count = CASE WHEN u.month_start = excluded.month_start THEN u.month_count + 1 ELSE 1 END,
      month_start = excluded.month_start,
      minute_count = CASE WHEN u.minute_start = excluded.minute_start THEN u.minute_count + 1 ELSE 1 END,
      minute_start = excluded.minute_start
    WHERE (u.month_start <> excluded.month_start OR u.month_count < ${monthLimit})
      AND (u.minute_start <> excluded.minute_start OR u.minute_count < ${minuteLimit})
    RETURNING month_count AS "monthCount", minute_count AS "minuteCount"`);
  if (counted) return { monthLimit, monthUsed: counted.monthCount, minuteLimit, minuteUsed: counted.minuteCount };

  // Refused: say which boundary, and when it lifts.
  const current = await db.one(sql.type(currentSchema)`
    SELECT coalesce((SELECT u.month_start = date_trunc('month', now(), 'UTC') AND u.month_count >= ${monthLimit}
                       FROM usage_counters u WHERE u.account_id = ${accountId} AND u.interface = ${iface}), ${monthLimit} <= 0) AS "monthFull",
           ceil(extract(epoch FROM date_trunc('minute', now()) + interval '1 minute' - now()))::int AS "secondsToNextMinute",
           ceil(extract(epoch FROM date_trunc('month', now(), 'UTC') + interval '1 month' - now()))::int AS "secondsToNextMonth"`);
  const limits = { monthLimit, minuteLimit };
  if (current.monthFull) {
    throw new AppError('monthly_limit_exceeded', `The ${plan} plan allows ${monthLimit} ${iface.toUpperCase()} requests a month.`, {
      headers: { 'retry-after': String(Math.max(1, current.secondsToNextMonth)) },
      extensions: { ...limits, interface: iface },
    });
  }
  throw new AppError('rate_limited', `At most ${minuteLimit} ${iface.toUpperCase()} requests a minute.`, {
    headers: { 'retry-after': String(Math.max(1, current.secondsToNextMinute)) },
    extensions: { ...limits, interface: iface },
  });
}
