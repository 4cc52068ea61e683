// Admission: who is calling, whether they may use this interface, and the request charged to its
// allowance. Every authenticated request of REST, MCP and the automation gateway passes here, in
// this order; a refusal at any step ends the request there, having counted nothing:
//
//   1. resolve  the presented credential to its principal, in one statement. Unknown, expired,
//               revoked and rotated-away credentials are all `invalid_token`: the caller learns
//               nothing about which.
//   2. judge    the principal: its account `active` (else `account_inactive`), its plan entitled to
//               the interface (else `entitlement_required`). The plans table is identity/plans.ts,
//               or the one the app was built with; it travels with the leases.
//   3. charge   one request against the allowance the interface counts against (`allowanceOf`)
//               through the process's allowance leases, or refuse with 429 `rate_limited` /
//               `monthly_limit_exceeded` (allowance-lease.ts; limits and refusals in usage.ts).
//               Answers that consume nothing (MCP's parse errors, notifications, unknown methods and
//               tools) are admitted with `charge: false` and skip this step.
//   4. touch    the credential's last use, at most once a minute.
//
// The fused variant: admission to read a mapping (mapping-admission.ts: the hot single-note read and
// the inventory) takes exactly these steps with its own work fused into step 1's statement (a
// `Fusion`), so authentication, charging, the mapping access check and the work cost one Postgres
// round trip (bench/README.md). Its extra columns are read with the principal and judged by the
// caller only once steps 2-4 have passed. For a token and mapping its process admitted before, it
// takes step 1's row from the process's admission cache while the admission epoch stands still
// (admission-cache.ts, decision 111) and runs steps 2-4 on it here, as on a fresh one
// (`admitResolvedAccessToken`). Every Product Runtime request does the same with its chain
// (decision 112, product-runtime/chain.ts).
//
// There is one entry per kind of principal (`PrincipalKind`): `admitAccessToken`,
// `admitConsoleSession` and `admitServicePrincipal` below. api/auth.ts is the HTTP side of the
// first (the bearer header, the challenge, the interfaces' hooks), api/routes/console/session.ts of
// the second (the cookie), api/routes/product/kit.ts of the third.
import { sql } from 'slonik';
import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import type { z } from 'zod';
import { AppError } from '../errors.ts';
import type { ErrorCode } from '../errors.ts';
import { authenticatedSchema, livePrincipalQuery, touchToken } from '../identity/accounts.ts';
import type { Account, AuthenticatedRow, Principal } from '../identity/accounts.ts';
import { planIncludes } from '../identity/plans.ts';
import type { AccountStatus, Entitlements, Interface, Plan } from '../identity/plans.ts';
import type { AllowanceLeases } from '../allowance-lease.ts';
import type { Allowances, UsageSnapshot } from '../usage.ts';
import { looksLikeSecret, secretPrefixes } from '../secrets.ts';
import { liveSessionQuery, touchSession } from '../console/sessions.ts';
import { checkProductRuntimeChain } from '../product-runtime/chain.ts';
import type { ChainAdmission, ChainFusion, ChainRequest, RuntimeContext } from '../product-runtime/chain.ts';
import type { AdmissionCache } from './admission-cache.ts';
import type { OperationLeases, OperationsUsage } from '../product-runtime/operation-leases.ts';

/**
 * The kinds of principal admitted here, each with its own entry in this file and the prefix that
 * marks its credentials:
 *
 * - `personal_access_token`: an account acting through one of its tokens (`hnp_pat_…`) on REST, MCP
 *   or the automation gateway; judged by the account's status and plan, charged per account and
 *   allowance. Entry: `admitAccessToken`.
 *
 * - `console_session`: an account acting in the reviewer console through a session cookie
 *   (`hnp_ses_…`) it exchanged one of its tokens for (domain/console/sessions.ts). The console is a
 *   page over the automation gateway, so it is judged and charged exactly as that gateway is (the
 *   `automation` entitlement, the REST allowance). Entry: `admitConsoleSession`.
 *
 * - `service_principal`: a Product Runtime installation acting through its credential (`hnp_svc_…`):
 *   resolved and judged link by link by the chain (product-runtime/chain.ts), charged against its
 *   organization's `apiOperationsPerMonth`. Entry: `admitServicePrincipal`.
 */
export type PrincipalKind = 'personal_access_token' | 'console_session' | 'service_principal';

const credentialPrefix: Record<PrincipalKind, string> = {
  personal_access_token: secretPrefixes.accessToken,
  console_session: secretPrefixes.consoleSession,
  service_principal: secretPrefixes.serviceCredential,
};

/**
 * The allowance each interface's requests count against. The spec gives MCP its own allowance and
 * names none for the automation gateway (it "requires the Developer entitlement", the REST API's,
 * and its limits are "not shown"), so automation counts against REST's; its entitlement is still
 * judged on its own (step 2).
 */
export const allowanceOf = { rest: 'rest', mcp: 'mcp', automation: 'rest' } as const satisfies Record<Interface, keyof Allowances>;

/**
 * The refusals admission gives (and `authentication_required`, the edge's when no bearer token is
 * sent): the MCP gateway answers these as protocol errors, never as tool results.
 */
export const admissionRefusalCodes: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'authentication_required',
  'invalid_token',
  'account_inactive',
  'entitlement_required',
  'rate_limited',
  'monthly_limit_exceeded',
]);

/**
 * Work fused into step 1's statement: `ctes` follow the `principal` CTE (they read the account id
 * as `(SELECT id FROM principal)`), `columns` are selected beside the principal's `p.*`, and the
 * row is parsed by `schema`, the principal's columns plus the fused ones (build it once, at module
 * level, with `fusedRowSchema`). `name` names the prepared statement: one per fused shape.
 */
export type Fusion<T> = {
  name: string;
  schema: z.ZodType<AuthenticatedRow & T>;
  ctes: FragmentSqlToken;
  columns: FragmentSqlToken;
};

/** The row schema of a fusion: the principal's columns and `shape`'s. */
export function fusedRowSchema<S extends z.ZodRawShape>(shape: S) {
  return authenticatedSchema.extend(shape);
}

/** A presented personal access token and where it is presented. */
export type AccessTokenRequest = {
  token: string;
  iface: Interface;
  /** The process's allowance leases, which carry the plans table the app was built with. */
  leases: AllowanceLeases;
  /** false: an answer that consumes nothing (steps 1, 2 and 4 only). */
  charge?: boolean;
};

/** An admitted, charged request: who, and the allowance left after it (for the RateLimit fields). */
export type Admitted = Principal & { usage: UsageSnapshot };

/**
 * Personal access tokens: steps 1-4 (1, 2 and 4 with `charge: false`). With a `fusion`, its
 * columns are read in step 1's statement and returned, with the principal's, as `fused` once the
 * request is admitted.
 */
export async function admitAccessToken(db: CommonQueryMethods, request: AccessTokenRequest & { charge: false }): Promise<Principal>;
export async function admitAccessToken(db: CommonQueryMethods, request: AccessTokenRequest & { charge?: true }): Promise<Admitted>;
export async function admitAccessToken<T>(db: CommonQueryMethods, request: AccessTokenRequest & { charge?: true }, fusion: Fusion<T>): Promise<Admitted & { fused: AuthenticatedRow & T }>;
export async function admitAccessToken<T>(db: CommonQueryMethods, request: AccessTokenRequest, fusion?: Fusion<T>): Promise<Principal | Admitted | (Admitted & { fused: AuthenticatedRow & T })> {
  // 1. resolve
  const row = await resolveAccessToken(db, request.token, fusion);
  // 2-4
  if (request.charge === false) return admitResolvedAccessToken(db, row, { ...request, charge: false });
  const admitted = await admitResolvedAccessToken(db, row, { ...request, charge: true });
  return fusion ? { ...admitted, fused: row } : admitted;
}

/**
 * Steps 2-4 for a token already resolved: by step 1 above, or by the hot read's admission cache
 * (admission-cache.ts), whose entry holds step 1's row while nothing it was read from has changed.
 */
export async function admitResolvedAccessToken(db: CommonQueryMethods, row: AuthenticatedRow, request: Omit<AccessTokenRequest, 'token'> & { charge: false }): Promise<Principal>;
export async function admitResolvedAccessToken(db: CommonQueryMethods, row: AuthenticatedRow, request: Omit<AccessTokenRequest, 'token'> & { charge: true }): Promise<Admitted>;
export async function admitResolvedAccessToken(db: CommonQueryMethods, row: AuthenticatedRow, request: Omit<AccessTokenRequest, 'token'>): Promise<Principal | Admitted> {
  const { tokenId, tokenLastUsedAt, id, email, displayName, plan, status, createdAt, updatedAt } = row;
  const account: Account = { id, email, displayName, plan, status, createdAt, updatedAt };
  // 2. judge
  judge(account, request.iface, request.leases.entitlements);
  // 3. charge, unless the answer consumes nothing
  const usage = request.charge === false ? null : await request.leases.charge(account, allowanceOf[request.iface]);
  // 4. touch
  await touchToken(db, tokenId, tokenLastUsedAt);
  return usage ? { tokenId, account, usage } : { tokenId, account };
}

/** Step 1 for a personal access token: the live token and its account, and a fusion's columns. */
async function resolveAccessToken<T>(db: CommonQueryMethods, token: string, fusion?: Fusion<T>): Promise<AuthenticatedRow & T> {
  if (!looksLikeSecret(token, credentialPrefix.personal_access_token)) throw new AppError('invalid_token');
  const row = fusion
    ? await db.maybeOne(sql.prepared(fusion.name, fusion.schema)`
        WITH principal AS (${livePrincipalQuery(token)}), ${fusion.ctes}
        SELECT p.*, ${fusion.columns} FROM principal p`)
    : await db.maybeOne(sql.prepared('admit_access_token', authenticatedSchema)`${livePrincipalQuery(token)}`);
  if (!row) throw new AppError('invalid_token');
  // Without a fusion there are no further columns: T is then the empty row.
  return row as AuthenticatedRow & T;
}

/** Step 2: the account is active and its plan includes the interface. */
function judge(account: { plan: Plan; status: AccountStatus }, iface: Interface, entitlements: Entitlements): void {
  if (account.status !== 'active') {
    throw new AppError('account_inactive', `The account is ${account.status}.`);
  }
  if (!planIncludes(account.plan, iface, entitlements)) {
    const needed = entitlements[iface].join(', ');
    throw new AppError('entitlement_required', `The ${account.plan} plan does not include the ${iface} interface (needs one of: ${needed}).`, {
      extensions: { plan: account.plan, requiredPlans: entitlements[iface] },
    });
  }
}

/** A presented console session cookie, and where it is presented (always the automation interface's rules). */
export type ConsoleSessionRequest = {
  sessionSecret: string;
  leases: AllowanceLeases;
  /** false: an answer that consumes nothing (the console's sign-out). */
  charge?: boolean;
};

/** An admitted console request: the principal (its session's token and account), the session, and the allowance left when charged. */
export type AdmittedSession = Principal & { sessionId: string; sessionExpiresAt: string; usage: UsageSnapshot | null };

/**
 * Console sessions: step 1 resolves the cookie to its live session, token and account in one
 * statement (an unknown, ended or expired session, or its token revoked, rotated away or expired:
 * `session_invalid`); steps 2-4 are the personal access token's, on the `automation` interface,
 * touching the session as well as its token.
 */
export async function admitConsoleSession(db: CommonQueryMethods, request: ConsoleSessionRequest): Promise<AdmittedSession> {
  // 1. resolve
  if (!looksLikeSecret(request.sessionSecret, credentialPrefix.console_session)) throw new AppError('session_invalid');
  const row = await db.maybeOne(liveSessionQuery(request.sessionSecret));
  if (!row) throw new AppError('session_invalid');
  // 2. judge
  judge(row.account, 'automation', request.leases.entitlements);
  // 3. charge
  const usage = request.charge === false ? null : await request.leases.charge(row.account, allowanceOf.automation);
  // 4. touch
  await touchToken(db, row.tokenId, row.tokenLastUsedAt);
  await touchSession(db, row);
  return { tokenId: row.tokenId, account: row.account, sessionId: row.id, sessionExpiresAt: row.expiresAt, usage };
}

/** A presented service credential, the scope and vault grant the operation needs, and the process's operation leases. */
export type ServiceCredentialRequest = ChainRequest & {
  leases: OperationLeases;
  /** The process's kept chains (decision 112); without one every request resolves the whole chain. */
  admissions?: AdmissionCache<ChainAdmission> | undefined;
  /** false: an answer that consumes nothing (none of the runtime's operations so far). */
  charge?: boolean;
};

/** An admitted runtime request: the resolved chain and, when charged, the organization's operations this month. */
export type AdmittedService = RuntimeContext & { usage: OperationsUsage | null };

/**
 * Service principals: steps 1, 2 and 4 in one statement (product-runtime/chain.ts): resolve the
 * credential and its chain, judge every link (the refusal names the first that failed:
 * `failedLink`), touch the credential; then step 3, one operation of the organization's month
 * through the leases (429 organization_quota_exhausted, counting nothing). A refusal at any link
 * charges nothing.
 */
export async function admitServicePrincipal(db: CommonQueryMethods, request: ServiceCredentialRequest): Promise<AdmittedService>;
export async function admitServicePrincipal<T>(db: CommonQueryMethods, request: ServiceCredentialRequest, fusion: ChainFusion<T>): Promise<AdmittedService & { fused: T }>;
export async function admitServicePrincipal<T>(db: CommonQueryMethods, request: ServiceCredentialRequest, fusion?: ChainFusion<T>): Promise<AdmittedService | (AdmittedService & { fused: T })> {
  if (!looksLikeSecret(request.credential, credentialPrefix.service_principal)) {
    throw new AppError('credential_invalid', 'Send Authorization: Bearer <service credential hnp_svc_…>.', { extensions: { failedLink: 'credential' } });
  }
  const result = await checkProductRuntimeChain(db, { credential: request.credential, scope: request.scope, vault: request.vault }, fusion, request.admissions);
  if (!result.ok) throw new AppError(result.code, result.detail, { extensions: { failedLink: result.link } });
  const usage = request.charge === false ? null : await request.leases.charge(result.context.organizationId, result.operationsLimit);
  return fusion ? { ...result.context, usage, fused: result.fused } : { ...result.context, usage };
}
