// The queue in front of a lease (allowance-lease.ts, product-runtime/operation-leases.ts): the
// requests of one key (an account's allowance, an organization's month) pass one at a time, so a
// refill is one transaction for all of them, and the number waiting at that moment sizes the refill
// (a reservation never exceeds the requests waiting for it, which keeps the count exact).
export class ReservationQueue {
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly waiting = new Map<string, number>();

  /** How many requests of `key` are waiting to pass, the current one included (at least 1). */
  waitingFor(key: string): number {
    return Math.max(1, this.waiting.get(key) ?? 1);
  }

  /** Runs `work` after the requests of `key` queued before it; its failure fails only this request. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    this.waiting.set(key, (this.waiting.get(key) ?? 0) + 1);
    const previous = this.queues.get(key) ?? Promise.resolve();
    const run = previous.then(work).finally(() => {
      const left = (this.waiting.get(key) ?? 1) - 1;
      if (left > 0) this.waiting.set(key, left);
      else this.waiting.delete(key);
    });
    const settled = run.catch(() => undefined);
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return run;
  }

  /** Resolves once every request queued so far has passed. */
  async drain(): Promise<void> {
    await Promise.all([...this.queues.values()]);
  }
}
