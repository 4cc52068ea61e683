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

const reservedSchema = z.object({ monthStart: z.string(), count: z.number(), monthUsedBefore: z.number(), minuteUsedBefore: z.number() });

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

  /**
   * Reserves up to `want` requests of this minute and month, atomically; returns how many. One
   * statement, one round trip (it was a transaction of six): the upsert locks the account's row and
   * computes the grant from the locked version (a concurrent reservation's commit included), and
   * stores it in `last_granted` so RETURNING can give the counts before it. The counter row is hot:
   * its commit need not wait for a WAL flush (`synchronous_commit` off for this statement's own
   * transaction). A Postgres crash can then forget the last moments' reservations (a few requests
   * uncounted), never serve one unreserved.
   */
  private async reserve(accountId: string, iface: keyof Allowances, want: number, monthLimit: number, minuteLimit: number) {
    const month = sql.fragment`date_trunc('month', now(), 'UTC')`;
    const minute = sql.fragment`date_trunc('minute', now())`;
    const monthUsed = sql.fragment`CASE WHEN c.month_start = ${month} THEN c.month_count ELSE 0 END`;
    const minuteUsed = sql.fragment`CASE WHEN c.minute_start = ${minute} THEN c.minute_count ELSE 0 END`;
    const grant = sql.fragment`greatest(0, least(${want}::int, ${monthLimit}::int - ${monthUsed}, ${minuteLimit}::int - ${minuteUsed}))`;
    const row = await this.db.one(sql.prepared('allowance_reserve', reservedSchema)`
      WITH settings AS (SELECT set_config('synchronous_commit', 'off', true) AS applied)
      INSERT INTO usage_counters AS c (account_id, interface, month_start, month_count, minute_start, minute_count, last_granted)
      SELECT ${accountId}, ${iface}, ${month}, g.granted, ${minute}, g.granted, g.granted
        FROM settings, (SELECT greatest(0, least(${want}::int, ${monthLimit}::int, ${minuteLimit}::int)) AS granted) g
      ON CONFLICT (account_id, interface) DO UPDATE
         SET month_start = ${month}, month_count = ${monthUsed} + ${grant},
             minute_start = ${minute}, minute_count = ${minuteUsed} + ${grant},
             last_granted = ${grant}
      RETURNING ${month} AS "monthStart", c.last_granted AS count,
                c.month_count - c.last_granted AS "monthUsedBefore", c.minute_count - c.last_granted AS "minuteUsedBefore"`);
    return row;
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
