// One pino configuration for the API, the worker and the scripts. Anything that may carry a
// credential is redacted by path, so a careless log call cannot leak a token; redaction happens
// before a line is written, so it holds for both output formats.
//
// Format: LOG_FORMAT=json|pretty; by default human-readable lines when stdout is a terminal and
// JSON (one object per line) otherwise. The pretty form is a small formatter over pino's JSON
// lines (no extra dependency), written synchronously like the JSON form.
import pino from 'pino';
import type { DestinationStream, LoggerOptions } from 'pino';

export const redactPaths = [
  'req.headers.authorization',
  'req.headers["x-service-credential"]',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  '*.authorization',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'password',
  '*.password',
  'credential',
  '*.credential',
];

export type LogFormat = 'json' | 'pretty';

export function logFormat(env: NodeJS.ProcessEnv = process.env, stdoutIsTTY: boolean = process.stdout.isTTY === true): LogFormat {
  const asked = env['LOG_FORMAT'];
  if (asked === 'json' || asked === 'pretty') return asked;
  return stdoutIsTTY ? 'pretty' : 'json';
}

/**
 * pino options; in the pretty format they carry a `stream` too, which Fastify (`logger:` option)
 * and createLogger pass to pino as the destination.
 */
export function loggerOptions(level: string, name: string): LoggerOptions & { stream?: DestinationStream } {
  return {
    level,
    name,
    redact: { paths: redactPaths, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    ...(logFormat() === 'pretty' ? { stream: prettyStream() } : {}),
  };
}

/** For scripts and workers: synchronous writes, so lines logged right before exit are not lost. */
export function createLogger(level: string, name: string) {
  const { stream, ...options } = loggerOptions(level, name);
  return pino(options, stream ?? stdout());
}

let stdoutDestination: ReturnType<typeof pino.destination> | undefined;
function stdout() {
  stdoutDestination ??= pino.destination({ dest: 1, sync: true });
  return stdoutDestination;
}

/** A destination that turns pino's JSON lines into human-readable ones. */
export function prettyStream(options: { colors?: boolean; write?: (text: string) => void } = {}): DestinationStream {
  const colors = options.colors ?? (process.stdout.isTTY === true && !process.env['NO_COLOR']);
  const write = options.write ?? ((text: string) => stdout().write(text));
  return { write: (line: string) => write(formatLine(line, colors)) };
}

const levels: Record<number, [string, string]> = {
  10: ['TRACE', '90'],
  20: ['DEBUG', '36'],
  30: ['INFO ', '32'],
  40: ['WARN ', '33'],
  50: ['ERROR', '31'],
  60: ['FATAL', '35'],
};
const hidden = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'err', 'error']);

/** `HH:MM:SS.mmm LEVEL name  message key=value …`, then an error's stack on its own lines. */
export function formatLine(line: string, colors = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const paint = (code: string, text: string) => (colors ? `\u001b[${code}m${text}\u001b[39m` : text);
  const at = new Date(typeof entry['time'] === 'string' || typeof entry['time'] === 'number' ? entry['time'] : Date.now());
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  // Local wall-clock time: what a person at the terminal compares with.
  const time = `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}.${pad(at.getMilliseconds(), 3)}`;
  const [label, color] = levels[Number(entry['level'])] ?? ['LOG  ', '39'];
  const name = typeof entry['name'] === 'string' ? entry['name'] : '';
  const fields = Object.entries(entry)
    .filter(([key]) => !hidden.has(key))
    .map(([key, value]) => `${paint('90', `${key}=`)}${formatValue(key, value)}`);
  let text = [paint('90', time), paint(color, label), paint('36', name.padEnd(8)), String(entry['msg'] ?? ''), ...fields].filter(Boolean).join(' ');
  const error = (entry['err'] ?? entry['error']) as { stack?: unknown; message?: unknown; type?: unknown } | undefined;
  if (error && typeof error === 'object') {
    const stack = typeof error.stack === 'string' ? error.stack : `${String(error.type ?? 'Error')}: ${String(error.message ?? '')}`;
    text += `\n${stack.replace(/^/gm, '    ')}`;
  } else if (error !== undefined) {
    text += ` ${paint('90', 'err=')}${formatValue('err', error)}`;
  }
  return `${text}\n`;
}

function formatValue(key: string, value: unknown): string {
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    // Fastify's request and response serializers: the line an operator scans for.
    if (key === 'req' && typeof record['method'] === 'string') return `${record['method']} ${String(record['url'] ?? '')}`;
    if (key === 'res' && record['statusCode'] !== undefined) return String(record['statusCode']);
    return JSON.stringify(value);
  }
  if (key === 'responseTime' && typeof value === 'number') return `${value.toFixed(1)}ms`;
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return String(value);
}
