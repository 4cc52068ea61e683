// `npm start`, then Ctrl-C as a terminal sends it: SIGINT to the whole foreground process group
// (npm, its shell, our node process). The embedded Postgres and the Temporal dev server run in
// their own groups, so only our process hears it and stops the services in order:
// API, worker, Temporal, Postgres. A reviewer console's open live stream is ended first, so it does
// not hold the API open. The test asserts the order of the log lines, not timings.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, lstat, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { canConnect } from '../platform/local-stack/ports.ts';
import { projectRoot } from '../platform/project-root.ts';
import { openConsoleStream } from './support/console.ts';

let dataDir: string;
let child: ChildProcess | undefined;
let exited: Promise<number | null>;
let stdout = '';

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'hnp-start-shutdown-'));
  // mkdtemp makes it 0700; as root the `postgres` user must reach it, or the cluster would be
  // relocated out of the temp folder (test/start-postgres-permissions.test.ts covers that case).
  await chmod(dataDir, 0o755);
});

afterAll(async () => {
  // Only when the test failed half-way: stop the stack the same orderly way, then harder.
  if (child?.pid && child.exitCode === null && child.signalCode === null) {
    process.kill(-child.pid, 'SIGTERM');
    const timer = setTimeout(() => child?.pid && process.kill(-child.pid, 'SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
  await rm(dataDir, { recursive: true, force: true });
});

it('stops the API, then the worker, then Temporal, then Postgres on Ctrl-C', { timeout: 180_000 }, async () => {
  child = spawn('npm', ['start', '--silent'], {
    cwd: projectRoot,
    // Its own process group, like a job in a terminal; -pid addresses the whole group.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_FORMAT: 'json', LOG_LEVEL: 'info', DATABASE_URL: '', TEMPORAL_ADDRESS: '' },
  });
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  exited = new Promise((resolve) => child!.once('exit', (code) => resolve(code)));

  const ready = await new Promise<boolean>((resolve) => {
    const check = () => {
      if (stdout.includes('Hosted Notes Platform is ready')) resolve(true);
    };
    child!.stdout!.on('data', check);
    void exited.then(() => resolve(false));
  });
  expect(ready, `npm start did not become ready:\n${stdout}\n${stderr}`).toBe(true);
  // The banner names the demo workspace and the data folder in use.
  expect(stdout).toMatch(/workspaceId {2}[0-9a-f-]{36}/);
  expect(stdout).toContain(`Data         ${dataDir}`);
  const temporalUi = /Temporal UI {2}http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout)?.[1];
  expect(temporalUi).toBeDefined();
  expect((await lstat(join(dataDir, 'postgres'))).isDirectory()).toBe(true);
  expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(true);

  // A reviewer's console open on its live stream: Ctrl-C must end it, not wait for the browser.
  const api = /API {10}(http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1];
  const reviewerToken = /Reviewer token (hnp_pat_\S+)/.exec(stdout)?.[1];
  expect(api && reviewerToken, stdout).toBeTruthy();
  const signIn = await fetch(`${api}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: reviewerToken! }).toString(),
  });
  expect(signIn.status).toBe(303);
  const stream = await openConsoleStream(api!, signIn.headers.getSetCookie()[0]!.split(';')[0]!);
  await stream.next('ready');

  process.kill(-child.pid!, 'SIGINT');
  expect((await stream.next('end', 30_000)).data).toEqual({ reason: 'shutdown' });
  await stream.ended;
  await exited;

  const messages = stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => (JSON.parse(line) as { name?: string; msg?: string }))
    .filter((entry) => entry.name === 'start')
    .map((entry) => entry.msg ?? '');
  const stopped = messages.filter((msg) => msg.endsWith(' stopped'));
  expect(stopped).toEqual(['api stopped', 'worker stopped', 'temporal stopped', 'postgres stopped']);
  // One signal, handled once: the servers did not die on their own before their turn.
  expect(messages.filter((msg) => msg === 'shutting down')).toHaveLength(1);
  expect(messages.some((msg) => msg.includes('did not stop cleanly') || msg.includes('second signal'))).toBe(false);
  // Nothing left running: Postgres removed its pid file, Temporal's UI port is closed.
  expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  expect(await canConnect('127.0.0.1', Number(temporalUi), 500)).toBe(false);
  expect(existsSync(join(dataDir, 'local-stack.json'))).toBe(false);
});
