// The topology's configuration files, without starting anything: docker-compose's HAProxy
// configuration is the topology's own definition (platform/topology/haproxy.ts), generated, and
// valid to HAProxy itself; compose's drain and timeouts are the values that definition derives.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { projectRoot } from '../platform/project-root.ts';
import { composeHaproxyConfig } from '../platform/topology/compose.ts';
import { DRAIN_MS, HEALTH_CHECK, SERVER_TIMEOUT_MS } from '../platform/topology/haproxy.ts';
import { IDLE_IN_TRANSACTION_TIMEOUT_MS, STATEMENT_TIMEOUT_MS } from '../platform/topology/pgbouncer.ts';
import { ensureTool } from '../platform/topology/tools.ts';

const composeFile = parse(readFileSync(join(projectRoot, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, { environment?: Record<string, string>; stop_grace_period?: string }>;
};

describe('the topology configuration', () => {
  it('deploy/haproxy.cfg is generated from the topology definition (npm run topology -- --write-compose-config)', () => {
    expect(readFileSync(join(projectRoot, 'deploy', 'haproxy.cfg'), 'utf8')).toBe(composeHaproxyConfig());
  });

  it('HAProxy accepts deploy/haproxy.cfg (server-template over Docker DNS, read-only stats)', () => {
    const haproxy = ensureTool('haproxy');
    const checked = spawnSync(haproxy, ['-c', '-f', join(projectRoot, 'deploy', 'haproxy.cfg')], { encoding: 'utf8' });
    expect(checked.status, checked.stderr).toBe(0);
    const config = composeHaproxyConfig();
    expect(config).toContain('server-template api- 16 api:3000 check resolvers dns init-addr none');
    expect(config).not.toContain('stats admin');
    expect(config).toContain(`http-check send meth GET uri ${HEALTH_CHECK.path}`);
    expect(config).toContain(`timeout server ${SERVER_TIMEOUT_MS / 1000}s`);
  });

  it("compose's API drains as long as the balancer needs to take it out, and is given the time to finish a generation", () => {
    const api = composeFile.services['api']!;
    expect(Number(api.environment!['SHUTDOWN_DRAIN_MS'])).toBe(DRAIN_MS);
    expect(DRAIN_MS).toBeGreaterThan(HEALTH_CHECK.intervalMs * HEALTH_CHECK.fall);
    // Docker's grace before SIGKILL covers the drain and the longest request.
    expect(Number.parseInt(api.stop_grace_period!, 10) * 1000).toBeGreaterThanOrEqual(DRAIN_MS + SERVER_TIMEOUT_MS);
    for (const service of ['api', 'worker']) {
      expect(composeFile.services[service]!.environment, service).toMatchObject({ DATABASE_POOLER: 'transaction' });
      expect(composeFile.services[service]!.environment!['DATABASE_URL'], service).toContain('@pgbouncer:');
      expect(composeFile.services[service]!.environment!['DATABASE_SESSION_URL'], service).toContain('@postgres:');
    }
  });

  it("compose's Postgres sets the timeouts the pool cannot send through the pooler, the topology's values", () => {
    const init = readFileSync(join(projectRoot, 'deploy', 'postgres-init.sql'), 'utf8');
    expect(init).toContain(`ALTER ROLE notes IN DATABASE notes SET statement_timeout = '${STATEMENT_TIMEOUT_MS / 1000}s';`);
    expect(init).toContain(`ALTER ROLE notes IN DATABASE notes SET idle_in_transaction_session_timeout = '${IDLE_IN_TRANSACTION_TIMEOUT_MS / 1000}s';`);
  });
});
