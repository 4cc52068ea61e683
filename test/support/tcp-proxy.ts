// A loopback TCP proxy in front of one server (the test Postgres), which a test stops and starts as
// if it were the server: stop() closes the listening port, so new connections are refused
// (ECONNREFUSED), and cuts every open connection; start() listens again on the same port and
// forwards to the server as before. Nothing in between understands the protocol: bytes pass as they are.
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';

/**
 * How stop() cuts the open connections: `reset` sends a TCP RST to the client (a host that dies,
 * node-postgres sees ECONNRESET); `close` ends them with a FIN (the server closing its end,
 * node-postgres sees "Connection terminated unexpectedly").
 */
export type CutMode = 'reset' | 'close';

export class TcpProxy {
  readonly #target: { host: string; port: number };
  #listener: Server | null = null;
  #port = 0;
  readonly #open = new Set<{ client: Socket; upstream: Socket }>();
  /** Connections accepted since construction (to show a test which ones were fresh). */
  accepted = 0;

  constructor(target: { host: string; port: number }) {
    this.#target = target;
  }

  /** The loopback port the proxy listens on (0 before the first start()). */
  get port(): number {
    return this.#port;
  }

  /** `url` (a postgres:// URL of the target) with the proxy's host and port instead. */
  urlThrough(url: string): string {
    const through = new URL(url);
    through.hostname = '127.0.0.1';
    through.port = String(this.#port);
    return through.toString();
  }

  /** Listens on loopback: a free port the first time, the same port after stop(). */
  async start(): Promise<void> {
    if (this.#listener) return;
    const listener = createServer((client) => this.#forward(client));
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen({ port: this.#port, host: '127.0.0.1', exclusive: true }, () => {
        listener.off('error', reject);
        resolve();
      });
    });
    this.#listener = listener;
    this.#port = (listener.address() as AddressInfo).port;
  }

  /** Stops listening (the port refuses connections until start()) and cuts every open connection. */
  async stop(mode: CutMode = 'reset'): Promise<void> {
    const listener = this.#listener;
    this.#listener = null;
    const closed = listener ? new Promise<void>((resolve) => listener.close(() => resolve())) : Promise.resolve();
    for (const pair of this.#open) this.#cut(pair, mode);
    await closed;
  }

  /** Stops for good. */
  async close(): Promise<void> {
    await this.stop('close');
  }

  #forward(client: Socket): void {
    this.accepted++;
    const upstream = connect({ host: this.#target.host, port: this.#target.port });
    const pair = { client, upstream };
    this.#open.add(pair);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      if (!this.#open.delete(pair)) return;
      client.destroy();
      upstream.destroy();
    };
    // Errors end the pair; they are expected here (that is what the proxy is for).
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  }

  #cut(pair: { client: Socket; upstream: Socket }, mode: CutMode): void {
    this.#open.delete(pair);
    pair.upstream.destroy();
    if (mode === 'reset') pair.client.resetAndDestroy();
    else pair.client.destroy();
  }
}
