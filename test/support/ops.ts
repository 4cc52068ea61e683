// The operations CLI as an operator runs it: `node scripts/ops.ts …` as a child process, its JSON
// output and exit code. Shared by the test files that drive the CLI.
import { spawn } from 'node:child_process';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- CLI output is untyped JSON; the assertions check it
export type OpsRun = { code: number | null; stdout: string; stderr: string; json: () => any };

/** Runs the CLI with these environment variables added to the test process's. */
export function runOps(env: NodeJS.ProcessEnv, ...args: string[]): Promise<OpsRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/ops.ts', ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) }));
  });
}
