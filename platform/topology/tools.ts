// The Debian tools the topology runs (haproxy, pgbouncer): made sure of by the project's own
// scripts/ensure-*.sh (installed with apt-get on a clean machine when missing), then located.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../project-root.ts';

const tools = {
  haproxy: { script: 'ensure-haproxy.sh', override: 'HAPROXY_PATH', path: '/usr/sbin/haproxy' },
  pgbouncer: { script: 'ensure-pgbouncer.sh', override: 'PGBOUNCER_PATH', path: '/usr/sbin/pgbouncer' },
} as const;

/** The tool's binary, installed first when missing; throws with the script's own explanation when it cannot be. */
export function ensureTool(name: keyof typeof tools): string {
  const tool = tools[name];
  const ensured = spawnSync('bash', [join(projectRoot, 'scripts', tool.script)], { encoding: 'utf8', timeout: 600_000 });
  if (ensured.status !== 0) throw new Error(`scripts/${tool.script} failed:\n${ensured.stdout}${ensured.stderr}`);
  return process.env[tool.override] || tool.path;
}
