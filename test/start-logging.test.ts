// Log format: human-readable on a terminal, JSON otherwise or when asked (LOG_FORMAT), with
// credentials redacted in both; webpack's bundle listing at debug, not info; Temporal's entries as
// pino fields (an error serialized, no ANSI codes) and the client transport's errors through the
// logger. (A worker process's whole output, Core's warnings included: test/temporal-logging.test.ts.)
import { Connection } from '@temporalio/client';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatLine, logFormat, loggerOptions, prettyStream } from '../platform/logger.ts';
import { coreLogFilter, installTemporalClientLogging, installTemporalLogging, levelOf, pinoArgs } from '../platform/temporal-logging.ts';

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

describe('Temporal log entries', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    delete process.env['grpc_proxy'];
    // Give the transport's logger back to the shared set-up (test/support/quiet-temporal.ts).
    installTemporalClientLogging(pino({ level: 'warn' }));
  });

  it('become pino fields: an error serialized as err, no ANSI codes, no second level/msg/time key', () => {
    const failure = new Error('poll failed');
    const [fields, message] = pinoArgs({
      message: '\u001b[2mNetwork error\u001b[0m while polling',
      meta: { sdkComponent: 'core', target: 'temporalio_sdk_core::worker', error: failure, detail: '\u001b[33mWARN\u001b[0m', level: 'x', msg: 'y', spanContexts: undefined },
    });
    expect(message).toBe('Network error while polling');
    expect(fields).toEqual({ sdkComponent: 'core', target: 'temporalio_sdk_core::worker', err: failure, detail: 'WARN', temporal_level: 'x', temporal_msg: 'y' });
    const { lines, log } = capture('json');
    log.warn(fields, message);
    const entry = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(entry).toMatchObject({ level: 40, msg: 'Network error while polling', err: { type: 'Error', message: 'poll failed' } });
    expect(lines[0]).not.toContain('\u001b');
  });

  it("forwards Core's own crates at WARN (ERROR when only errors are asked for), other crates at ERROR", () => {
    expect(coreLogFilter('INFO')).toEqual({ core: 'WARN', other: 'ERROR' });
    expect(coreLogFilter('DEBUG')).toEqual({ core: 'WARN', other: 'ERROR' });
    expect(coreLogFilter('ERROR')).toEqual({ core: 'ERROR', other: 'ERROR' });
    // The runtime of this process is already installed (test/support/quiet-temporal.ts): a second install is a no-op, not a throw.
    expect(() => installTemporalLogging(pino({ level: 'silent' }))).not.toThrow();
  });

  it("sends the client transport's errors through the logger, not to stderr as plain text", async () => {
    const lines: string[] = [];
    installTemporalClientLogging(pino({ level: 'info' }, { write: (line: string) => lines.push(line) }));
    const stderr = vi.spyOn(process.stderr, 'write');
    const consoleError = vi.spyOn(console, 'error');
    process.env['grpc_proxy'] = 'socks5://127.0.0.1:1'; // a proxy grpc-js cannot use: it says so at error level
    await expect(Connection.connect({ address: '127.0.0.1:1', connectTimeout: 300 })).rejects.toThrow();
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toContainEqual(
      expect.objectContaining({ level: 50, sdkComponent: 'grpc', msg: expect.stringContaining('scheme not supported in proxy URI') }),
    );
    expect(consoleError).not.toHaveBeenCalled();
    expect(stderr).not.toHaveBeenCalled();
  });
});
