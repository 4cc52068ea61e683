// Following a proposal without polling (decision 103): `GET /proposals/:id?changedFrom=S&wait=N`
// answers once the proposal is no longer in state S, or after N seconds, whichever comes first — a
// blocking read, as Consul's blocking queries or Kubernetes' watches give one. The wait hears the
// database's own announcement of every change of a proposal row (migration 0023, the console's
// channel) through the process's one LISTEN connection, and re-reads the state when its proposal is
// named; while that connection is down it reads every second instead. It is a bound, not a promise:
// the answer may come early (the process holds its most waits, or is shutting down), so the caller
// compares the state it gets and asks again.
import type { NotificationListener } from '../../db/notification-listener.ts';
import { parseProposalChange } from '../console/live.ts';

/** The longest wait a request may ask for: below every proxy's idle timeout we know of (60 s). */
export const PROPOSAL_WAIT_MAX_SECONDS = 30;
/** Without a listening connection the state is read this often. */
const FALLBACK_POLL_MS = 1_000;

export class ProposalWaits {
  readonly #listener: NotificationListener | null;
  readonly #max: number;
  readonly #open = new Set<() => void>();

  /** `listener` null: this process hears no announcements, and every wait reads once a second. */
  constructor(listener: NotificationListener | null, max: number) {
    this.#listener = listener;
    this.#max = max;
  }

  get size(): number {
    return this.#open.size;
  }

  /**
   * Reads the proposal with `read` until `changed` says the result is not what the caller last saw,
   * and answers that result; after `waitMs`, when the process closes, or at once when it holds its
   * most waits, answers a read made then. Listens before its first read, so a change committed
   * between the caller's last read and this one is never missed, and reads again only when the
   * proposal is named (or each second while the connection is down). A read that fails (the reader
   * lost access) fails the wait with its error. Every answer is a read: authorized when it was made.
   */
  follow<R>(proposalId: string, waitMs: number, read: () => Promise<R>, changed: (result: R) => boolean): Promise<R> {
    if (this.#open.size >= this.#max) return read();
    return new Promise<R>((resolve, reject) => {
      let done = false;
      let reading = false;
      let readAgain = false;
      let poll: NodeJS.Timeout | null = null;
      let unsubscribe = () => {};
      const stopPolling = () => {
        if (poll) clearInterval(poll);
        poll = null;
      };
      const settle = (answer: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        stopPolling();
        unsubscribe();
        this.#open.delete(expire);
        answer();
      };
      // Over without a change: the answer is read now.
      const expire = () => settle(() => void read().then(resolve, reject));
      // One read at a time; announcements that come during a read ask for one more.
      const check = () => {
        if (done) return;
        if (reading) {
          readAgain = true;
          return;
        }
        reading = true;
        read().then(
          (result) => {
            reading = false;
            if (done) return;
            if (changed(result)) settle(() => resolve(result));
            else if (readAgain) {
              readAgain = false;
              check();
            }
          },
          (error: unknown) => settle(() => reject(error as Error)),
        );
      };
      const startPolling = () => {
        poll ??= setInterval(check, FALLBACK_POLL_MS);
      };
      const timer = setTimeout(expire, waitMs);
      this.#open.add(expire);
      if (this.#listener) {
        startPolling(); // until the connection says it is listening (at once when it already is)
        try {
          unsubscribe = this.#listener.subscribe({
            notify: (payload) => {
              if (parseProposalChange(payload)?.id === proposalId) check();
            },
            // Listening (again): anything announced before may have been missed, so read.
            listening: () => {
              stopPolling();
              check();
            },
            lost: startPolling,
          });
        } catch (error) {
          // A stopped listener (the app is closing) refuses: the wait ends, its timer and poll with it.
          settle(() => reject(error as Error));
        }
      } else {
        startPolling();
      }
      // The first read, unless subscribing to a connection already listening made it.
      if (!reading) check();
    });
  }

  /** Ends every wait now (the process is closing): each request answers the state it reads. */
  endAll(): void {
    for (const expire of [...this.#open]) expire();
  }
}
