// Routes the Temporal worker runtime's own logs into our pino logger, so worker output has the
// same format (and redaction) as everything else. Runtime.install may run once per process,
// before any worker is created.
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { LogLevel } from '@temporalio/worker';
import type { Logger } from 'pino';

const pinoLevel: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

// The workflow bundler logs webpack's whole module listing at INFO on every worker start; it is
// build detail, so it goes to debug ("Workflow bundle created" stays at info).
const webpackStats = /\bwebpack [\d.]+ compiled\b/;

export function levelOf(level: LogLevel, message: string): 'trace' | 'debug' | 'info' | 'warn' | 'error' {
  return level === 'INFO' && webpackStats.test(message) ? 'debug' : pinoLevel[level];
}

let installed = false;

export function installTemporalLogging(logger: Logger, level: LogLevel = 'INFO'): void {
  if (installed) return;
  installed = true;
  Runtime.install({
    // Our own signal handler (platform/signals.ts) orders shutdown: API, then worker, then the
    // local servers. The SDK's default handler would stop the worker and exit on its own.
    shutdownSignals: [],
    logger: new DefaultLogger(level, (entry) => logger[levelOf(entry.level, entry.message)](entry.meta ?? {}, entry.message)),
  });
}
