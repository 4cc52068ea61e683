// The operations CLI's error contract: a stable code and one clear message, never a database
// constraint name. Exit 2 when the command line is wrong (UsageError), exit 1 when the operation
// failed (OpsError, AppError, or a database error translated by describeDatabaseError).

/** The command line is wrong: exit 2, `{"error": "usage", …}`. */
export class UsageError extends Error {}

/** The operation failed for a reason with a stable code: exit 1, `{"error": code, …}`. */
export class OpsError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

type PgError = { code?: string; constraint?: string; detail?: string; table?: string; column?: string; message?: string };

/** What the CLI calls each table's rows: the nouns of its commands. */
const nouns: Record<string, string> = {
  accounts: 'account',
  access_tokens: 'token',
  workspaces: 'workspace',
  workspace_roles: 'role',
  workspace_members: 'member',
  vaults: 'vault',
  vault_mappings: 'mapping',
  organizations: 'organization',
  organization_workspaces: 'workspace assignment',
  product_definitions: 'product',
  product_installations: 'installation',
  service_principals: 'principal',
  service_credentials: 'credential',
  logical_vault_grants: 'grant',
};
const nounOf = (table: string | undefined) => (table ? (nouns[table] ?? table.replace(/_/g, ' ').replace(/s$/, '')) : 'record');
const codeOf = (noun: string) => noun.replace(/ /g, '_');

/** Unique constraints whose violation has a more precise meaning than "already exists". */
const uniques: Record<string, (values: string[]) => [code: string, message: string]> = {
  accounts_email_key: ([email]) => ['email_taken', `An account with e-mail ${email ?? 'address'} already exists.`],
  product_definitions_slug_key: ([slug]) => ['slug_taken', `A product with slug ${slug ?? ''} already exists.`],
  workspace_roles_workspace_id_name_key: (values) => ['role_exists', `The workspace already has a role named ${values.at(-1) ?? ''}.`],
  logical_vault_grants_active_key: () => ['grant_exists', 'The installation already has an active grant on this vault; revoke it first.'],
};

/** `Key (a, b)=(x, y) …` → ['x', 'y']. */
function keyValues(detail: string | undefined): string[] {
  const match = /\)=\((.*)\)/.exec(detail ?? '');
  return match?.[1] ? match[1].split(', ') : [];
}

function findPgError(error: unknown): PgError | null {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const candidate = current as PgError & { cause?: unknown };
    if (typeof candidate.code === 'string' && /^[0-9A-Z]{5}$/.test(candidate.code)) return candidate;
    current = candidate.cause;
  }
  return null;
}

function findSystemError(error: unknown): string | null {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const candidate = current as { code?: unknown; errors?: unknown[]; cause?: unknown };
    if (typeof candidate.code === 'string' && /^E[A-Z]+$/.test(candidate.code)) return candidate.code;
    const inner = candidate.errors?.[0] as { code?: unknown } | undefined;
    if (typeof inner?.code === 'string') return inner.code;
    current = candidate.cause;
  }
  return null;
}

/** A database failure as `{ code, message }` for the operator, or null when it is something else. */
export function describeDatabaseError(error: unknown, where: string, hint = 'is it running?'): { code: string; message: string } | null {
  const pg = findPgError(error);
  if (pg) {
    const noun = nounOf(pg.table);
    switch (pg.code) {
      case '23505': {
        const specific = pg.constraint ? uniques[pg.constraint] : undefined;
        if (specific) {
          const [code, message] = specific(keyValues(pg.detail));
          return { code, message };
        }
        return { code: 'already_exists', message: `That ${noun} already exists.` };
      }
      case '23503': {
        // Inserting a reference to a missing row, or deleting a row others still reference.
        const referenced = /is not present in table "([^"]+)"/.exec(pg.detail ?? '')?.[1];
        if (referenced) {
          const missing = nounOf(referenced);
          const value = keyValues(pg.detail).at(-1);
          return { code: `${codeOf(missing)}_not_found`, message: `No ${missing}${value ? ` ${value}` : ''}.` };
        }
        const referencing = /referenced from table "([^"]+)"/.exec(pg.detail ?? '')?.[1];
        return { code: 'in_use', message: `The ${noun} is still in use${referencing ? ` by a ${nounOf(referencing)}` : ''}.` };
      }
      case '23514':
      case '23502':
      case '22001':
      case '22P02': {
        const field = (pg.column ?? pg.constraint?.replace(new RegExp(`^${pg.table ?? ''}_`), '').replace(/_check$/, '') ?? 'value').replace(/_/g, ' ');
        return { code: 'invalid_value', message: `The ${field} of the ${noun} is not accepted.` };
      }
      case '42P01':
        return { code: 'not_migrated', message: `The database at ${where} has no platform tables; run \`npm run migrate\` (or \`npm start\`) first.` };
      case '3D000':
      case '28P01':
      case '28000':
        return { code: 'database_unreachable', message: `Cannot use the database at ${where}: ${pg.message ?? pg.code}.` };
      default:
        return null;
    }
  }
  const system = findSystemError(error);
  if (system === 'ECONNREFUSED' || system === 'ENOTFOUND' || system === 'ETIMEDOUT' || system === 'EHOSTUNREACH') {
    return { code: 'database_unreachable', message: `Cannot reach the database at ${where} (${system}); ${hint}` };
  }
  return null;
}
