// Log format: human-readable on a terminal, JSON otherwise or when asked (LOG_FORMAT), with
// credentials redacted in both; webpack's bundle listing at debug, not info.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { formatLine, logFormat, loggerOptions, prettyStream } from '../platform/logger.ts';
import { levelOf } from '../platform/temporal-logging.ts';

function capture(format: 'json' | 'pretty') {
  const lines: string[] = [];
  const { stream: _ignored, ...options } = loggerOptions('info', 'start');
  const destination = format === 'pretty' ? prettyStream({ colors: false, write: (text) => lines.push(text) }) : { write: (text: string) => lines.push(text) };
  return { log: pino(options, destination), lines };
}

describe('log format', () => {
  it('is pretty on a terminal, JSON when piped, and LOG_FORMAT decides when set', () => {
    expect(logFormat({}, true)).toBe('pretty');
    expect(logFormat({}, false)).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'pretty' }, false)).toBe('pretty');
  });

  it('prints one readable line per entry, with the fields and the error stack', () => {
    const { log, lines } = capture('pretty');
    log.info({ dataDir: '/srv/notes data', port: 5432 }, 'starting embedded Postgres');
    log.error({ err: new Error('boom') }, 'start-up failed');
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}start {4}starting embedded Postgres dataDir="\/srv\/notes data" port=5432\n$/);
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} ERROR start {4}start-up failed\n {4}Error: boom\n {8}at /);
  });

  it('redacts credentials in both formats', () => {
    for (const format of ['json', 'pretty'] as const) {
      const { log, lines } = capture(format);
      log.info({ token: 'hnp_pat_secret', req: { headers: { authorization: 'Bearer hnp_pat_secret' } }, credential: 'hnp_svc_secret' }, 'issued');
      expect(lines.join('')).not.toContain('secret');
      expect(lines.join('')).toContain('[redacted]');
    }
  });

  it('passes lines that are not JSON through unchanged', () => {
    expect(formatLine('plain text')).toBe('plain text\n');
  });

  it("logs webpack's bundle listing at debug and keeps the bundle summary at info", () => {
    expect(levelOf('INFO', 'asset workflow-bundle-1.js 1.59 MiB [emitted]\n…\nwebpack 5.112.2 compiled successfully in 1148 ms')).toBe('debug');
    expect(levelOf('INFO', 'Workflow bundle created')).toBe('info');
    expect(levelOf('ERROR', 'webpack 5.112.2 compiled with 1 error')).toBe('error');
  });
});
