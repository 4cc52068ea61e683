// Temporal over TLS (issue 30), as Temporal Cloud is reached: Debian's HAProxy (installed by
// scripts/ensure-haproxy.sh) terminates TLS for gRPC (HTTP/2) in front of a Temporal dev server of
// this file's own, with a throwaway CA made by openssl. One listener wants an API key
// (`authorization: Bearer <key>`, the header the SDK sends it in) and refuses any other with 401
// before forwarding; another wants an mTLS client certificate. The worker is the production one
// (workers/compose.ts startWorker), the API the production one (api/compose.ts startApi, its
// /readyz asks Temporal), and the client connection is built by the same function the API's is
// (platform/temporal.ts temporalConnectionOptions): the TEMPORAL_* settings are all they are given.
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi } from '../api/compose.ts';
import { loadConfig } from '../platform/config.ts';
import type { Config } from '../platform/config.ts';
import { canConnect, freePort } from '../platform/local-stack/ports.ts';
import { resolveTemporalCli } from '../platform/local-stack/temporal-cli.ts';
import { startTemporalDevServer } from '../platform/local-stack/temporal-dev-server.ts';
import type { DevServer } from '../platform/local-stack/temporal-dev-server.ts';
import { projectRoot } from '../platform/project-root.ts';
import { lazyTemporalConnection, temporalConnectionOptions, withoutTemporalTls } from '../platform/temporal.ts';
import { scheduledTriggerFire } from '../workflows/scheduled-trigger.ts';
import { startWorker } from '../workers/compose.ts';
import { useTestDatabase } from './support/harness.ts';

const db = useTestDatabase();
const API_KEY = `hnp-test-${randomBytes(16).toString('hex')}`;
let dir: string;
let temporal: DevServer | undefined;
let proxy: ChildProcess | undefined;
/** HAProxy's log: one line per HTTP/2 request, `<frontend> <status> <backend>/<server> <path>`. */
const proxyLog: string[] = [];
/** The TLS listeners: one wants the API key, the other a client certificate. */
let apiKeyAddress: string;
let mtlsAddress: string;
const pem = (name: string) => join(dir, name);

function run(command: string, args: string[]): void {
  const done = spawnSync(command, args, { cwd: dir, encoding: 'utf8' });
  if (done.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${done.stdout}${done.stderr}`);
}

/** A CA, a server certificate for 127.0.0.1 and localhost, and a client certificate (EC P-256 keys, PKCS#8). */
function makeCertificates(): void {
  writeFileSync(
    pem('openssl.cnf'),
    [
      '[req]',
      'distinguished_name = dn',
      'prompt = no',
      '[dn]',
      'CN = hnp throwaway test CA',
      '[ca]',
      'basicConstraints = critical, CA:TRUE',
      'keyUsage = critical, keyCertSign, cRLSign',
      'subjectKeyIdentifier = hash',
      '[server]',
      'basicConstraints = critical, CA:FALSE',
      'keyUsage = critical, digitalSignature',
      'extendedKeyUsage = serverAuth',
      'subjectAltName = IP:127.0.0.1, DNS:localhost',
      '[client]',
      'basicConstraints = critical, CA:FALSE',
      'keyUsage = critical, digitalSignature',
      'extendedKeyUsage = clientAuth',
      '',
    ].join('\n'),
  );
  const openssl = process.env['OPENSSL_PATH'] ?? 'openssl';
  const key = (name: string) => run(openssl, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', pem(name)]);
  key('ca.key');
  run(openssl, ['req', '-x509', '-new', '-key', pem('ca.key'), '-config', pem('openssl.cnf'), '-extensions', 'ca', '-days', '2', '-out', pem('ca.pem')]);
  for (const [name, cn, serial] of [['server', 'localhost', '2'], ['client', 'hnp-worker', '3']] as const) {
    key(`${name}.key`);
    run(openssl, ['req', '-new', '-key', pem(`${name}.key`), '-subj', `/CN=${cn}`, '-out', pem(`${name}.csr`)]);
    run(openssl, ['x509', '-req', '-in', pem(`${name}.csr`), '-CA', pem('ca.pem'), '-CAkey', pem('ca.key'), '-set_serial', serial, '-days', '2', '-extfile', pem('openssl.cnf'), '-extensions', name, '-out', pem(`${name}.crt`)]);
  }
}

/** HAProxy in front of the dev server: TLS (ALPN h2) in, cleartext HTTP/2 out. */
async function startProxy(temporalAddress: string): Promise<void> {
  const [apiKeyPort, mtlsPort] = [await freePort(), await freePort()];
  // HAProxy takes the server's certificate and key in one file.
  writeFileSync(pem('server.pem'), Buffer.concat([readFileSync(pem('server.crt')), readFileSync(pem('server.key'))]));
  writeFileSync(
    pem('haproxy.cfg'),
    [
      'global',
      '  log stdout format raw daemon',
      'defaults',
      '  mode http',
      '  log global',
      '  log-format "%f %ST %b/%s %HU"',
      '  timeout connect 5s',
      // Workers' long polls last up to 70 s.
      '  timeout client 5m',
      '  timeout server 5m',
      'frontend api_key',
      `  bind 127.0.0.1:${apiKeyPort} ssl crt ${pem('server.pem')} alpn h2`,
      `  http-request deny deny_status 401 unless { req.hdr(authorization) -m str "Bearer ${API_KEY}" }`,
      '  default_backend temporal',
      'frontend mtls',
      `  bind 127.0.0.1:${mtlsPort} ssl crt ${pem('server.pem')} alpn h2 ca-file ${pem('ca.pem')} verify required`,
      '  default_backend temporal',
      'backend temporal',
      `  server temporal ${temporalAddress} proto h2`,
      '',
    ].join('\n'),
  );
  proxy = spawn(process.env['HAPROXY_PATH'] ?? '/usr/sbin/haproxy', ['-f', pem('haproxy.cfg'), '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let said = '';
  const collect = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    said = (said + text).slice(-4_000);
    proxyLog.push(...text.split('\n').filter((line) => line.trim() !== ''));
  };
  proxy.stdout!.on('data', collect);
  proxy.stderr!.on('data', collect);
  const until = Date.now() + 10_000;
  while (!((await canConnect('127.0.0.1', apiKeyPort, 300)) && (await canConnect('127.0.0.1', mtlsPort, 300)))) {
    if (Date.now() > until || proxy.exitCode !== null) throw new Error(`HAProxy did not start:\n${said}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  apiKeyAddress = `127.0.0.1:${apiKeyPort}`;
  mtlsAddress = `127.0.0.1:${mtlsPort}`;
}

beforeAll(async () => {
  const ensured = spawnSync('bash', [join(projectRoot, 'scripts/ensure-haproxy.sh')], { encoding: 'utf8', timeout: 600_000 });
  if (ensured.status !== 0) throw new Error(`scripts/ensure-haproxy.sh failed:\n${ensured.stdout}${ensured.stderr}`);
  dir = mkdtempSync(join(tmpdir(), 'hnp-temporal-tls-'));
  makeCertificates();
  temporal = await startTemporalDevServer({ cliPath: resolveTemporalCli(), port: await freePort(), dbFilename: join(dir, 'temporal.sqlite'), headless: true });
  await startProxy(temporal.address);
}, 120_000);

afterAll(async () => {
  proxy?.kill('SIGTERM');
  await temporal?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The configuration a deployment would give (only TEMPORAL_* and what the processes need besides). */
function configWith(env: Record<string, string>): Config {
  return loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', SHUTDOWN_GRACE_MS: '1000', ...env });
}

/** A client on the connection the API builds (api/compose.ts: lazy, from temporalConnectionOptions). */
function clientFor(config: Config, address: string): Client {
  return new Client({ connection: lazyTemporalConnection(temporalConnectionOptions(config, address)), namespace: config.TEMPORAL_NAMESPACE });
}

/** Proxy log lines about `method` (e.g. StartWorkflowExecution) on `frontend`. */
function logged(frontend: string, method: string): string[] {
  return proxyLog.filter((line) => line.startsWith(`${frontend} `) && line.endsWith(`/${method}`));
}

async function waitFor(what: string, check: () => boolean): Promise<void> {
  const until = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > until) throw new Error(`${what}; the proxy logged:\n${proxyLog.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('TLS with a Temporal Cloud API key', () => {
  it('the production worker and the API reach Temporal through TLS with the key, and a workflow runs end to end', async () => {
    const taskQueue = `tls-api-key-${process.pid}`;
    const config = configWith({ TEMPORAL_ADDRESS: apiKeyAddress, TEMPORAL_API_KEY: API_KEY, TEMPORAL_TLS_CA_PATH: pem('ca.pem'), TEMPORAL_TASK_QUEUE: taskQueue });
    const options = temporalConnectionOptions(config, apiKeyAddress);
    expect(options).toMatchObject({ address: apiKeyAddress, apiKey: API_KEY, metadata: { 'temporal-namespace': 'default' } });
    expect(options.tls).toEqual({ serverRootCACertificate: expect.any(Buffer) });

    const worker = await startWorker(config, db.url, apiKeyAddress);
    const client = clientFor(config, apiKeyAddress);
    const api = await startApi(config, db.url, apiKeyAddress).catch(async (error: unknown) => {
      await client.connection.close();
      await worker.shutdown();
      throw error;
    });
    try {
      // The API's readiness check asks Temporal (GetSystemInfo) over its own connection.
      const ready = await fetch(`${api.url}/readyz`);
      expect(ready.status, await ready.clone().text()).toBe(200);
      expect(await ready.json()).toMatchObject({ checks: { temporal: { ok: true } } });

      // A workflow the platform worker registers: its activity records a run of a trigger that does
      // not exist, so it finds none (null) after a round trip to Postgres.
      const workflowId = `tls-api-key-${randomUUID()}`;
      const result = await client.workflow.execute(scheduledTriggerFire, { taskQueue, workflowId, args: [{ triggerId: randomUUID() }] });
      expect(result).toBeNull();
      const described = await client.workflow.getHandle(workflowId).describe();
      expect(described.status.name).toBe('COMPLETED');
      expect(described.taskQueue).toBe(taskQueue);

      // All of it through the key-checking TLS listener, forwarded to the server.
      await waitFor('the worker polled through the proxy', () => logged('api_key', 'PollWorkflowTaskQueue').some((line) => line.includes(' 200 temporal/temporal ')));
      expect(logged('api_key', 'StartWorkflowExecution').some((line) => line.includes(' 200 temporal/temporal '))).toBe(true);
      expect(proxyLog.filter((line) => line.startsWith('api_key ') && line.includes(' 401 '))).toEqual([]);
    } finally {
      await client.connection.close();
      await api.close();
      await worker.shutdown();
    }
  });

  it('a wrong key is refused at the proxy (401 → UNAUTHENTICATED): nothing reaches the server, and the API is not ready', async () => {
    const taskQueue = `tls-wrong-key-${process.pid}`;
    const right = configWith({ TEMPORAL_API_KEY: API_KEY, TEMPORAL_TLS_CA_PATH: pem('ca.pem'), TEMPORAL_TASK_QUEUE: taskQueue });
    const wrong = configWith({ TEMPORAL_API_KEY: `${API_KEY}x`, TEMPORAL_TLS_CA_PATH: pem('ca.pem'), TEMPORAL_TASK_QUEUE: taskQueue });
    const client = clientFor(wrong, apiKeyAddress);
    const checker = clientFor(right, apiKeyAddress);
    const api = await startApi(wrong, db.url, apiKeyAddress);
    try {
      const workflowId = `tls-wrong-key-${randomUUID()}`;
      const started = client.workflow.start(scheduledTriggerFire, { taskQueue, workflowId, args: [{ triggerId: randomUUID() }] });
      await expect(started).rejects.toMatchObject({ message: 'Failed to start Workflow', cause: { code: 16, message: expect.stringMatching(/UNAUTHENTICATED/) } });
      // The worker's connection (the SDK's Rust core) is refused the same way, at its first call.
      await expect(NativeConnection.connect(temporalConnectionOptions(wrong, apiKeyAddress))).rejects.toThrow(/401 Unauthorized|Unauthenticated/);

      const ready = await fetch(`${api.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ code: 'not_ready', checks: { postgres: { ok: true }, temporal: { ok: false, error: expect.stringMatching(/UNAUTHENTICATED/) } } });

      // The proxy answered itself (no server), and the server has no such workflow.
      await waitFor('the refused start was logged', () => logged('api_key', 'StartWorkflowExecution').some((line) => line.includes(' 401 ')));
      for (const line of proxyLog.filter((l) => l.includes(' 401 '))) expect(line).toContain('<NOSRV>');
      await expect(checker.workflow.getHandle(workflowId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    } finally {
      await api.close();
      await client.connection.close();
      await checker.connection.close();
    }
  });
});

describe('mTLS', () => {
  it('with the client certificate both connections work (client and worker); without it the TLS handshake is refused', async () => {
    const withCert = configWith({
      TEMPORAL_TLS_CA_PATH: pem('ca.pem'),
      TEMPORAL_TLS_CERT_PATH: pem('client.crt'),
      TEMPORAL_TLS_KEY_PATH: pem('client.key'),
      // The name the certificate is checked against (it is also valid for 127.0.0.1).
      TEMPORAL_TLS_SERVER_NAME: 'localhost',
      TEMPORAL_TASK_QUEUE: `tls-mtls-${process.pid}`,
    });
    const options = temporalConnectionOptions(withCert, mtlsAddress);
    expect(options.apiKey).toBeUndefined();
    expect(options.tls).toEqual({ serverNameOverride: 'localhost', serverRootCACertificate: expect.any(Buffer), clientCertPair: { crt: expect.any(Buffer), key: expect.any(Buffer) } });

    // The client's transport (grpc-js) starts a workflow; the worker's (Rust core) sees it.
    const client = clientFor(withCert, mtlsAddress);
    const native = await NativeConnection.connect(options);
    try {
      const workflowId = `tls-mtls-${randomUUID()}`;
      const handle = await client.workflow.start(scheduledTriggerFire, { taskQueue: withCert.TEMPORAL_TASK_QUEUE, workflowId, args: [{ triggerId: randomUUID() }] });
      const seen = await new Client({ connection: native, namespace: withCert.TEMPORAL_NAMESPACE }).workflow.getHandle(workflowId).describe();
      expect(seen.status.name).toBe('RUNNING');
      await handle.terminate('test over');
    } finally {
      await client.connection.close();
      await native.close();
    }

    // The same CA and server name without a certificate: the proxy ends the handshake.
    const withoutCert = configWith({ TEMPORAL_TLS_CA_PATH: pem('ca.pem'), TEMPORAL_TLS_SERVER_NAME: 'localhost' });
    // Everything so far was forwarded (the proxy logs a request when it ends).
    await waitFor('the proxy logged the requests with a certificate', () => logged('mtls', 'TerminateWorkflowExecution').some((line) => line.includes(' 200 temporal/temporal ')));
    const forwarded = logged('mtls', 'GetSystemInfo').length;
    const failedHandshakes = () => proxyLog.filter((line) => line.endsWith('mtls/1: SSL handshake failure')).length;
    const failedBefore = failedHandshakes();
    // No retries (the SDK's default interceptor retries UNAVAILABLE): the first refusal is the answer.
    // The client's transport waits for the server's HTTP/2 settings, so it always sees the TLS alert.
    const refused = Connection.lazy({ ...temporalConnectionOptions(withoutCert, mtlsAddress), interceptors: [] });
    try {
      await expect(refused.workflowService.getSystemInfo({})).rejects.toThrow(/UNAVAILABLE.*alert certificate required/);
    } finally {
      await refused.close();
    }
    // The Rust core may send its request before the alert (TLS 1.3 ends the client's handshake
    // first): it fails on the alert or on the closed connection, whichever it reads first.
    await expect(NativeConnection.connect(temporalConnectionOptions(withoutCert, mtlsAddress))).rejects.toThrow(/Failed to call GetSystemInfo/);
    await waitFor('the proxy refused both handshakes', () => failedHandshakes() >= failedBefore + 2);
    expect(logged('mtls', 'GetSystemInfo')).toHaveLength(forwarded);
  });
});

it('TEMPORAL_TLS=false against the TLS listener fails (plaintext HTTP/2 is not TLS)', async () => {
  const config = configWith({ TEMPORAL_TLS: 'false' });
  expect(temporalConnectionOptions(config, apiKeyAddress)).toEqual({ address: apiKeyAddress });
  const plaintext = Connection.lazy({ ...temporalConnectionOptions(config, apiKeyAddress), interceptors: [] });
  try {
    await expect(plaintext.workflowService.getSystemInfo({})).rejects.toThrow(/UNAVAILABLE/);
  } finally {
    await plaintext.close();
  }
  await expect(NativeConnection.connect(temporalConnectionOptions(config, apiKeyAddress))).rejects.toThrow(/Failed to call GetSystemInfo/);
  // The proxy saw a handshake that was not TLS, and forwarded nothing.
  await waitFor('the failed handshake was logged', () => proxyLog.some((line) => line.endsWith('api_key/1: SSL handshake failure')));
});

describe('configuration', () => {
  it('TLS is off by default, and on with an API key, a client certificate, a CA or a server name', () => {
    expect(temporalConnectionOptions(configWith({}), 'temporal:7233')).toEqual({ address: 'temporal:7233' });
    expect(temporalConnectionOptions(configWith({ TEMPORAL_TLS: 'true' }), 'a:7233')).toEqual({ address: 'a:7233', tls: true });
    expect(temporalConnectionOptions(configWith({ TEMPORAL_API_KEY: 'k', TEMPORAL_NAMESPACE: 'ns.acct' }), 'a:7233')).toEqual({
      address: 'a:7233',
      tls: true,
      apiKey: 'k',
      metadata: { 'temporal-namespace': 'ns.acct' },
    });
    expect(temporalConnectionOptions(configWith({ TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' }), 'a:7233').tls).toEqual({ serverNameOverride: 'temporal.internal' });
    // docker compose's `${VAR:-}` is unset.
    expect(temporalConnectionOptions(configWith({ TEMPORAL_TLS: '', TEMPORAL_API_KEY: '', TEMPORAL_TLS_CA_PATH: '' }), 'a:7233')).toEqual({ address: 'a:7233' });
    // npm start's own dev server speaks plaintext whatever the settings.
    expect(temporalConnectionOptions(withoutTemporalTls(configWith({ TEMPORAL_API_KEY: 'k' })), 'a:7233')).toEqual({ address: 'a:7233' });
  });

  it('refuses an API key with TEMPORAL_TLS=false, half a client certificate, TLS settings with TLS off, a bad value, and names the variable, never the key', () => {
    const refusal = (env: Record<string, string>) => {
      try {
        configWith(env);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(env)}`);
    };
    const keyInClear = refusal({ TEMPORAL_API_KEY: 'secret-api-key', TEMPORAL_TLS: 'false' });
    expect(keyInClear).toMatch(/^Invalid configuration:\n {2}TEMPORAL_API_KEY: needs TLS, but TEMPORAL_TLS is false/);
    expect(keyInClear).not.toContain('secret-api-key');
    expect(refusal({ TEMPORAL_TLS_CERT_PATH: pem('client.crt') })).toMatch(/TEMPORAL_TLS_KEY_PATH: required with TEMPORAL_TLS_CERT_PATH/);
    expect(refusal({ TEMPORAL_TLS_KEY_PATH: pem('client.key') })).toMatch(/TEMPORAL_TLS_CERT_PATH: required with TEMPORAL_TLS_KEY_PATH/);
    expect(refusal({ TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA_PATH: pem('ca.pem') })).toMatch(/TEMPORAL_TLS: is false, but TEMPORAL_TLS_CA_PATH is a TLS setting/);
    expect(refusal({ TEMPORAL_TLS: 'yes' })).toMatch(/TEMPORAL_TLS: /);
  });

  it('an unreadable or non-PEM file stops start-up naming the variable and the path, never the contents', () => {
    const missing = join(dir, 'no-such-ca.pem');
    expect(() => configWith({ TEMPORAL_TLS_CA_PATH: missing })).toThrow(`Invalid configuration:\n  TEMPORAL_TLS_CA_PATH: cannot read ${missing} (ENOENT)`);
    expect(() => configWith({ TEMPORAL_TLS_CERT_PATH: dir, TEMPORAL_TLS_KEY_PATH: pem('client.key') })).toThrow(`TEMPORAL_TLS_CERT_PATH: cannot read ${dir} (EISDIR)`);
    writeFileSync(pem('not-pem.txt'), 'a private note, not a certificate');
    let said = '';
    try {
      configWith({ TEMPORAL_TLS_CA_PATH: pem('not-pem.txt') });
    } catch (error) {
      said = (error as Error).message;
    }
    expect(said).toContain(`TEMPORAL_TLS_CA_PATH: ${pem('not-pem.txt')} is not PEM`);
    expect(said).not.toContain('private note');
    // A file gone between loading the configuration and connecting: the same kind of error.
    const loaded = configWith({ TEMPORAL_TLS_CA_PATH: pem('ca.pem') });
    expect(() => temporalConnectionOptions({ ...loaded, TEMPORAL_TLS_CA_PATH: missing }, 'a:7233')).toThrow(`TEMPORAL_TLS_CA_PATH: cannot read ${missing} (ENOENT)`);
  });
});
