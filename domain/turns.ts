// Turns per key, the mechanism of a process's group commits (decisions 93 and 108): at most one
// run per key at a time; what arrives while one runs waits, and the next run takes all of it (up
// to a count and a size, always at least one). A run costs what it did for one item, and concurrent
// items of one key share one. The queue lives only as long as the items waiting in it.

export type TurnLimits = { readonly maxItems: number; readonly maxBytes: number };

/** An item of a turn: its size, and how to fail it should its run throw. */
export type TurnItem = { bytes: number; reject: (error: unknown) => void };

export class Turns<W extends TurnItem> {
  readonly #limits: TurnLimits;
  /** Settles every item of the batch it is given (a throw rejects those it left unsettled). */
  readonly #run: (key: string, batch: W[]) => Promise<void>;
  /** Per key: the items waiting for the run after the current one. */
  readonly #waiting = new Map<string, W[]>();

  constructor(limits: TurnLimits, run: (key: string, batch: W[]) => Promise<void>) {
    this.#limits = limits;
    this.#run = run;
  }

  /** The item runs in its key's next turn: now, when none is running. */
  add(key: string, item: W): void {
    const queue = this.#waiting.get(key);
    if (queue) return void queue.push(item);
    this.#waiting.set(key, []);
    void this.#turns(key, [item]);
  }

  async #turns(key: string, batch: W[]): Promise<void> {
    for (;;) {
      await this.#run(key, batch).catch((error: unknown) => batch.forEach((w) => w.reject(error)));
      const queue = this.#waiting.get(key)!;
      if (queue.length === 0) {
        this.#waiting.delete(key);
        return;
      }
      batch = takeTurn(queue, this.#limits);
    }
  }
}

/** Takes the first items of the queue that fit one run (at least one) out of it, in arrival order. */
export function takeTurn<W extends { bytes: number }>(queue: W[], limits: TurnLimits): W[] {
  let bytes = 0;
  let n = 0;
  while (n < queue.length && n < limits.maxItems && (n === 0 || bytes + queue[n]!.bytes <= limits.maxBytes)) {
    bytes += queue[n]!.bytes;
    n++;
  }
  return queue.splice(0, n);
}
