// What every Product Runtime route stands on: the version header, admission of the service
// credential through the whole chain (domain/principals/admission.ts admitServicePrincipal), the
// caller a handler reads, and the envelope its answer is serialized with. A route declares what it
// needs through the SDK's operation table and never authenticates itself:
//
//   app.route({ ...operationRoute('readNote'), schema, handler })   // operation-route.ts
//   config: { publicRuntime: true }   // no credential (the public presentation route, the OAuth callback)
//
// A route declaring neither fails when it is registered, so nothing is public by omission.
import type { Client } from '@temporalio/client';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabasePool } from 'slonik';
import { RUNTIME_MOUNT, RUNTIME_VERSION, supportedRuntimeVersions } from '@hosted-notes/runtime-sdk';
import { AppError } from '../../../domain/errors.ts';
import { admitServicePrincipal } from '../../../domain/principals/admission.ts';
import type { AdmittedService } from '../../../domain/principals/admission.ts';
import type { ChainAdmission, ChainFusion } from '../../../domain/product-runtime/chain.ts';
import type { AdmissionCache } from '../../../domain/principals/admission-cache.ts';
import type { OperationLeases, OperationsUsage } from '../../../domain/product-runtime/operation-leases.ts';
import { headerValue } from '../shared/headers.ts';
import { answerNoRoute } from '../../problems.ts';
import type { Intelligence } from '../../../domain/intelligence/setup.ts';
import type { GoogleClientSettings, OAuthProvider } from '../../../domain/connections/provider.ts';
import type { SecretBox } from '../../../domain/secret-box.ts';
import type { WorkflowStarter } from '../shared/workflow-starts.ts';
import { completeOperationRoute } from './operation-route.ts';
import type { RuntimeOperation } from './operation-route.ts';
import type { RuntimeRouteConfig } from './route-shapes.ts';

// What a route declares and how it is published live in route-shapes.ts (operation-route.ts reads
// them too); re-exported here, beside the caller a handler reads.
export { runtimeEnvelope, runtimeSecurity } from './route-shapes.ts';
export type { RuntimeRouteConfig } from './route-shapes.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    runtime?: RuntimeRouteConfig;
    /** The runtime operation the route serves (operationRoute): its facts come from the SDK's table. */
    operation?: RuntimeOperation;
    /** Answered without a credential; reveals only public presentation. */
    publicRuntime?: boolean;
  }
  interface FastifyRequest {
    runtime: RuntimeCaller | null;
  }
}

/** The admitted caller of a runtime request: its chain, and the request id provenance names. */
export type RuntimeCaller = Omit<AdmittedService, 'usage'> & { requestId: string };

/** What the runtime's sub-plugins are registered with. */
export type RuntimeRouteDeps = {
  db: DatabasePool;
  temporal: Client;
  taskQueue: string;
  starter: WorkflowStarter;
  /** How long an unreviewed proposal (a memory candidate) waits before it expires. */
  proposalExpirySeconds: number;
  /** The configured model provider, prices and metering timing; null: intelligence is unavailable. */
  intelligence: Intelligence | null;
  /** Admission for the routes that admit in their handler (config.runtime.admitsInHandler). */
  admission: RuntimeAdmission;
  /** Delegated Google connections with the secret box their tokens are sealed with; null: unavailable. */
  connections: (ConnectionsSetup & { secretBox: SecretBox }) | null;
};

/** What delegated connections need besides the secret box (docs/connections.md). */
export type ConnectionsSetup = { provider: OAuthProvider; settings: GoogleClientSettings; publicBaseUrl: string };

/** Admits a request to a route's declared needs, optionally with work fused into the chain's statement. */
export type RuntimeAdmission = {
  admit(request: FastifyRequest, reply: FastifyReply, config: RuntimeRouteConfig): Promise<RuntimeCaller>;
  admit<T>(request: FastifyRequest, reply: FastifyReply, config: RuntimeRouteConfig, fusion: ChainFusion<T>): Promise<RuntimeCaller & { fused: T }>;
};

export const RUNTIME_VERSION_HEADER = 'x-service-runtime-version';

/** Where the Product Runtime is mounted (api/app.ts): the SDK's own constant, one place for the path. */
export { RUNTIME_MOUNT };

/**
 * The headers an answer under the mount carries even when Fastify answers before any route or hook
 * (api/edge.ts frameworkErrors, handed this by api/app.ts: 414, an undecodable URL): the version that answered.
 */
export function runtimeMountHeaders(url: string): Record<string, string> {
  return url === RUNTIME_MOUNT || url.startsWith(`${RUNTIME_MOUNT}/`) || url.startsWith(`${RUNTIME_MOUNT}?`) ? { [RUNTIME_VERSION_HEADER]: RUNTIME_VERSION } : {};
}

/**
 * The declared runtime version. Missing means 1, the only version of this mount (decision 46);
 * anything but a bare positive integer is malformed; a well-formed other number is unsupported.
 * Both refusals name the supported versions, in the same problem shape as every other refusal.
 */
export function checkRuntimeVersion(request: FastifyRequest): void {
  const raw = headerValue(request, RUNTIME_VERSION_HEADER);
  if (raw === undefined) return;
  const value = raw.trim();
  const supported = [...supportedRuntimeVersions];
  if (!/^[1-9][0-9]{0,8}$/.test(value)) {
    throw new AppError('runtime_version_invalid', `X-Service-Runtime-Version must be a version number such as ${RUNTIME_VERSION}.`, { extensions: { supportedVersions: supported } });
  }
  if (!(supported as string[]).includes(value)) {
    throw new AppError('runtime_version_unsupported', `Runtime version ${value} is not supported; this service speaks ${supported.join(', ')}.`, { extensions: { supportedVersions: supported } });
  }
}

const challenge = { 'www-authenticate': 'Bearer realm="hnp-product-runtime"' };

function presentedCredential(request: FastifyRequest): string {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match?.[1]) {
    throw new AppError('credential_invalid', 'Send Authorization: Bearer <service credential hnp_svc_…>.', { extensions: { failedLink: 'credential' }, headers: challenge });
  }
  return match[1];
}

// A vault id that cannot be a grant: a malformed id is refused at the vault link like any vault
// the installation holds no grant on, so a caller cannot tell "malformed" from "someone else's".
const NO_VAULT = '00000000-0000-0000-0000-000000000000';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The organization's monthly operations in the IETF RateLimit fields (as REST publishes its allowance). */
function operationsHeaders(usage: OperationsUsage): Record<string, string> {
  const seconds = Math.max(1, Math.ceil((Date.parse(usage.resetsAt) - Date.now()) / 1000));
  return {
    'ratelimit-policy': `"organization-month";q=${usage.limit}`,
    ratelimit: `"organization-month";r=${Math.max(0, usage.limit - usage.used)};t=${seconds}`,
  };
}

/** The vault a route names, as the chain takes it (a malformed id becomes one no grant can match). */
function requestedVault(request: FastifyRequest, config: RuntimeRouteConfig) {
  if (!config.vault) return undefined;
  const raw = (request.params as Record<string, string | undefined>)[config.vault.param];
  return { vaultId: raw && UUID.test(raw) ? raw.toLowerCase() : NO_VAULT, access: config.vault.access };
}

/**
 * Admission through the chain (every link; a chain this process keeps, while the admission epoch
 * stands still: decision 112), then one operation of the organization's month charged.
 */
export function runtimeAdmission(db: DatabasePool, leases: OperationLeases, admissions: AdmissionCache<ChainAdmission>): RuntimeAdmission {
  async function admit<T>(request: FastifyRequest, reply: FastifyReply, config: RuntimeRouteConfig, fusion?: ChainFusion<T>) {
    const credential = presentedCredential(request);
    const needs = { credential, scope: config.scope, vault: requestedVault(request, config), leases, admissions };
    const admitted = await (fusion ? admitServicePrincipal(db, needs, fusion) : admitServicePrincipal(db, needs)).catch((error: unknown) => {
      if (error instanceof AppError && error.code === 'credential_invalid') throw new AppError('credential_invalid', error.detail, { extensions: error.extensions, headers: challenge });
      throw error;
    });
    const { usage, ...rest } = admitted;
    const caller = { ...rest, requestId: request.id };
    request.runtime = caller;
    if (usage) reply.headers(operationsHeaders(usage));
    return caller;
  }
  return { admit } as RuntimeAdmission;
}

/**
 * The runtime's hooks, registered once by the plugin (index.ts): the version on every request and
 * every response, the declaration check on every route, admission on every non-public one.
 */
export function registerRuntimeAccess(app: FastifyInstance, admission: RuntimeAdmission): void {
  app.decorateRequest('runtime', null);
  // The root's 404/405 runs none of this plugin's hooks; the mount's own handler runs the
  // onRequest hook above, so a miss under the mount carries the version header too.
  app.setNotFoundHandler(answerNoRoute);
  app.addHook('onRoute', (route) => {
    if (route.method === 'HEAD' || route.config?.publicRuntime === true) return;
    completeOperationRoute(route, RUNTIME_MOUNT);
  });
  app.addHook('onRequest', async (request, reply) => {
    // Said on every answer, refusals included: the version that answered.
    reply.header(RUNTIME_VERSION_HEADER, RUNTIME_VERSION);
    // No route matched: the mount's own not-found handler (below) answers 404 or 405 as everywhere.
    if (request.is404) return;
    checkRuntimeVersion(request);
    const config = request.routeOptions.config;
    if (config.publicRuntime === true) return;
    if (!config.runtime) throw new AppError('route_not_found');
    if (config.runtime.admitsInHandler) {
      presentedCredential(request);
      return;
    }
    await admission.admit(request, reply, config.runtime);
  });
}

/** The admitted caller inside a handler. */
export function runtimeCaller(request: FastifyRequest): RuntimeCaller {
  if (!request.runtime) throw new AppError('credential_invalid');
  return request.runtime;
}
