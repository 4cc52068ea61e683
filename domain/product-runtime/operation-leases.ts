// The product organization's `apiOperationsPerMonth`, counted through leases like the REST and MCP
// allowances (allowance-lease.ts): counting every runtime operation on the organization's one row
// serialised all its installations on that row's lock (bench: the runtime read at a third of the
// REST read's throughput). An API process reserves, in one transaction, as many operations as
// requests of the organization are waiting at that moment, then hands them out in memory. A
// reservation never exceeds the requests waiting for it, so no process overshoots and the count in
// Postgres is what was served; a reservation left over (a crash between reserving and serving, a
// month boundary) is given back. Only admitted requests reach here, so refusals count nothing.
import { sql } from 'slonik';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { emptyRow } from '../../db/row-schemas.ts';
import { AppError } from '../errors.ts';
import { ReservationQueue } from '../reservation-queue.ts';

/** The organization's month after a charged operation (published as RateLimit fields). */
export type OperationsUsage = { limit: number; used: number; resetsAt: string };

type Lease = { monthStart: string; available: number; used: number };

/** The largest reservation: bounds what a crashed process can leave counted but unserved. */
const MAX_BLOCK = 64;

const reservedSchema = z.object({ monthStart: z.string(), count: z.number(), usedBefore: z.number() });

const nextMonth = (monthStart: string) => {
  const d = new Date(monthStart);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();
};
const currentMonthStart = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
};

export class OperationLeases {
  private readonly leases = new Map<string, Lease>();
  private readonly queue = new ReservationQueue();
  private readonly db: DatabasePool;

  constructor(db: DatabasePool) {
    this.db = db;
  }

  /** Counts one operation of the organization's month, or throws 429 organization_quota_exhausted and counts nothing. */
  charge(organizationId: string, limit: number): Promise<OperationsUsage> {
    return this.queue.run(organizationId, () => this.take(organizationId, limit));
  }

  private async take(organizationId: string, limit: number): Promise<OperationsUsage> {
    let lease = this.leases.get(organizationId);
    if (lease && Date.parse(lease.monthStart) !== Date.parse(currentMonthStart())) {
      if (lease.available > 0) await this.giveBack(organizationId, lease.monthStart, lease.available);
      this.leases.delete(organizationId);
      lease = undefined;
    }
    if (!lease || lease.available === 0) {
      const want = Math.min(MAX_BLOCK, this.queue.waitingFor(organizationId));
      const granted = await this.reserve(organizationId, want, limit);
      if (granted.count === 0) {
        const resetsAt = nextMonth(granted.monthStart);
        throw new AppError('organization_quota_exhausted', `The organization's ${limit} API operations for this month are used up.`, {
          extensions: { limit, resetsAt },
          headers: { 'retry-after': String(Math.max(1, Math.ceil((Date.parse(resetsAt) - Date.now()) / 1000))) },
        });
      }
      lease = { monthStart: granted.monthStart, available: granted.count, used: granted.usedBefore };
      this.leases.set(organizationId, lease);
    }
    lease.available -= 1;
    lease.used += 1;
    return { limit, used: lease.used, resetsAt: nextMonth(lease.monthStart) };
  }

  /**
   * Reserves up to `want` operations of this month, atomically; returns how many. One statement, as
   * allowance-lease.ts reserves (the grant computed from the locked row, kept in `last_granted` for
   * RETURNING; no WAL-flush wait on this hot row's commit).
   */
  private async reserve(organizationId: string, want: number, limit: number) {
    const month = sql.fragment`date_trunc('month', now(), 'UTC')`;
    const used = sql.fragment`CASE WHEN u.month_start = ${month} THEN u.used ELSE 0 END`;
    const grant = sql.fragment`greatest(0, least(${want}::int, ${limit}::int - ${used}))`;
    return this.db.one(sql.prepared('operations_reserve', reservedSchema)`
      WITH settings AS (SELECT set_config('synchronous_commit', 'off', true) AS applied)
      INSERT INTO organization_api_usage AS u (organization_id, month_start, used, last_granted)
      SELECT ${organizationId}, ${month}, g.granted, g.granted
        FROM settings, (SELECT greatest(0, least(${want}::int, ${limit}::int)) AS granted) g
      ON CONFLICT (organization_id) DO UPDATE
         SET month_start = ${month}, used = ${used} + ${grant}, last_granted = ${grant}
      RETURNING to_char(${month} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "monthStart",
                u.last_granted AS count, u.used - u.last_granted AS "usedBefore"`);
  }

  private async giveBack(organizationId: string, monthStart: string, unused: number): Promise<void> {
    await this.db.query(sql.type(emptyRow)`
      UPDATE organization_api_usage SET used = greatest(0, used - ${unused})
       WHERE organization_id = ${organizationId} AND month_start = ${monthStart}::timestamptz`);
  }

  /** Returns every unused reservation (on shutdown). */
  async releaseAll(): Promise<void> {
    await this.queue.drain();
    for (const [organizationId, lease] of this.leases) {
      if (lease.available > 0) await this.giveBack(organizationId, lease.monthStart, lease.available);
    }
    this.leases.clear();
  }
}
