// Operations CLI: `npm run ops -- <noun> <verb> [--flag value …]`. Prints JSON on stdout; errors as
// JSON on stderr with a non-zero exit (1: the operation failed, 2: the command line is wrong).
// It talks to DATABASE_URL, or to the local stack that `npm start` is running.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { createDatabasePool } from '../db/pool.ts';
import { isAppError } from '../domain/errors.ts';
import { projectRoot } from '../platform/local-stack/temporal-cli.ts';
import { commands } from './ops/commands.ts';
import type { Command } from './ops/commands.ts';

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

class UsageError extends Error {}

function unwrap(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodOptional ? unwrap(schema.unwrap() as z.ZodType) : schema;
}

function commandHelp(noun: string, verb: string, cmd: Command): string {
  const lines = [`npm run ops -- ${noun} ${verb} [options]`, '', cmd.summary, '', 'Options:'];
  for (const [key, schema] of Object.entries(cmd.options.shape as Record<string, z.ZodType>)) {
    const optional = schema instanceof z.ZodOptional;
    const repeat = unwrap(schema) instanceof z.ZodArray ? ' (repeatable)' : '';
    lines.push(`  --${kebab(key).padEnd(42)} ${schema.description ?? ''}${optional ? '' : ' [required]'}${repeat}`);
  }
  if (Object.keys(cmd.options.shape).length === 0) lines.push('  (none)');
  return lines.join('\n');
}

function nounHelp(noun: string): string {
  const verbs = commands[noun]!;
  return [`npm run ops -- ${noun} <verb> [options]`, '', 'Verbs:', ...Object.entries(verbs).map(([v, c]) => `  ${v.padEnd(20)} ${c.summary}`), '', `Run \`npm run ops -- ${noun} <verb> --help\` for options.`].join('\n');
}

function topHelp(): string {
  return [
    'npm run ops -- <noun> <verb> [options]',
    '',
    'System Operations for accounts, tokens, workspaces, vaults and the Product Runtime chain.',
    'Output is JSON. Uses DATABASE_URL, or the local stack started by `npm start`.',
    '',
    'Nouns:',
    ...Object.entries(commands).map(([n, verbs]) => `  ${n.padEnd(14)} ${Object.keys(verbs).join(', ')}`),
    '',
    'Run `npm run ops -- <noun> --help` for its verbs.',
  ].join('\n');
}

function parseFlags(cmd: Command, argv: string[]): Record<string, unknown> {
  const shape = cmd.options.shape as Record<string, z.ZodType>;
  const values: Record<string, unknown> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new UsageError(`Unexpected argument ${JSON.stringify(arg)}.`);
    const eq = arg.indexOf('=');
    const flag = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    const key = camel(flag);
    const schema = shape[key];
    if (!schema) throw new UsageError(`Unknown option --${flag}.`);
    let value: string;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new UsageError(`Option --${flag} needs a value.`);
      value = next;
      i++;
    }
    if (unwrap(schema) instanceof z.ZodArray) values[key] = [...((values[key] as string[] | undefined) ?? []), value];
    else if (key in values) throw new UsageError(`Option --${flag} given twice.`);
    else values[key] = value;
  }
  const parsed = cmd.options.safeParse(values);
  if (!parsed.success) {
    throw new UsageError(parsed.error.issues.map((i) => `--${kebab(String(i.path[0] ?? ''))}: ${i.message}`).join('\n'));
  }
  return parsed.data;
}

function databaseUrl(): string {
  if (process.env['DATABASE_URL']) return process.env['DATABASE_URL'];
  const stateFile = join(projectRoot, '.data', 'local-stack.json');
  if (existsSync(stateFile)) {
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { databaseUrl?: string };
    if (state.databaseUrl) return state.databaseUrl;
  }
  throw new UsageError('Set DATABASE_URL, or run `npm start` so the local stack is up.');
}

async function main(argv: string[]): Promise<number> {
  const [noun, verb, ...rest] = argv;
  const wantsHelp = (args: string[]) => args.includes('--help') || args.includes('-h');
  if (!noun || noun === '--help' || noun === '-h' || noun === 'help') {
    console.log(topHelp());
    return noun ? 0 : 2;
  }
  const verbs = commands[noun];
  if (!verbs) throw new UsageError(`Unknown noun ${JSON.stringify(noun)}.\n\n${topHelp()}`);
  if (!verb || verb === '--help' || verb === '-h') {
    console.log(nounHelp(noun));
    return verb ? 0 : 2;
  }
  const cmd = verbs[verb];
  if (!cmd) throw new UsageError(`Unknown verb ${JSON.stringify(verb)} for ${noun}.\n\n${nounHelp(noun)}`);
  if (wantsHelp(rest)) {
    console.log(commandHelp(noun, verb, cmd));
    return 0;
  }
  const options = parseFlags(cmd, rest);
  const db = await createDatabasePool(databaseUrl(), { maxPoolSize: 2 });
  try {
    const result = await cmd.run(db, options as never);
    console.log(JSON.stringify(result, null, 2));
    return 0;
  } finally {
    await db.end();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError) {
    console.error(JSON.stringify({ error: 'usage', message: error.message }, null, 2));
    process.exitCode = 2;
  } else if (isAppError(error)) {
    console.error(JSON.stringify({ error: error.code, message: error.message, ...error.extensions }, null, 2));
    process.exitCode = 1;
  } else {
    const pgError = error as { cause?: { message?: string }; message?: string };
    console.error(JSON.stringify({ error: 'failed', message: pgError.cause?.message ?? pgError.message ?? String(error) }, null, 2));
    process.exitCode = 1;
  }
}
