// Request allowances: a monthly allowance per plan and a requests-per-minute boundary, per account
// and interface, counted atomically in Postgres by AllowanceLeases (allowance-lease.ts); a rejected
// request counts nothing. This module holds the limits, the authenticating SQL and the refusals.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from './errors.ts';
import { livePrincipalQuery } from './identity/accounts.ts';
import type { Entitlements, Interface, Plan } from './identity/plans.ts';

export type Allowance = { perMinute: number; perMonth: Partial<Record<Plan, number>> };
export type Allowances = { rest: Allowance; mcp: Allowance };

/**
 * The allowance each interface's requests count against. The spec gives the automation gateway
 * no allowance of its own (its limits are "not shown"), so automation counts against REST's; its
 * entitlement is still its own (plans.ts).
 */
export const allowanceOf = { rest: 'rest', mcp: 'mcp', automation: 'rest' } as const satisfies Record<Interface, keyof Allowances>;

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

/**
 * The CTEs `principal` (the live token's account) and `chargeable` (that account's id, if active and
 * entitled to `iface`), for statements that authenticate; select `p.*` (authenticatedSchema) from
 * `principal p`. The request is then charged through AllowanceLeases (allowance-lease.ts).
 */
export function principalCtes(rawToken: string, iface: Interface, entitlements: Entitlements) {
  return sql.fragment`
    principal AS (${livePrincipalQuery(rawToken)}),
    chargeable AS (
      SELECT p.id AS account_id FROM principal p
       WHERE p.status = 'active' AND p.plan = ANY (${sql.array([...entitlements[iface]], 'text')})
    )`;
}

/** The refusals of authentication and charging: the MCP gateway answers these as protocol errors, not tool results. */
export const chargeRefusalCodes: ReadonlySet<string> = new Set([
  'authentication_required',
  'invalid_token',
  'account_inactive',
  'entitlement_required',
  'rate_limited',
  'monthly_limit_exceeded',
]);
