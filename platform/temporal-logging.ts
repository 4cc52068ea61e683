// Routes the Temporal SDK's own logs into our pino logger, so they have the same format (JSON with
// LOG_FORMAT=json, or the pretty lines) and redaction as everything else:
// - the worker runtime's TypeScript side (worker, workflow and activity loggers), through
//   Runtime.install's `logger`;
// - the Rust Core's own lines (poll errors, namespace and heartbeat warnings…), which Core otherwise
//   prints to stderr by itself as ANSI-coloured text, whatever the logger: forwarded to the same
//   logger with `telemetryOptions.logging.forward` (the SDK's maintained mechanism; it buffers
//   ~100 ms to order lines from both sides, see flushTemporalLogs);
// - the client's transport (@grpc/grpc-js under @temporalio/client, which logs nothing itself): its
//   rare errors (a proxy variable it cannot use, a server refusing its keepalive pings) go to
//   console.error as plain text unless given a logger (installTemporalClientLogging).
// Runtime.install may run once per process, before any worker or native connection is created.
import { createRequire } from 'node:module';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { LogEntry, LogLevel } from '@temporalio/worker';
import type { Logger } from 'pino';

type PinoLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const pinoLevel: Record<LogLevel, PinoLevel> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

const temporalLevel: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', fatal: 'ERROR', silent: 'ERROR' };

// The workflow bundler logs webpack's whole module listing at INFO on every worker start; it is
// build detail, so it goes to debug ("Workflow bundle created" stays at info).
const webpackStats = /\bwebpack [\d.]+ compiled\b/;

export function levelOf(level: LogLevel, message: string): PinoLevel {
  return level === 'INFO' && webpackStats.test(message) ? 'debug' : pinoLevel[level];
}

/**
 * What Core forwards: its own crates at WARN (its INFO and DEBUG are per-poll detail), ERROR when
 * our logger asks for no more than errors; third-party crates (tonic, hyper…) at ERROR.
 */
export function coreLogFilter(level: LogLevel): { core: LogLevel; other: LogLevel } {
  return { core: level === 'ERROR' ? 'ERROR' : 'WARN', other: 'ERROR' };
}

// Keys pino writes itself: a field of the same name would be a second key in the JSON line.
const pinoKeys = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'v']);
const ansi = /\u001b\[[0-9;]*[A-Za-z]/g;

/** One SDK log entry as pino's (fields, message): an Error under `error` becomes pino's serialized `err`; no ANSI codes. */
export function pinoArgs(entry: Pick<LogEntry, 'message' | 'meta'>): [Record<string, unknown>, string] {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry.meta ?? {})) {
    if (value === undefined) continue;
    if ((key === 'error' || key === 'err') && value instanceof Error) fields['err'] = value;
    else if (pinoKeys.has(key)) fields[`temporal_${key}`] = value;
    else fields[key] = typeof value === 'string' ? value.replace(ansi, '') : value;
  }
  return [fields, entry.message.replace(ansi, '')];
}

let runtime: Runtime | undefined;

/**
 * `prometheusBindAddress`: also run the Core SDK's Prometheus exporter (its worker and client
 * metrics, `temporal_*`) on that address (platform/metrics.ts serves its page beside ours). Names
 * follow Prometheus conventions: `_total` on counters, durations in seconds with the unit suffix.
 */
export function installTemporalLogging(logger: Logger, level: LogLevel = temporalLevel[logger.level] ?? 'INFO', options: { prometheusBindAddress?: string } = {}): void {
  if (runtime) return;
  installTemporalClientLogging(logger);
  runtime = Runtime.install({
    // Our own signal handler (platform/signals.ts) orders shutdown: API, then worker, then the
    // local servers. The SDK's default handler would stop the worker and exit on its own.
    shutdownSignals: [],
    logger: new DefaultLogger(level, (entry) => logger[levelOf(entry.level, entry.message)](...pinoArgs(entry))),
    // Core's own lines through the same logger instead of its ANSI-coloured console output.
    telemetryOptions: {
      logging: { forward: {}, filter: coreLogFilter(level) },
      ...(options.prometheusBindAddress
        ? {
            metrics: {
              prometheus: { bindAddress: options.prometheusBindAddress, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true },
              globalTags: { process: 'worker' },
            },
          }
        : {}),
    },
  });
}

/**
 * Writes out the Temporal lines still held in the runtime's ordering buffer (Core hands its lines
 * over every few milliseconds, and they wait ~100 ms there): call before exiting on a fatal error,
 * so the warning that explains it is not lost.
 */
export async function flushTemporalLogs(): Promise<void> {
  if (!runtime) return;
  await new Promise((resolve) => setTimeout(resolve, 50));
  runtime.flushLogs();
}

type GrpcLogging = { setLogger(logger: Partial<Console>): void };

/**
 * The Temporal client's transport (@grpc/grpc-js, as @temporalio/client resolves it) logs through
 * `logger`, at its own levels (it writes errors only, unless GRPC_VERBOSITY asks for more).
 * For processes with a Temporal client and no worker (the API); installTemporalLogging does it too.
 * The transport has one logger per process: the latest call sets it.
 */
export function installTemporalClientLogging(logger: Logger): void {
  const fromClient = createRequire(createRequire(import.meta.url).resolve('@temporalio/client'));
  const grpc = fromClient('@grpc/grpc-js') as GrpcLogging;
  const line = (args: unknown[]) => args.map((arg) => (typeof arg === 'string' ? arg : arg instanceof Error ? arg.message : JSON.stringify(arg))).join(' ');
  grpc.setLogger({
    error: (...args: unknown[]) => logger.error({ sdkComponent: 'grpc' }, line(args)),
    info: (...args: unknown[]) => logger.info({ sdkComponent: 'grpc' }, line(args)),
    debug: (...args: unknown[]) => logger.debug({ sdkComponent: 'grpc' }, line(args)),
  });
}
