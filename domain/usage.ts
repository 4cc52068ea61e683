// Request allowances: a monthly allowance per plan and a requests-per-minute boundary, per account
// and allowance (REST, MCP), counted atomically in Postgres by AllowanceLeases (allowance-lease.ts);
// a rejected request counts nothing. This module holds the limits, the RateLimit fields and the
// refusals; which interface counts against which allowance is domain/principals/admission.ts.
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

const currentSchema = z.object({ monthFull: z.boolean(), secondsToNextMinute: z.number(), secondsToNextMonth: z.number() });

export type UsageSnapshot = { monthLimit: number; monthUsed: number; minuteLimit: number; minuteUsed: number };

const secondsToNextMinute = (now: number) => Math.max(1, Math.ceil((60_000 - (now % 60_000)) / 1000));
function secondsToNextMonth(now: number): number {
  const date = new Date(now);
  return Math.max(1, Math.ceil((Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) - now) / 1000));
}

/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): RateLimit-Policy names the
 * two boundaries (per minute, per calendar month UTC) with their quota; RateLimit says what remains of
 * each (r) and in how many seconds it resets (t).
 */
export function rateLimitHeaders(usage: UsageSnapshot, now = Date.now()): Record<string, string> {
  return {
    'ratelimit-policy': `"minute";q=${usage.minuteLimit};w=60, "month";q=${usage.monthLimit}`,
    ratelimit:
      `"minute";r=${Math.max(0, usage.minuteLimit - usage.minuteUsed)};t=${secondsToNextMinute(now)}, ` +
      `"month";r=${Math.max(0, usage.monthLimit - usage.monthUsed)};t=${secondsToNextMonth(now)}`,
  };
}

/** Which boundary refused the request, and when it lifts (only runs on the refused path). */
export async function refusal(db: CommonQueryMethods, accountId: string, plan: Plan, iface: keyof Allowances, monthLimit: number, minuteLimit: number): Promise<AppError> {
  const current = await db.one(sql.type(currentSchema)`
    SELECT coalesce((SELECT u.month_start = date_trunc('month', now(), 'UTC') AND u.month_count >= ${monthLimit}
                       FROM usage_counters u WHERE u.account_id = ${accountId} AND u.interface = ${iface}), ${monthLimit} <= 0) AS "monthFull",
           ceil(extract(epoch FROM date_trunc('minute', now()) + interval '1 minute' - now()))::int AS "secondsToNextMinute",
           ceil(extract(epoch FROM date_trunc('month', now(), 'UTC') + interval '1 month' - now()))::int AS "secondsToNextMonth"`);
  const limits = { monthLimit, minuteLimit };
  const policy = `"minute";q=${minuteLimit};w=60, "month";q=${monthLimit}`;
  if (current.monthFull) {
    const reset = String(Math.max(1, current.secondsToNextMonth));
    return new AppError('monthly_limit_exceeded', `The ${plan} plan allows ${monthLimit} ${iface.toUpperCase()} requests a month.`, {
      headers: { 'retry-after': reset, 'ratelimit-policy': policy, ratelimit: `"month";r=0;t=${reset}` },
      extensions: { ...limits, interface: iface },
    });
  }
  const reset = String(Math.max(1, current.secondsToNextMinute));
  return new AppError('rate_limited', `At most ${minuteLimit} ${iface.toUpperCase()} requests a minute.`, {
    headers: { 'retry-after': reset, 'ratelimit-policy': policy, ratelimit: `"minute";r=0;t=${reset}` },
    extensions: { ...limits, interface: iface },
  });
}
