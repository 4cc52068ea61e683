// CPU time from /proc (Linux), for the suites that price requests in CPU rather than wall time:
// throughput on two shared cores swings ±15 % between identical rounds, while the CPU a process
// used per request depends little on what else had the cores.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** sysconf(_SC_CLK_TCK): /proc's unit (100 on Linux for every architecture Node runs on). */
export const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU seconds of a process (all its threads), or null when /proc has no such process. */
export function cpuSeconds(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command (which may hold spaces and parentheses): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** The whole machine's CPU seconds so far (/proc/stat, summed over cores): busy, and all. */
export function machineCpuSeconds(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = fields[3]! + fields[4]!;
  return { busy: (total - idle) / CLOCK_TICKS, total: total / CLOCK_TICKS };
}

/** A backend's process title: `postgres: [<cluster name>: ]<user> <database> <client> <activity>`; group 1 is the database. */
const BACKEND_TITLE = /^postgres: (?:\S+: )?\S+ (\S+) \S+ /;

/**
 * User + system CPU seconds of the Postgres backends serving database `name` (BACKEND_TITLE), summed. A backend that ended is no longer counted:
 * read it around work whose connections stay open (pools), never across their close.
 */
export function databaseBackendsCpuSeconds(name: string): number {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let title: string;
    try {
      title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (BACKEND_TITLE.exec(title)?.[1] !== name) continue;
    total += cpuSeconds(Number(pid)) ?? 0;
  }
  return total;
}
