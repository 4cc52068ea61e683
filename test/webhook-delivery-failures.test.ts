// A failed webhook delivery is recorded with a stable code and a short message of ours, never the
// raw network or TLS error text. Real sockets on loopback: a TLS receiver with an untrusted
// certificate, a closed port, a receiver that resets the connection.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson } from '../domain/automation/network.ts';
import { deliveryFailure } from '../domain/automation/webhooks.ts';
import type { DeliveryFailure } from '../domain/automation/webhooks.ts';

const policy = { allowList: ['127.0.0.1'] };
const servers: Server[] = [];
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  rmSync(dir, { recursive: true, force: true });
});

const listen = async (server: Server) => {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

async function failureOf(url: string): Promise<DeliveryFailure> {
  try {
    await postJson(new URL(url), '{}', {}, policy, { timeoutMs: 5_000 });
  } catch (error) {
    return deliveryFailure(error);
  }
  throw new Error('the delivery did not fail');
}

describe('webhook delivery failures', () => {
  it('records an untrusted TLS certificate as tls_failure without OpenSSL text', async () => {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-days', '1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    const server = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (_req, res) => res.end('ok'));
    const port = await listen(server);
    const failure = await failureOf(`https://127.0.0.1:${port}/hook`);
    expect(failure.code).toBe('tls_failure');
    expect(failure.message).not.toMatch(/ssl|openssl|self.signed|ERR_|routines/i);
  });

  it('records a closed port as connection_refused and a reset as connection_reset', async () => {
    const closed = createNetServer();
    const closedPort = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    servers.splice(servers.indexOf(closed), 1);
    expect((await failureOf(`http://127.0.0.1:${closedPort}/hook`)).code).toBe('connection_refused');

    const resetting = createNetServer((socket) => socket.resetAndDestroy());
    const port = await listen(resetting);
    expect((await failureOf(`http://127.0.0.1:${port}/hook`)).code).toBe('connection_reset');
  });

  it('records a refused address as egress_refused', async () => {
    const failure = await (async () => {
      try {
        await postJson(new URL('http://10.0.0.1/hook'), '{}', {}, { allowList: [] });
      } catch (error) {
        return deliveryFailure(error);
      }
      throw new Error('not refused');
    })();
    expect(failure.code).toBe('egress_refused');
  });
});
