// Temporal connection settings shared by the API (client) and the worker: the one place the
// configuration becomes connection options (address, TLS, API key), which @temporalio/client's
// Connection and the worker's NativeConnection both take (docs/operations.md).
import { readFileSync } from 'node:fs';
import { Connection } from '@temporalio/client';
import type { TLSConfig } from '@temporalio/client';
import type { Config } from './config.ts';

export type TemporalSettings = { address: string; namespace: string; taskQueue: string };

/** What the connection needs of the configuration (platform/config.ts validates it). */
export type TemporalConnectionConfig = Pick<
  Config,
  'TEMPORAL_NAMESPACE' | 'TEMPORAL_TLS' | 'TEMPORAL_TLS_CA_PATH' | 'TEMPORAL_TLS_SERVER_NAME' | 'TEMPORAL_TLS_CERT_PATH' | 'TEMPORAL_TLS_KEY_PATH' | 'TEMPORAL_API_KEY'
>;

/** Options both `Connection.lazy/connect` (@temporalio/client) and `NativeConnection.connect` (@temporalio/worker) accept. */
export type TemporalConnectionOptions = {
  address: string;
  /** Absent: plaintext. `true`: TLS with the system's roots. */
  tls?: TLSConfig | true;
  /** Sent as `Authorization: Bearer <key>` on every call (the SDK's own option). */
  apiKey?: string;
  metadata?: Record<string, string>;
};

/** The settings that apply to TEMPORAL_ADDRESS only (a local dev server speaks plaintext). */
export const temporalTlsSettings = [
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CA_PATH',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_TLS_CERT_PATH',
  'TEMPORAL_TLS_KEY_PATH',
  'TEMPORAL_API_KEY',
] as const satisfies readonly (keyof TemporalConnectionConfig)[];

/** TEMPORAL_TLS when set; otherwise on as soon as anything only TLS can carry is configured. */
export function temporalTlsEnabled(config: TemporalConnectionConfig): boolean {
  if (config.TEMPORAL_TLS !== undefined) return config.TEMPORAL_TLS === 'true';
  return Boolean(config.TEMPORAL_API_KEY || config.TEMPORAL_TLS_CERT_PATH || config.TEMPORAL_TLS_CA_PATH || config.TEMPORAL_TLS_SERVER_NAME);
}

/** A PEM file a setting names, read at start-up; one gone since the configuration checked it is an error naming the variable (never its contents). */
function readSetting(name: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new Error(`Invalid configuration:\n  ${name}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
}

/**
 * The connection options for `address` under the configuration: TLS (a private CA, a server name
 * override, an mTLS client certificate) and a Temporal Cloud API key. Reads the PEM files now, so
 * call it at start-up. With an API key the connection also sends the `temporal-namespace` header
 * the SDK documents for Temporal Cloud (the SDK adds it per call as well; this covers the calls
 * that name no namespace, such as GetSystemInfo).
 */
export function temporalConnectionOptions(config: TemporalConnectionConfig, address: string): TemporalConnectionOptions {
  // platform/config.ts has refused the combinations that make no sense (a key without TLS, a
  // certificate without its key) and checked that every PEM file reads: it is the one place.
  if (!temporalTlsEnabled(config)) return { address };
  const certPath = config.TEMPORAL_TLS_CERT_PATH;
  const keyPath = config.TEMPORAL_TLS_KEY_PATH;
  const tls: TLSConfig = {
    ...(config.TEMPORAL_TLS_SERVER_NAME ? { serverNameOverride: config.TEMPORAL_TLS_SERVER_NAME } : {}),
    ...(config.TEMPORAL_TLS_CA_PATH ? { serverRootCACertificate: readSetting('TEMPORAL_TLS_CA_PATH', config.TEMPORAL_TLS_CA_PATH) } : {}),
    ...(certPath && keyPath ? { clientCertPair: { crt: readSetting('TEMPORAL_TLS_CERT_PATH', certPath), key: readSetting('TEMPORAL_TLS_KEY_PATH', keyPath) } } : {}),
  };
  return {
    address,
    tls: Object.keys(tls).length > 0 ? tls : true,
    ...(config.TEMPORAL_API_KEY ? { apiKey: config.TEMPORAL_API_KEY, metadata: { 'temporal-namespace': config.TEMPORAL_NAMESPACE } } : {}),
  };
}

/** The configuration without the TLS settings: for a Temporal server of our own (`npm start`'s dev server). */
export function withoutTemporalTls<T extends TemporalConnectionConfig>(config: T): T {
  return { ...config, ...Object.fromEntries(temporalTlsSettings.map((name) => [name, undefined])) };
}

/**
 * The API connects lazily: it starts and serves reads while Temporal is down, and /readyz
 * reports the outage instead of the process crashing. A bare address is a plaintext connection
 * (tests, the OpenAPI export); the API passes temporalConnectionOptions(config, address).
 */
export function lazyTemporalConnection(target: string | TemporalConnectionOptions): Connection {
  return Connection.lazy(typeof target === 'string' ? { address: target } : target);
}
