// Allowance leases, for every allowance (REST, MCP). Counting every request on one Postgres row
// serialises an account's requests on that row's lock (bench/README.md: it cost the single-note
// read a fifth of its throughput). Instead, an API process reserves requests atomically in Postgres
// for all of an account's requests that are waiting at that moment (one row lock for the lot), then
// hands them out in memory. Nothing is served without a reservation, so no process can overshoot,
// and a reservation is never larger than the requests waiting for it, so the count in Postgres is
// what was served. (Were a reservation left over — it cannot be by construction, but a crash
// between reserving and serving could — it is given back at the next minute or on shutdown.)
import { sql } from 'slonik';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Entitlements, Plan } from './identity/plans.ts';
import { refusal } from './usage.ts';
import type { Allowances, UsageSnapshot } from './usage.ts';
import { emptyRow } from '../db/row-schemas.ts';
import { ReservationQueue } from './reservation-queue.ts';

/** A reservation being handed out: `available` of it left, taken in `minute` of the month starting `monthStart`. */
type Lease = { minute: number; monthStart: string; available: number; monthUsed: number; minuteUsed: number };

/** The largest reservation: bounds what a crashed process can leave counted but unserved. */
const MAX_BLOCK = 64;

const rowSchema = z.object({ monthStart: z.string(), sameMonth: z.boolean(), monthCount: z.number(), sameMinute: z.boolean(), minuteCount: z.number() });

export class AllowanceLeases {
  private readonly leases = new Map<string, Lease>();
  /** One account's requests pass the lease one at a time; their number sizes the next reservation. */
  private readonly queue = new ReservationQueue();
  private readonly db: DatabasePool;
  private readonly allowances: Allowances;
  /**
   * The plans table the app was built with (which plans include each interface). Admission judges
   * by it (domain/principals/admission.ts); it travels with the leases so that every admission of
   * the app, the fused read's included, judges by the same table.
   */
  readonly entitlements: Entitlements;

  constructor(db: DatabasePool, allowances: Allowances, entitlements: Entitlements) {
    this.db = db;
    this.allowances = allowances;
    this.entitlements = entitlements;
  }

  /** Counts one request, or throws 429 (rate_limited / monthly_limit_exceeded) and counts nothing. */
  charge(account: { id: string; plan: Plan }, iface: keyof Allowances): Promise<UsageSnapshot> {
    const key = `${iface}:${account.id}`;
    return this.queue.run(key, () => this.take(key, account, iface));
  }

  private async take(key: string, account: { id: string; plan: Plan }, iface: keyof Allowances): Promise<UsageSnapshot> {
    const monthLimit = this.allowances[iface].perMonth[account.plan] ?? 0;
    const minuteLimit = this.allowances[iface].perMinute;
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    let lease = this.leases.get(key);
    if (lease && lease.minute !== minute) {
      if (lease.available > 0) await this.giveBack(account.id, iface, lease.monthStart, lease.available);
      this.leases.delete(key);
      lease = undefined;
    }
    if (!lease || lease.available === 0) {
      const want = Math.min(MAX_BLOCK, this.queue.waitingFor(key));
      const granted = await this.reserve(account.id, iface, want, monthLimit, minuteLimit);
      if (granted.count === 0) throw await refusal(this.db, account.id, account.plan, iface, monthLimit, minuteLimit);
      lease = { minute, monthStart: granted.monthStart, available: granted.count, monthUsed: granted.monthUsedBefore, minuteUsed: granted.minuteUsedBefore };
      this.leases.set(key, lease);
    }
    lease.available -= 1;
    lease.monthUsed += 1;
    lease.minuteUsed += 1;
    return { monthLimit, monthUsed: lease.monthUsed, minuteLimit, minuteUsed: lease.minuteUsed };
  }

  /** Reserves up to `want` requests of this minute and month, atomically; returns how many. */
  private async reserve(accountId: string, iface: keyof Allowances, want: number, monthLimit: number, minuteLimit: number) {
    return this.db.transaction(async (tx) => {
      // The counter row is hot: its commits need not wait for a WAL flush. A Postgres crash can then
      // forget the last moments' reservations (a few requests uncounted), never serve one unreserved.
      await tx.query(sql.type(emptyRow)`SELECT set_config('synchronous_commit', 'off', true)`);
      await tx.query(sql.type(emptyRow)`
        INSERT INTO usage_counters (account_id, interface, month_start, month_count, minute_start, minute_count)
        VALUES (${accountId}, ${iface}, date_trunc('month', now(), 'UTC'), 0, date_trunc('minute', now()), 0)
        ON CONFLICT (account_id, interface) DO NOTHING`);
      const row = await tx.one(sql.type(rowSchema)`
        SELECT date_trunc('month', now(), 'UTC') AS "monthStart",
               month_start = date_trunc('month', now(), 'UTC') AS "sameMonth", month_count AS "monthCount",
               minute_start = date_trunc('minute', now()) AS "sameMinute", minute_count AS "minuteCount"
          FROM usage_counters WHERE account_id = ${accountId} AND interface = ${iface}
           FOR UPDATE`);
      const monthUsed = row.sameMonth ? row.monthCount : 0;
      const minuteUsed = row.sameMinute ? row.minuteCount : 0;
      const count = Math.max(0, Math.min(want, monthLimit - monthUsed, minuteLimit - minuteUsed));
      if (count > 0) {
        await tx.query(sql.type(emptyRow)`
          UPDATE usage_counters
             SET month_start = date_trunc('month', now(), 'UTC'), month_count = ${monthUsed + count},
                 minute_start = date_trunc('minute', now()), minute_count = ${minuteUsed + count}
           WHERE account_id = ${accountId} AND interface = ${iface}`);
      }
      return { count, monthStart: row.monthStart, monthUsedBefore: monthUsed, minuteUsedBefore: minuteUsed };
    });
  }

  private async giveBack(accountId: string, iface: keyof Allowances, monthStart: string, unused: number): Promise<void> {
    await this.db.query(sql.type(emptyRow)`
      UPDATE usage_counters SET month_count = greatest(0, month_count - ${unused})
       WHERE account_id = ${accountId} AND interface = ${iface} AND month_start = ${monthStart}::timestamptz`);
  }

  /** Returns every unused reservation (on shutdown). */
  async releaseAll(): Promise<void> {
    await this.queue.drain();
    for (const [key, lease] of this.leases) {
      const [iface, accountId] = key.split(':') as [keyof Allowances, string];
      if (lease.available > 0) await this.giveBack(accountId, iface, lease.monthStart, lease.available);
    }
    this.leases.clear();
  }
}
