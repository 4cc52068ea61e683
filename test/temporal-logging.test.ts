// A worker's whole output is log lines in the asked format, Temporal's own included: with
// LOG_FORMAT=json every stdout and stderr line is a JSON object and none carries an ANSI escape.
// Provoked deterministically and fast: a worker for a namespace the server does not have, so the
// Rust Core warns (describing the namespace for worker heartbeats; before log forwarding it printed
// that warning to stderr as ANSI-coloured text) and the worker's creation fails.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { expect, inject, it } from 'vitest';
import { useTestDatabase } from './support/harness.ts';

const db = useTestDatabase();

it('writes only JSON lines without ANSI codes, a Core warning included, when LOG_FORMAT=json', { timeout: 60_000 }, async () => {
  const child = spawn(process.execPath, ['workers/main.ts'], {
    env: { ...process.env, LOG_FORMAT: 'json', LOG_LEVEL: 'info', DATABASE_URL: db.url, TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_NAMESPACE: `missing-${randomUUID()}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));

  const lines = `${stdout}${stderr}`.split('\n').filter((line) => line !== '');
  for (const line of lines) {
    expect(line, 'an ANSI escape').not.toContain('\u001b');
    expect(() => JSON.parse(line), line).not.toThrow();
  }
  expect(stderr).toBe('');
  const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  // Core's own warning, through the logger at warn, with where it came from.
  expect(entries).toContainEqual(expect.objectContaining({ level: 40, name: 'temporal', sdkComponent: 'core', target: expect.stringMatching(/^temporalio_sdk_core/) }));
  // The start-up failure it explains comes after it, as a log line too (not a bare stack).
  expect(entries.at(-1)).toMatchObject({ level: 60, name: 'worker-main', msg: 'worker start-up failed', err: { type: 'TransportError' } });
  expect(code).toBe(1);
});
