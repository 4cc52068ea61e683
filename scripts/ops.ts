// Operations CLI: `npm run ops -- <noun> <verb> [--flag value …]`. Prints JSON on stdout; errors as
// JSON on stderr with a non-zero exit (1: the operation failed, 2: the command line is wrong).
// It talks to DATABASE_URL, or to the local stack that `npm start` is running.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { createDatabasePool } from '../db/pool.ts';
import { isAppError } from '../domain/errors.ts';
import { TransferError } from '../domain/notes/vault-transfer.ts';
import { projectRoot } from '../platform/project-root.ts';
import { commands as coreCommands } from './ops/commands.ts';
import type { Command } from './ops/commands.ts';
import { contextScopeCommands } from './ops/context-scope-commands.ts';
import { presentationCommands } from './ops/presentation-commands.ts';
import { intelligenceCommands } from './ops/intelligence-commands.ts';
import { workflowStartCommands } from './ops/workflow-start-commands.ts';
import { mediaCommands } from './ops/media-commands.ts';
import { connectionCommands } from './ops/connection-commands.ts';
import { consoleCommands } from './ops/console-commands.ts';

/** Every noun: the core ones (commands.ts) and each area's own module. */
const commands: Record<string, Record<string, Command>> = { ...coreCommands, ...contextScopeCommands, ...presentationCommands, ...intelligenceCommands, ...mediaCommands, ...connectionCommands, ...consoleCommands, ...workflowStartCommands };
import { describeDatabaseError, OpsError, UsageError } from './ops/errors.ts';

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

function unwrap(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodOptional ? unwrap(schema.unwrap() as z.ZodType) : schema;
}

const describeOption = (schema: z.ZodType) => schema.description ?? unwrap(schema).description ?? '';
const isFlag = (schema: z.ZodType) => unwrap(schema) instanceof z.ZodBoolean;

function commandHelp(noun: string, verb: string, cmd: Command): string {
  const positional = cmd.positional ?? [];
  const shape = cmd.options.shape as Record<string, z.ZodType>;
  const lines = [`npm run ops -- ${noun} ${verb}${positional.map((p) => ` <${kebab(p)}>`).join('')} [options]`, '', cmd.summary, ''];
  if (positional.length > 0) lines.push('Arguments:', ...positional.map((p) => `  <${kebab(p)}>`.padEnd(46) + ` ${describeOption(shape[p]!)}`), '');
  lines.push('Options:');
  const flags = Object.entries(shape).filter(([key]) => !positional.includes(key));
  for (const [key, schema] of flags) {
    const optional = schema instanceof z.ZodOptional;
    const repeat = unwrap(schema) instanceof z.ZodArray ? ' (repeatable)' : '';
    lines.push(`  --${kebab(key).padEnd(42)} ${describeOption(schema)}${optional ? '' : ' [required]'}${repeat}`);
  }
  if (flags.length === 0) lines.push('  (none)');
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
  const positional = [...(cmd.positional ?? [])];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      const key = positional.shift();
      if (key === undefined) throw new UsageError(`Unexpected argument ${JSON.stringify(arg)}.`);
      values[key] = arg;
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    const key = camel(flag);
    const schema = shape[key];
    if (!schema || cmd.positional?.includes(key)) throw new UsageError(`Unknown option --${flag}.`);
    if (isFlag(schema)) {
      if (key in values) throw new UsageError(`Option --${flag} given twice.`);
      // A switch: present means true; --flag=false is accepted for scripts that build command lines.
      const text = eq >= 0 ? arg.slice(eq + 1) : 'true';
      if (text !== 'true' && text !== 'false') throw new UsageError(`Option --${flag} takes no value (or =true / =false).`);
      values[key] = text === 'true';
      continue;
    }
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
  if (positional.length > 0 && !(positional[0]! in values)) throw new UsageError(`Missing <${kebab(positional[0]!)}>; run with --help for the arguments and options.`);
  const parsed = cmd.options.safeParse(values);
  if (!parsed.success) {
    const name = (key: string) => (cmd.positional?.includes(key) ? `<${kebab(key)}>` : `--${kebab(key)}`);
    throw new UsageError(parsed.error.issues.map((i) => (i.path.length ? `${name(String(i.path[0]))}: ${i.message}` : i.message)).join('\n'));
  }
  return parsed.data;
}

/** DATABASE_URL, or the database of the local stack `npm start` runs on the same DATA_DIR. */
function databaseUrl(): { url: string; stateFile?: string } {
  if (process.env['DATABASE_URL']) return { url: process.env['DATABASE_URL'] };
  const stateFile = join(resolve(projectRoot, process.env['DATA_DIR'] || '.data'), 'local-stack.json');
  if (existsSync(stateFile)) {
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { databaseUrl?: string };
    if (state.databaseUrl) return { url: state.databaseUrl, stateFile };
  }
  throw new OpsError('no_database', `No database: set DATABASE_URL, or run \`npm start\` (with the same DATA_DIR) so the local stack is up; ${stateFile} does not exist.`);
}

/** host:port/database of a connection URL, without credentials, for messages. */
function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.host}${parsed.pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

const nounList = () => Object.keys(commands).join(', ');

async function main(argv: string[]): Promise<number> {
  const [noun, verb, ...rest] = argv;
  const wantsHelp = (args: string[]) => args.includes('--help') || args.includes('-h');
  if (noun === '--help' || noun === '-h' || noun === 'help') {
    console.log(topHelp());
    return 0;
  }
  if (!noun) throw new UsageError(`Missing noun: npm run ops -- <noun> <verb> [options]. Nouns: ${nounList()}. Run \`npm run ops -- --help\` for more.`);
  const verbs = commands[noun];
  if (!verbs) throw new UsageError(`Unknown noun ${JSON.stringify(noun)}. Nouns: ${nounList()}. Run \`npm run ops -- --help\` for more.`);
  if (verb === '--help' || verb === '-h') {
    console.log(nounHelp(noun));
    return 0;
  }
  const verbList = Object.keys(verbs).join(', ');
  if (!verb) throw new UsageError(`Missing verb for ${noun}. Verbs: ${verbList}. Run \`npm run ops -- ${noun} --help\` for more.`);
  const cmd = verbs[verb];
  if (!cmd) throw new UsageError(`Unknown verb ${JSON.stringify(verb)} for ${noun}. Verbs: ${verbList}. Run \`npm run ops -- ${noun} --help\` for more.`);
  if (wantsHelp(rest)) {
    console.log(commandHelp(noun, verb, cmd));
    return 0;
  }
  const options = parseFlags(cmd, rest);
  const { url, stateFile } = databaseUrl();
  let db: Awaited<ReturnType<typeof createDatabasePool>> | undefined;
  try {
    db = await createDatabasePool(url, { maxPoolSize: 2 });
    const result = await cmd.run(db, options as never);
    console.log(JSON.stringify(result, null, 2));
    return 0;
  } catch (error) {
    const described = describeDatabaseError(error, describeUrl(url), stateFile ? `is \`npm start\` still running? (${stateFile} names it)` : undefined);
    throw described ? new OpsError(described.code, described.message) : error;
  } finally {
    await db?.end();
  }
}

const fail = (exitCode: number, body: Record<string, unknown>) => {
  console.error(JSON.stringify(body, null, 2));
  process.exitCode = exitCode;
};

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError) fail(2, { error: 'usage', message: error.message });
  else if (error instanceof OpsError) fail(1, { error: error.code, message: error.message });
  else if (isAppError(error)) fail(1, { error: error.code, message: error.message, ...error.extensions });
  else if (error instanceof TransferError) fail(1, { error: error.code, message: error.message, ...error.details });
  else {
    // Unexpected: the message of the innermost cause, never a stack.
    const failure = error as { cause?: { message?: string }; message?: string };
    fail(1, { error: 'failed', message: failure.cause?.message ?? failure.message ?? String(error) });
  }
}
