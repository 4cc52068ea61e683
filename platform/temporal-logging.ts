// Routes the Temporal worker runtime's own logs into our pino logger, so worker output is JSON
// like everything else. Runtime.install may run once per process, before any worker is created.
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

let installed = false;

export function installTemporalLogging(logger: Logger, level: LogLevel = 'INFO'): void {
  if (installed) return;
  installed = true;
  Runtime.install({
    // Our own signal handler (platform/signals.ts) orders shutdown: API, then worker, then the
    // local servers. The SDK's default handler would stop the worker and exit on its own.
    shutdownSignals: [],
    logger: new DefaultLogger(level, (entry) => logger[pinoLevel[entry.level]](entry.meta ?? {}, entry.message)),
  });
}
