// Every setting the service reads from the environment, validated once at start-up.
// README.md documents each variable; keep the two in step.
import { z } from 'zod';

const positiveInt = z.coerce.number().int().positive();

export const configSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  PUBLIC_BASE_URL: z.url().optional(),
  DATABASE_URL: z.string().optional(),
  DATABASE_POOL_SIZE: positiveInt.default(20),
  DATABASE_STATEMENT_TIMEOUT_MS: positiveInt.default(15_000),
  TEMPORAL_ADDRESS: z.string().optional(),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('notes-platform'),
  TEMPORAL_CLI_PATH: z.string().optional(),
  DATA_DIR: z.string().default('.data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SHUTDOWN_GRACE_MS: positiveInt.default(10_000),
});

export type Config = z.infer<typeof configSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
