// A loopback TCP proxy in front of Postgres that counts what its clients send, at the wire
// (bench/capacity.ts puts one between each process under test and the server). It forwards bytes
// as they are (like test/support/tcp-proxy.ts, which it started from) and reads the frontend stream
// of every connection on the side:
//   - the first message has no type byte (int32 length, int32 code): the startup packet, or an
//     SSLRequest / GSSENCRequest, after which the real startup packet follows (this proxy is for
//     plain loopback connections: were SSL accepted, the rest would not be readable);
//   - then every message is one type byte and an int32 length that counts itself, not the type.
// Counted: `Q` (a simple query), `P` (Parse), `E` (Execute) and `S` (Sync). Statements are Q + E
// (a simple query carrying several statements separated by `;` counts once); round trips are S + Q,
// each of which waits for the server's ReadyForQuery. Bytes are counted both ways.
// It also remembers the local port of every upstream socket, which is the `client_port` the server
// sees for that connection (pg_stat_activity), so a backend can be attributed to its client process.
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';

export type WireCounts = {
  /** Client connections accepted. */
  connections: number;
  /** `Q` messages (simple protocol). */
  simpleQueries: number;
  /** `P` messages (statements parsed; a named prepared statement is parsed once per connection). */
  parses: number;
  /** `E` messages (extended protocol). */
  executes: number;
  /** `S` messages (the end of an extended-protocol exchange). */
  syncs: number;
  /** Bytes the clients sent to Postgres. */
  bytesToServer: number;
  /** Bytes Postgres sent to the clients. */
  bytesFromServer: number;
};

export const statementsOf = (c: WireCounts): number => c.simpleQueries + c.executes;
export const roundTripsOf = (c: WireCounts): number => c.simpleQueries + c.syncs;

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** Reads one connection's frontend stream, message by message, across chunk boundaries. */
class FrontendParser {
  #startup = true;
  /** Header bytes of the message being read (at most 8 in the startup phase, 5 after). */
  #header = Buffer.alloc(8);
  #headerLength = 0;
  /** Body bytes still to skip (or, for a message whose text is captured, to collect) of the current message. */
  #skip = 0;
  #type = '';
  #body: Buffer[] | null = null;
  readonly #counts: WireCounts;
  /** With capture on: the text of each statement prepared on this connection, by name ('' is the unnamed one). */
  readonly #prepared: Map<string, string> | null;
  #bound = '';
  readonly #onStatement: ((text: string) => void) | null;

  constructor(counts: WireCounts, onStatement: ((text: string) => void) | null) {
    this.#counts = counts;
    this.#onStatement = onStatement;
    this.#prepared = onStatement ? new Map() : null;
  }

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, chunk.length - at);
        this.#body?.push(chunk.subarray(at, at + n));
        this.#skip -= n;
        at += n;
        if (this.#skip === 0 && this.#body) this.#captured();
        continue;
      }
      const wanted = this.#startup ? 8 : 5;
      const n = Math.min(wanted - this.#headerLength, chunk.length - at);
      chunk.copy(this.#header, this.#headerLength, at, at + n);
      this.#headerLength += n;
      at += n;
      if (this.#headerLength < wanted) return;
      this.#headerLength = 0;
      if (this.#startup) {
        // int32 length (itself included), int32 code; an SSL or GSS request is followed by the real startup packet.
        const length = this.#header.readInt32BE(0);
        const code = this.#header.readInt32BE(4);
        this.#skip = length - 8;
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) this.#startup = false;
        continue;
      }
      const type = String.fromCharCode(this.#header[0]!);
      this.#type = type;
      this.#skip = this.#header.readInt32BE(1) - 4;
      if (type === 'Q') this.#counts.simpleQueries++;
      else if (type === 'P') this.#counts.parses++;
      else if (type === 'E') {
        this.#counts.executes++;
        this.#onStatement?.(this.#bound);
      } else if (type === 'S') this.#counts.syncs++;
      // The text of what runs: a simple query's, a Parse's (by name), a Bind's statement name.
      this.#body = this.#prepared && (type === 'Q' || type === 'P' || type === 'B') ? [] : null;
      if (this.#skip === 0 && this.#body) this.#captured();
    }
  }

  #captured(): void {
    const body = Buffer.concat(this.#body!);
    this.#body = null;
    const cstring = (from: number): [string, number] => {
      const end = body.indexOf(0, from);
      return [body.toString('utf8', from, end < 0 ? body.length : end), end + 1];
    };
    if (this.#type === 'Q') this.#onStatement!(cstring(0)[0]);
    else if (this.#type === 'P') {
      const [name, next] = cstring(0);
      this.#prepared!.set(name, cstring(next)[0]);
    } else {
      const [, next] = cstring(0);
      this.#bound = this.#prepared!.get(cstring(next)[0]) ?? '?';
    }
  }
}

export class PgWireCounter {
  readonly #target: { host: string; port: number };
  #listener: Server | null = null;
  readonly #open = new Set<Socket>();
  readonly #counts: WireCounts = { connections: 0, simpleQueries: 0, parses: 0, executes: 0, syncs: 0, bytesToServer: 0, bytesFromServer: 0 };
  /** With capture on (`captureStatements`): how many times each statement text ran (normalised, cut at 160 characters). */
  readonly statements = new Map<string, number>();
  #capture = false;
  /** Local ports of the upstream sockets ever opened: the server's `client_port` for each of this proxy's connections. */
  readonly upstreamPorts = new Set<number>();
  port = 0;

  constructor(target: { host: string; port: number }) {
    this.#target = target;
  }

  /** A postgres:// URL of the target with this proxy's host and port instead. */
  urlThrough(url: string): string {
    const through = new URL(url);
    through.hostname = '127.0.0.1';
    through.port = String(this.port);
    return through.toString();
  }

  async start(): Promise<this> {
    const listener = createServer((client) => this.#forward(client));
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen({ port: 0, host: '127.0.0.1' }, () => resolve());
    });
    this.#listener = listener;
    this.port = (listener.address() as AddressInfo).port;
    return this;
  }

  /** Records the text of every statement from now on (for the connections opened from now on). */
  captureStatements(): this {
    this.#capture = true;
    return this;
  }

  /** The counts so far (a copy). */
  counts(): WireCounts {
    return { ...this.#counts };
  }

  async close(): Promise<void> {
    const listener = this.#listener;
    this.#listener = null;
    for (const socket of this.#open) socket.destroy();
    if (listener) await new Promise<void>((resolve) => listener.close(() => resolve()));
  }

  #forward(client: Socket): void {
    this.#counts.connections++;
    const record = (text: string) => {
      const key = text.replace(/\s+/g, ' ').trim().slice(0, 160);
      this.statements.set(key, (this.statements.get(key) ?? 0) + 1);
    };
    const parser = new FrontendParser(this.#counts, this.#capture ? record : null);
    const upstream = connect({ host: this.#target.host, port: this.#target.port });
    upstream.once('connect', () => {
      if (upstream.localPort !== undefined) this.upstreamPorts.add(upstream.localPort);
    });
    this.#open.add(client).add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    // A 'data' listener beside pipe() sees every chunk pipe() forwards (and its back-pressure pauses both).
    client.on('data', (chunk: Buffer) => {
      this.#counts.bytesToServer += chunk.length;
      parser.push(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      this.#counts.bytesFromServer += chunk.length;
    });
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      this.#open.delete(client);
      this.#open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  }
}
