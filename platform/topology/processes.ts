// The platform's processes as the topology runs them: the real entry points (api/main.ts,
// workers/main.ts) as child processes, their output kept (the last lines, for a failure's message)
// and optionally passed on, stopped with SIGTERM as an orchestrator stops them.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../project-root.ts';

export type PlatformProcess = {
  name: string;
  child: ChildProcess;
  /** The lines it wrote (stdout and stderr): the last `keepLines` of them. */
  output: string[];
  /** Resolves once it exited and its output was read to the end. */
  closed: Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with its exit code (null: killed by a signal). */
  stop: (graceMs?: number) => Promise<number | null>;
};

const KEPT_LINES = 200;

export function spawnPlatformProcess(
  name: string,
  entry: 'api/main.ts' | 'workers/main.ts',
  env: Record<string, string>,
  options: { onLine?: ((name: string, line: string) => void) | undefined; detached?: boolean; keepLines?: number } = {},
): PlatformProcess {
  const { onLine } = options;
  // Our own Node flags too (e.g. --conditions when not started through npm, whose .npmrc sets
  // NODE_OPTIONS), but not a debugger's: four children cannot share one inspector port.
  const flags = process.execArgv.filter((flag) => !flag.startsWith('--inspect'));
  const child = spawnOwned(process.execPath, [...flags, join(projectRoot, entry)], { env: { ...process.env, ...env }, detached: options.detached ?? false });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const output: string[] = [];
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      output.push(line);
      if (output.length > (options.keepLines ?? KEPT_LINES)) output.shift();
      onLine?.(name, line);
    }
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  return { name, child, output, closed, stop: (graceMs = 20_000) => stopChild(child, 'SIGTERM', graceMs) };
}

/**
 * A child that is killed when its parent exits without stopping it. `detached` (scripts/topology.ts
 * only): in its own process group, so a terminal's Ctrl-C reaches only the parent, which stops the
 * children in order; elsewhere (tests, the bench) children share the parent's group, so a signal
 * to the group reaches them even when the parent dies without its exit handlers.
 */
export function spawnOwned(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; detached?: boolean } = {}): ChildProcess {
  const child = spawn(command, args, { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false });
  // A binary that cannot be started (a wrong HAPROXY_PATH) is reported by the caller's wait for it, not thrown from an event.
  child.on('error', () => undefined);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.removeListener('exit', killOnExit));
  return child;
}

/** Sends `signal`, then SIGKILL after `graceMs`; resolves with the exit code once the process is gone. */
export function stopChild(child: ChildProcess, signal: NodeJS.Signals, graceMs: number): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', (code) => {
      clearTimeout(kill);
      resolve(code);
    });
    child.kill(signal);
  });
}

/** Polls `check` until it holds; throws naming `what` (and the process's last lines) after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, watched?: PlatformProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (watched && watched.child.exitCode !== null) throw new Error(`${watched.name} exited (${watched.child.exitCode}) before ${what}:\n${watched.output.slice(-30).join('\n')}`);
    if (Date.now() > deadline) throw new Error(`${what} did not happen in ${timeoutMs} ms${watched ? `:\n${watched.output.slice(-30).join('\n')}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
