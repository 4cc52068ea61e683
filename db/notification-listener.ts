// One Postgres connection of its own that LISTENs to a channel and hands each notification to the
// process's subscribers (the reviewer console's live streams, decision 98). Notifications reach
// every process that listens, so any number of API processes may serve streams; nothing is kept in
// memory but who is subscribed here.
//
// Not through slonik: LISTEN needs a connection held for the process's life and slonik has no API
// for notifications, so this is a plain `pg` client. It must be a session connection (a transaction
// pooler such as pgbouncer in transaction mode does not deliver notifications): the URL may differ
// from the pool's. Whenever the connection is lost it is made again with backoff, and each
// subscriber is told to resynchronise once it is back (a notification sent meanwhile was missed).
import pg from 'pg';

export type NotificationSubscriber = {
  /** A notification's payload, as sent. */
  notify: (payload: string) => void;
  /** Listening (again): notifications from now on reach `notify`; anything before may have been missed. */
  listening: () => void;
  /** The connection was lost: nothing reaches `notify` until `listening` is called again. */
  lost: () => void;
};

type Log = { warn: (obj: object, msg: string) => void; info: (obj: object, msg: string) => void };

const BACKOFF_MS = [250, 500, 1_000, 2_000, 5_000];
/** How long a connection attempt may take before it is abandoned and tried again. */
const CONNECT_TIMEOUT_MS = 5_000;
/** A channel name is an identifier in the LISTEN statement: only these characters, never a caller's text. */
const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export class NotificationListener {
  readonly #connectionUri: () => string;
  readonly #channel: string;
  readonly #log: Log;
  readonly #subscribers = new Set<NotificationSubscriber>();
  #client: pg.Client | null = null;
  #listening = false;
  #started = false;
  #stopped = false;
  #attempt = 0;
  #retry: NodeJS.Timeout | null = null;

  /** `connectionUri` is read when the connection is first made (an app built only for its OpenAPI document never makes it). */
  constructor(connectionUri: () => string, channel: string, log: Log) {
    if (!CHANNEL_NAME.test(channel)) throw new TypeError(`not a channel name: ${channel}`);
    this.#connectionUri = connectionUri;
    this.#channel = channel;
    this.#log = log;
  }

  /** Whether notifications reach the subscribers now. */
  get listening(): boolean {
    return this.#listening;
  }

  /** Listening, or not needed yet (nobody subscribed): what an operator's gauge shows as up. */
  get healthy(): boolean {
    return this.#listening || this.#subscribers.size === 0;
  }

  /**
   * Adds a subscriber; the connection is made on the first one (a process that never serves a
   * stream holds none). `listening` is called at once when already listening, else once it is.
   */
  subscribe(subscriber: NotificationSubscriber): () => void {
    if (this.#stopped) throw new Error('the notification listener is stopped');
    this.#subscribers.add(subscriber);
    if (!this.#started) {
      this.#started = true;
      void this.#connect();
    } else if (this.#listening) {
      subscriber.listening();
    }
    return () => {
      this.#subscribers.delete(subscriber);
    };
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#listening = false;
    if (this.#retry) clearTimeout(this.#retry);
    this.#subscribers.clear();
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    if (this.#stopped) return;
    let client: pg.Client;
    try {
      client = new pg.Client({ connectionString: this.#connectionUri(), connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: 'hnp-notifications' });
    } catch (error) {
      // A URL pg cannot read: said once; the streams stay open without events and their pages poll.
      this.#log.warn({ channel: this.#channel, err: { message: error instanceof Error ? error.message : String(error) } }, 'notification listener cannot connect: its database URL was refused');
      return;
    }
    this.#client = client;
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost || this.#stopped) return;
      lost = true;
      const wasListening = this.#listening;
      this.#listening = false;
      if (wasListening) for (const subscriber of this.#subscribers) subscriber.lost();
      if (this.#client === client) this.#client = null;
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      const delay = BACKOFF_MS[Math.min(this.#attempt, BACKOFF_MS.length - 1)]!;
      this.#attempt += 1;
      this.#log.warn({ channel: this.#channel, retryInMs: delay, err: error ? { message: error.message } : undefined }, 'notification listener lost its connection; listening again shortly');
      this.#retry = setTimeout(() => {
        this.#retry = null;
        void this.#connect();
      }, delay);
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel !== this.#channel || message.payload === undefined) return;
      for (const subscriber of this.#subscribers) subscriber.notify(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.#channel}`);
    } catch (error) {
      onLost(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (this.#stopped || lost) {
      await client.end().catch(() => undefined);
      return;
    }
    if (this.#attempt > 0) this.#log.info({ channel: this.#channel }, 'notification listener is listening again');
    this.#attempt = 0;
    this.#listening = true;
    for (const subscriber of this.#subscribers) subscriber.listening();
  }
}
