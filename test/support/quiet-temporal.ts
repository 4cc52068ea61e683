// Test files share a process per fork: keep the Temporal runtime's logs to warnings and above.
import pino from 'pino';
import { installTemporalLogging } from '../../platform/temporal-logging.ts';

installTemporalLogging(pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'warn' }), 'WARN');
