// Outbound HTTP for webhooks with SSRF protection. Only public unicast addresses are reachable,
// unless a host or address is on the explicit allow-list (tests name 127.0.0.1). The check runs at
// endpoint creation and again inside the connection's own DNS lookup on every delivery, so the
// address that was checked is the address connected to (no DNS-rebinding gap). No redirects are
// followed, the response body is capped and the whole exchange has a deadline.
import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import { AppError } from '../errors.ts';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 96], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['2002::', 16], ['fec0::', 10], ['100::', 64], ['2001::', 23], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) blocked.addSubnet(net, prefix, 'ipv6');
// IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as its IPv4 address in addressProblem: a ::ffff:0:0/96
// rule here would also match every plain IPv4 address (BlockList maps them).

export type EgressPolicy = { allowList: readonly string[] };

/** Why an address may not be connected to, or null. IPv4-mapped IPv6 is judged as its IPv4. */
export function addressProblem(address: string, policy: EgressPolicy): string | null {
  if (policy.allowList.includes(address)) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  if (mapped) return policy.allowList.includes(mapped[1]!) ? null : blocked.check(mapped[1]!, 'ipv4') ? `${address} is a private or reserved address` : null;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6') ? `${address} is a private or reserved address` : null;
}

function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));
}

/** Checks a webhook URL: http(s), no credentials, and every address it resolves to is allowed. */
export async function checkWebhookUrl(raw: string, policy: EgressPolicy): Promise<URL> {
  const url = URL.parse(raw);
  const refuse = (reason: string) => new AppError('invalid_request', `The webhook URL is not allowed: ${reason}.`, { extensions: { errors: [{ pointer: '/body/url', message: reason, code: 'url_not_allowed' }] } });
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw refuse('it must be an http(s) URL');
  if (url.username || url.password) throw refuse('it must not carry credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (policy.allowList.includes(host)) return url;
  if (url.protocol === 'http:' && !isIP(host)) throw refuse('plain http is only allowed for allow-listed hosts');
  let addresses: LookupAddress[];
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolveAll(host);
  } catch {
    throw refuse(`${host} does not resolve`);
  }
  for (const a of addresses) {
    const problem = addressProblem(a.address, policy);
    if (problem) throw refuse(problem);
  }
  if (url.protocol === 'http:') throw refuse('plain http is only allowed for allow-listed hosts');
  return url;
}

export type DeliveryResponse = { status: number; body: string; durationMs: number };

/**
 * The connection's DNS lookup for `url` under `policy`: it refuses disallowed addresses itself, so
 * the address checked is the address connected to. `refusal`: why the URL itself may not be fetched
 * before any lookup (checkWebhookUrl's rules: not http(s), credentials, a refused IP literal, plain
 * http to a host not allow-listed), or null.
 */
function guardedConnection(url: URL, policy: EgressPolicy): { lookup: NonNullable<http.RequestOptions['lookup']>; refusal: Error | null } {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const hostAllowed = policy.allowList.includes(host);
  const lookup: NonNullable<http.RequestOptions['lookup']> = (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { ...lookupOptions, all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const list = addresses as LookupAddress[];
      const refused = hostAllowed ? null : list.map((a) => addressProblem(a.address, policy)).find((p) => p);
      if (refused) return callback(Object.assign(new Error(`refused: ${refused}`), { code: 'EGRESS_REFUSED' }), '', 4);
      if ((lookupOptions as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
  const problem = !hostAllowed && isIP(host) ? addressProblem(host, policy) : null;
  // Plain http only to an allow-listed host, as for webhook URLs.
  const insecure = !hostAllowed && url.protocol !== 'https:' ? 'plain http is only allowed for allow-listed hosts' : null;
  const reason = url.protocol !== 'https:' && url.protocol !== 'http:' ? 'not an http(s) URL' : url.username || url.password ? 'the URL carries credentials' : (problem ?? insecure);
  return { lookup, refusal: reason ? Object.assign(new Error(`refused: ${reason}`), { code: 'EGRESS_REFUSED' }) : null };
}

/**
 * GETs the bytes at `url` under the same rules as a webhook delivery (SSRF-checked connection, no
 * redirects, an absolute deadline) and a size cap: a body over `maxBytes` (declared or streamed) is
 * refused, never truncated. Throws with a `code` (EGRESS_REFUSED, HTTP_STATUS, TOO_LARGE,
 * ETIMEDOUT, ABORTED or the socket's) on anything but a whole 200 answer.
 */
export function getBytes(url: URL, policy: EgressPolicy, options: { timeoutMs: number; maxBytes: number; signal?: AbortSignal }): Promise<{ bytes: Buffer; contentType: string | null }> {
  const { lookup, refusal } = guardedConnection(url, policy);
  const fail = (code: string, message: string) => Object.assign(new Error(message), { code });
  return new Promise((resolve, reject) => {
    if (refusal) return reject(refusal);
    if (options.signal?.aborted) return reject(fail('ABORTED', 'aborted'));
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, { method: 'GET', lookup, timeout: options.timeoutMs, agent: false, ...(options.signal ? { signal: options.signal } : {}) }, (response) => {
      const status = response.statusCode ?? 0;
      const declared = Number(response.headers['content-length']);
      if (status !== 200) return request.destroy(fail('HTTP_STATUS', `answered HTTP ${status}`));
      if (Number.isFinite(declared) && declared > options.maxBytes) return request.destroy(fail('TOO_LARGE', `declares ${declared} bytes`));
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) request.destroy(fail('TOO_LARGE', `more than ${options.maxBytes} bytes`));
        else chunks.push(chunk);
      });
      response.on('end', () => resolve({ bytes: Buffer.concat(chunks), contentType: response.headers['content-type'] ?? null }));
      response.on('error', reject);
    });
    const deadline = setTimeout(() => request.destroy(fail('ETIMEDOUT', `timed out after ${options.timeoutMs} ms`)), options.timeoutMs);
    request.on('close', () => clearTimeout(deadline));
    request.on('error', (error: Error & { code?: string }) => reject(options.signal?.aborted ? fail('ABORTED', 'aborted') : error));
    request.end();
  });
}

/**
 * POSTs `body` with `headers`, refused like getBytes (guardedConnection) before and during the connection.
 * Throws on network failure, refusal or timeout; returns any HTTP status (3xx included: no redirects).
 */
export function postJson(url: URL, body: string, headers: Record<string, string>, policy: EgressPolicy, options: { timeoutMs?: number; maxResponseBytes?: number } = {}): Promise<DeliveryResponse> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxBytes = options.maxResponseBytes ?? 64 * 1024;
  const started = performance.now();
  const { lookup, refusal } = guardedConnection(url, policy);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    if (refusal) return reject(refusal);
    const request = client.request(
      url,
      { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, lookup, timeout: timeoutMs, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= maxBytes) chunks.push(chunk);
          else response.destroy();
        });
        response.on('close', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, maxBytes), durationMs: Math.round(performance.now() - started) }));
      },
    );
    // An absolute deadline: a receiver trickling bytes cannot hold a delivery open.
    const deadline = setTimeout(() => request.destroy(Object.assign(new Error(`timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs);
    request.on('close', () => clearTimeout(deadline));
    request.on('error', reject);
    request.end(body);
  });
}
