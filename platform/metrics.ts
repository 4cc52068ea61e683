// Prometheus metrics (issue 26 builds on this): one registry per process, never prom-client's global
// default (apps built side by side in tests share nothing), served in Prometheus' text format on a
// listener of its own, never the public API port. Names follow Prometheus conventions: the `hnp_`
// prefix, base units (seconds, bytes, dollars), `_total` for counters, low-cardinality labels.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';

export function createMetricsRegistry(labels: { process: string }): Registry {
  const registry = new Registry();
  registry.setDefaultLabels(labels);
  collectDefaultMetrics({ register: registry, prefix: 'hnp_' });
  return registry;
}

export type MetricsListener = { url: string; close: () => Promise<void> };

/**
 * Serves `GET /metrics` (and only that) on host:port (0: a free port). `alsoServe`: pages appended
 * to the registry's (the worker's Temporal Core exporter, which runs a listener of its own on
 * loopback), so each process is one scrape target.
 */
export async function serveMetrics(registry: Registry, host: string, port: number, alsoServe: string[] = []): Promise<MetricsListener> {
  const page = async () => {
    const parts = await Promise.all([registry.metrics(), ...alsoServe.map(fetchPage)]);
    return parts.map((text) => (text.endsWith('\n') || text === '' ? text : `${text}\n`)).join('');
  };
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || new URL(req.url ?? '/', 'http://x').pathname !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are at /metrics\n');
      return;
    }
    page().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(text),
      // A collector failed (the database unreachable, most likely): say so, do not serve a partial page.
      (error: unknown) => res.writeHead(503, { 'content-type': 'text/plain' }).end(`metrics unavailable: ${error instanceof Error ? error.name : 'error'}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function fetchPage(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return res.text();
}
