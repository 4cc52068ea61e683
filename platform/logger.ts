// One pino configuration for the API, the worker and the scripts. Anything that may carry a
// credential is redacted by path, so a careless log call cannot leak a token.
import pino from 'pino';
import type { LoggerOptions } from 'pino';

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

export function loggerOptions(level: string, name: string): LoggerOptions {
  return {
    level,
    name,
    redact: { paths: redactPaths, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
}

/** For scripts and workers: synchronous writes, so lines logged right before exit are not lost. */
export function createLogger(level: string, name: string) {
  return pino(loggerOptions(level, name), pino.destination({ dest: 1, sync: true }));
}
