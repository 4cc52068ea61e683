// MCP tool gateway, POST /api/mcp. Order of a request: a browser's Origin must be allowed (origins.ts)
// → a bearer token must be present → parse the
// body with the edge's JSON rules (U+0000, depth) → JSON-RPC → check headers against the body and
// classify the era → admit the caller (domain/principals/admission.ts; any of the four plans, plan
// read now) → run. A recognized request is admitted charged, one MCP operation; every other answer
// goes only to a caller admitted uncharged, and consumes nothing. A fusable get_note_content is
// admitted by the fused variant (one statement with the read). A U+0000 in tool arguments is the
// tool's invalid argument.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import type { GroupCommit } from '../../../domain/notes/group-commit.ts';
import { z } from 'zod';
import { AppError, isAppError } from '../../../domain/errors.ts';
import type { ErrorPointer } from '../../../domain/errors.ts';
import type { AllowanceLeases } from '../../../domain/allowance-lease.ts';
import type { AdmissionCache, TokenAdmission } from '../../../domain/principals/admission-cache.ts';
import { admissionRefusalCodes } from '../../../domain/principals/admission.ts';
import { acceptCharged, admitRequest, presentedToken, principalOf, withChallenge } from '../../auth.ts';
import { admitOAuthAccessToken, isOAuthAccessToken } from '../../../domain/oauth/admission.ts';
import type { GrantLimits } from '../../../domain/oauth/admission.ts';
import { oauthScopes } from '../../../domain/oauth/authorization.ts';
import type { OAuthScope } from '../../../domain/oauth/authorization.ts';
import { oauthBaseUrl, oauthEndpoints } from '../oauth/issuer.ts';
import { DatabaseUnavailableError } from '../../../db/availability.ts';
import { logFailure, toAppError } from '../../problems.ts';
import {
  acceptsBatch,
  CACHE_TTL_MS,
  classify,
  DISCOVER_PROTOCOL_VERSIONS,
  featuresOf,
  HANDSHAKE_VERSIONS,
  isServedVersion,
  MAX_BATCH_MESSAGES,
  messageHeaders,
  MODERN_VERSION,
  parseEnvelope,
  readBody,
  rpcCodes,
  rpcErrorFromAppError,
  RpcError,
  SERVED_VERSIONS,
  SERVER_DESCRIPTION,
  SERVER_INFO,
  SERVER_INFO_META_KEY,
  toolErrorResult,
} from './protocol.ts';
import type { Classified, Era, JsonRpcRequest, Revision, RpcId } from './protocol.ts';
import { corsHeaders, originAllowed } from './origins.ts';
import { listNoteResources, noteLink, noteTemplate, parseNoteUri, readNoteResource, readRefusal } from './resources.ts';
import { listedTools, toolsByName } from './tools.ts';
import type { ToolDefinition } from './tools.ts';

const capabilities = { tools: { listChanged: false }, resources: { listChanged: false } };

/**
 * The methods of each era that count as one MCP operation once recognized. 2026-07-28 has no
 * handshake and no ping (removed in that revision): there they are unknown methods.
 */
const resourceMethods = ['resources/templates/list', 'resources/list', 'resources/read'];
const recognizedMethods: Record<Era, ReadonlySet<string>> = {
  modern: new Set(['server/discover', 'tools/list', 'tools/call', ...resourceMethods]),
  legacy: new Set(['initialize', 'ping', 'server/discover', 'tools/list', 'tools/call', ...resourceMethods]),
};

function sendRpcError(reply: FastifyReply, id: RpcId, error: RpcError) {
  return reply
    .code(error.httpStatus)
    .type('application/json')
    .send({ jsonrpc: '2.0', id, error: { code: error.rpcCode, message: error.message, ...(error.data ? { data: error.data } : {}) } });
}

type Deps = {
  db: DatabasePool;
  leases: AllowanceLeases;
  admissions: AdmissionCache<TokenAdmission>;
  notes: GroupCommit;
  /** Browser origins allowed to call (MCP_ALLOWED_ORIGINS and PUBLIC_BASE_URL's origin, read by api/compose.ts). */
  allowedOrigins: readonly string[];
  /** The base URL the OAuth metadata names (api/routes/oauth/issuer.ts). */
  publicBaseUrl?: string | undefined;
};

/** The scope an operation needs when the caller holds an OAuth grant (personal access tokens may do everything). */
function scopeOf(message: JsonRpcRequest): OAuthScope | undefined {
  if (message.method === 'resources/read' || message.method === 'resources/list') return 'notes:read';
  if (message.method !== 'tools/call') return undefined;
  const tool = toolsByName.get(String(message.params?.['name']));
  return tool && !tool.annotations.readOnlyHint ? 'notes:write' : 'notes:read';
}

/** The tools a grant's scopes allow (every tool for a personal access token). */
function toolsFor(grant: GrantLimits | undefined) {
  if (!grant) return listedTools();
  return listedTools().filter((listed) => grant.scopes.includes(toolsByName.get(listed.name)!.annotations.readOnlyHint ? 'notes:read' : 'notes:write'));
}

/** Another mapping than the grant's answers exactly like a missing one. */
function outsideGrant(grant: GrantLimits | undefined, mappingId: unknown): boolean {
  return grant !== undefined && typeof mappingId === 'string' && !grant.mappingIds.includes(mappingId.toLowerCase());
}

export const mcpGateway: FastifyPluginAsyncZod<Deps> = async (app, deps) => {
  const { db, leases, admissions, notes } = deps;
  const allowedOrigins = new Set(deps.allowedOrigins);
  // What an OAuth access token's grant allows, for requests admitted with one (authorization, below).
  const grants = new WeakMap<FastifyRequest, GrantLimits>();
  // A scope refused with 403 insufficient_scope: the challenge asks for it (step-up).
  const refusedScopes = new WeakMap<FastifyRequest, readonly string[]>();

  /**
   * Admits the request's bearer token: a personal access token as every interface does
   * (api/auth.ts), an OAuth access token through its grant (domain/oauth/admission.ts: bound to this
   * endpoint's resource, the operation's `scope` granted, then judged and charged the same way).
   */
  async function admitCaller(request: FastifyRequest, reply: FastifyReply, options: { charge: boolean; scope?: OAuthScope | undefined }): Promise<void> {
    const token = presentedToken(request);
    if (!isOAuthAccessToken(token)) return admitRequest(request, reply, deps, 'mcp', { charge: options.charge });
    const base = oauthBaseUrl(request, deps.publicBaseUrl);
    if (!base) throw new AppError('invalid_token', undefined, { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } });
    const admission = { token, resource: oauthEndpoints(base).resource, leases, scope: options.scope };
    try {
      if (options.charge) {
        const { usage, grant, ...principal } = await withChallenge(() => admitOAuthAccessToken(db, { ...admission, charge: true }));
        acceptCharged(request, reply, principal, usage);
        grants.set(request, grant);
      } else {
        const { grant, ...principal } = await withChallenge(() => admitOAuthAccessToken(db, { ...admission, scope: undefined, charge: false }));
        request.principal = principal;
        grants.set(request, grant);
      }
    } catch (error) {
      if (isAppError(error) && error.code === 'insufficient_scope') {
        refusedScopes.set(request, [...new Set([...(error.extensions['grantedScopes'] as string[]), options.scope!])]);
      }
      throw error;
    }
  }
  // The raw body is parsed here, not by Fastify, so malformed JSON becomes JSON-RPC -32700.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', 'application/json; charset=utf-8'], { parseAs: 'string', bodyLimit: 16 * 1_048_576 }, (_request, body, done) => {
    done(null, body);
  });
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, _body, done) => {
    done(new AppError('unsupported_media_type', 'MCP requests are application/json.'), undefined);
  });

  app.addHook('onSend', async (request, reply) => {
    reply.header('mcp-protocol-version', MODERN_VERSION);
    // Every 401 and every insufficient scope names the protected-resource metadata (RFC 9728 §5.1),
    // where a client discovers how to get a token, and the scopes to ask for.
    const base = oauthBaseUrl(request, deps.publicBaseUrl);
    if (!base) return;
    const metadata = `resource_metadata="${oauthEndpoints(base).resourceMetadata}"`;
    if (reply.statusCode === 401) {
      const invalid = String(reply.getHeader('www-authenticate') ?? '').includes('invalid_token') ? 'error="invalid_token", ' : '';
      reply.header('www-authenticate', `Bearer ${invalid}${metadata}, scope="${oauthScopes.join(' ')}"`);
    }
    const refused = refusedScopes.get(request);
    if (reply.statusCode === 403 && refused) reply.header('www-authenticate', `Bearer error="insufficient_scope", scope="${refused.join(' ')}", ${metadata}`);
  });
  // A browser origin that is not allowed is refused before anything else, whatever the method, and
  // consumes nothing: 403, a JSON-RPC error without id (the transport spec's answer).
  // An allowed one may read the answers (CORS), and its browser's preflight is answered.
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin !== undefined) reply.header('vary', 'Origin');
    if (originAllowed(origin, allowedOrigins)) {
      if (origin === undefined) return;
      reply.header('access-control-allow-origin', origin).header('access-control-expose-headers', corsHeaders.exposeHeaders);
      if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
        return reply
          .code(204)
          .header('access-control-allow-methods', 'POST')
          .header('access-control-allow-headers', corsHeaders.allowHeaders)
          .header('access-control-max-age', String(corsHeaders.maxAgeSeconds))
          .send();
      }
      return;
    }
    request.log.info({ origin: request.headers.origin }, 'mcp request from a browser origin not allowed');
    return reply
      .code(403)
      .type('application/json')
      .send({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: rpcCodes.forbidden,
          message: 'This Origin may not call the MCP endpoint (MCP_ALLOWED_ORIGINS).',
          data: { code: 'origin_not_allowed', status: 403, requestId: request.id },
        },
      });
  });
  // Without a bearer token nothing else is looked at. With one, the caller is admitted once per
  // request, in the handler: charged when the operation is recognized, uncharged before any other answer.
  app.addHook('onRequest', async (request) => {
    if (request.method === 'POST') presentedToken(request);
  });
  app.setErrorHandler(async (error, request, reply) => {
    // The same mapping every interface uses (api/problems.ts): Fastify's 413/415/4xx keep their status.
    let appError = toAppError(error);
    logFailure(request, error, appError, 'mcp request failed');
    // A refusal of the body (415, 413) is an answer too: it goes only to an admitted caller (uncharged).
    if (request.method === 'POST' && !request.principal && appError.status < 500 && appError.status !== 401) {
      try {
        await admitCaller(request, reply, { charge: false });
      } catch (authError) {
        if (!isAppError(authError) && !(authError instanceof DatabaseUnavailableError)) throw authError;
        appError = toAppError(authError);
        logFailure(request, authError, appError, 'mcp request failed');
      }
    }
    for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
    return sendRpcError(reply, null, rpcErrorFromAppError(appError, request.id));
  });

  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .type('application/json')
      .send({
        jsonrpc: '2.0',
        id: null,
        error: { code: rpcCodes.invalidRequest, message: 'This server offers no SSE stream and no sessions; use POST.', data: { code: 'method_not_allowed', status: 405 } },
      });
  // Every method but POST (HEAD comes with GET): 405 with Allow, never a 404.
  app.route({ method: ['GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'], url: '/', schema: { hide: true }, handler: notAllowed });

  app.post(
    '/',
    {
      schema: {
        tags: ['mcp'],
        summary: 'MCP JSON-RPC endpoint (stateless 2026-07-28 and legacy 2024-11-05 clients)',
        description: 'See docs/mcp.md. Tools: ' + [...toolsByName.keys()].join(', '),
        security: [{ bearerAuth: [] }],
        body: z.unknown(),
      },
    },
    async (request, reply) => {
      // A refusal as the JSON-RPC error of this request's id. Postgres unreachable is one too
      // (database_unavailable, -32603 like every 5xx, HTTP 503 and Retry-After), on every path:
      // admission, the fused read, a tool.
      const refuse = (id: RpcId, error: unknown) => {
        if (!isAppError(error) && !(error instanceof DatabaseUnavailableError)) throw error;
        const appError = toAppError(error);
        logFailure(request, error, appError, 'mcp request failed');
        for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
        return sendRpcError(reply, id, rpcErrorFromAppError(appError, request.id));
      };
      // Every answer goes to an admitted caller (domain/principals/admission.ts): charged one MCP
      // operation for a recognized request, uncharged for any other answer. A refused admission is
      // answered here, as this request's JSON-RPC error, and admit says false: the caller then returns
      // `reply` (already sent) and answers nothing more.
      const admit = async (id: RpcId, charge: boolean, scope?: OAuthScope): Promise<boolean> => {
        try {
          await admitCaller(request, reply, { charge, scope });
          return true;
        } catch (error) {
          refuse(id, error);
          return false;
        }
      };
      const unchargedAnswer = async (id: RpcId, answer: () => FastifyReply) => ((await admit(id, false)) ? answer() : reply);

      // One JSON parser for every interface (api/edge.ts): no U+0000, bounded depth.
      const body = readBody(String(request.body ?? ''), request.id);
      if ('refusal' in body) return unchargedAnswer(body.id, () => sendRpcError(reply, body.id, body.refusal));
      const { value: parsed, argumentRefusal } = body;
      if (Array.isArray(parsed) && acceptsBatch(messageHeaders(request))) return answerBatch(parsed, request, reply, admit);
      const idOf = (value: unknown): RpcId => {
        const id = (value as { id?: unknown } | null)?.id;
        return typeof id === 'string' || typeof id === 'number' ? id : null;
      };
      let message: JsonRpcRequest;
      let classified: Classified;
      try {
        message = parseEnvelope(parsed);
        classified = classify(message, messageHeaders(request));
      } catch (error) {
        if (error instanceof RpcError) return unchargedAnswer(idOf(parsed), () => sendRpcError(reply, idOf(parsed), error));
        throw error;
      }

      // Notifications get 202 and no body, whatever they say.
      if (message.id === undefined) return unchargedAnswer(null, () => reply.code(202).send());
      const id = message.id;
      const { era } = classified;
      if (!recognizedMethods[era].has(message.method)) {
        // The 2026-07-28 transport pairs "method not found" with HTTP 404; earlier ones answer 200.
        const notFound = new RpcError(rpcCodes.methodNotFound, `Method not found: ${message.method}`, { httpStatus: era === 'modern' ? 404 : 200 });
        return unchargedAnswer(id, () => sendRpcError(reply, id, notFound));
      }
      const respond = (result: Record<string, unknown>) =>
        reply.code(200).type('application/json').send({ jsonrpc: '2.0', id, result: era === 'modern' ? { ...result, resultType: 'complete' } : result });

      if (message.method === 'tools/call') {
        const name = message.params?.['name'];
        const args = message.params?.['arguments'] ?? {};
        const tool = typeof name === 'string' ? toolsByName.get(name) : undefined;
        if (!tool) {
          return unchargedAnswer(id, () => sendRpcError(reply, id, new RpcError(rpcCodes.invalidParams, `Unknown tool: ${String(name)}`, { data: { tools: [...toolsByName.keys()] } })));
        }
        if (args === null || typeof args !== 'object' || Array.isArray(args)) {
          return unchargedAnswer(id, () => sendRpcError(reply, id, new RpcError(rpcCodes.invalidParams, 'params.arguments must be an object.')));
        }
        // The fused variant of the same charged admission (the hot read): the tool's read rides in
        // admission's statement, so admission, the operation's charge and the read are one round trip.
        const parsedArgs = argumentRefusal ? undefined : tool.input.safeParse(args);
        if (tool.fused && parsedArgs?.success && tool.fused.canFuse(parsedArgs.data as never) && !isOAuthAccessToken(presentedToken(request))) {
          let outcome: Awaited<ReturnType<typeof tool.fused.run>>;
          try {
            outcome = await withChallenge(() => tool.fused!.run({ db, rawToken: presentedToken(request), leases, admissions }, parsedArgs.data as never));
          } catch (error) {
            // Admission's refusals are protocol errors, as on the unfused path; the read's are the tool's.
            if (isAppError(error) && !admissionRefusalCodes.has(error.code)) return respond(toolErrorResult(error, request.id));
            return refuse(id, error);
          }
          acceptCharged(request, reply, outcome.principal, outcome.usage);
          return respond(isAppError(outcome.data) ? toolErrorResult(outcome.data, request.id) : toolResult(tool, outcome.data, classified.revision));
        }
      }

      // A recognized operation: admitted charged (one MCP operation), then run.
      if (!(await admit(id, true, scopeOf(message)))) return reply;
      let result: Record<string, unknown>;
      try {
        result = await run(message, classified, request, argumentRefusal);
      } catch (error) {
        if (error instanceof DatabaseUnavailableError) return refuse(id, error);
        // A recognized method's refusal of its params (a bad URI or cursor, a note not found): after
        // the charge, as a tool call with invalid arguments is charged.
        if (error instanceof RpcError) return sendRpcError(reply, id, error);
        throw error;
      }
      return respond(result);
    },
  );

  /**
   * A 2025-03-26 batch: each message is answered by this same route as a request of its own (the
   * same admission, charge and answer as if sent alone, in order), and the answers are returned
   * together; notifications add none, and a batch of notifications only is 202. The caller is
   * admitted uncharged first, so a refused token is one error, not one per message. The batch is
   * parsed whole: what the edge refuses anywhere in it (U+0000, depth) refuses it.
   */
  async function answerBatch(messages: unknown[], request: FastifyRequest, reply: FastifyReply, admit: (id: RpcId, charge: boolean) => Promise<boolean>) {
    if (!(await admit(null, false))) return reply;
    if (messages.length === 0 || messages.length > MAX_BATCH_MESSAGES) {
      const why = messages.length === 0 ? 'An empty batch is not a JSON-RPC request.' : `A batch carries at most ${MAX_BATCH_MESSAGES} messages.`;
      return sendRpcError(reply, null, new RpcError(rpcCodes.invalidRequest, why, { httpStatus: 400, data: { code: 'invalid_request', status: 400, limit: MAX_BATCH_MESSAGES, requestId: request.id } }));
    }
    const forwarded = Object.fromEntries(
      // host too: without PUBLIC_BASE_URL an OAuth token's resource is this request's loopback origin.
      ['authorization', 'content-type', 'mcp-protocol-version', 'host'].flatMap((name) => (typeof request.headers[name] === 'string' ? [[name, request.headers[name] as string]] : [])),
    );
    const answers: unknown[] = [];
    for (const message of messages) {
      // A batch inside a batch is not a message (and would nest the fan-out).
      if (Array.isArray(message)) {
        answers.push({ jsonrpc: '2.0', id: null, error: { code: rpcCodes.invalidRequest, message: 'A batch member must be a JSON-RPC message object.' } });
        continue;
      }
      const answer = await app.inject({ method: 'POST', url: request.url, headers: forwarded, payload: JSON.stringify(message) });
      if (answer.body !== '') answers.push(JSON.parse(answer.body));
      for (const name of ['ratelimit', 'ratelimit-policy']) if (answer.headers[name] !== undefined) reply.header(name, answer.headers[name]);
    }
    return answers.length === 0 ? reply.code(202).send() : reply.code(200).type('application/json').send(answers);
  }

  async function run(message: JsonRpcRequest, { era, revision }: Classified, request: FastifyRequest, argumentRefusal: AppError | undefined): Promise<Record<string, unknown>> {
    const serverInfoMeta = { [SERVER_INFO_META_KEY]: serverInfoFor(MODERN_VERSION) };
    switch (message.method) {
      case 'initialize': {
        // The requested revision when served; otherwise the newest one a handshake can negotiate
        // (2026-07-28 is chosen through server/discover, never by a handshake that did not ask for it).
        const requested = message.params?.['protocolVersion'];
        const protocolVersion: Revision = isServedVersion(requested) ? requested : HANDSHAKE_VERSIONS[0];
        return { protocolVersion, capabilities, serverInfo: serverInfoFor(protocolVersion), instructions: instructionsText };
      }
      case 'ping':
        return {};
      case 'server/discover':
        return {
          server: { name: SERVER_INFO.name, version: SERVER_INFO.version, protocolVersion: MODERN_VERSION },
          protocolVersions: [...DISCOVER_PROTOCOL_VERSIONS],
          supportedVersions: [...SERVED_VERSIONS],
          capabilities,
          instructions: instructionsText,
          ttlMs: CACHE_TTL_MS,
          cacheScope: 'public',
          _meta: serverInfoMeta,
        };
      case 'tools/list':
        // One page: no cursor was ever handed out, so any cursor is invalid (a recognized operation, charged).
        if (message.params?.['cursor'] !== undefined) throw new RpcError(rpcCodes.invalidParams, 'Invalid cursor: tools/list has a single page and hands out no cursor.', { data: { cursor: message.params['cursor'] } });
        // A grant's list is its own (what its scopes allow): never a shared cache entry.
        if (grants.has(request)) return era === 'modern' ? { tools: toolsFor(grants.get(request)), ttlMs: CACHE_TTL_MS, cacheScope: 'private' } : { tools: toolsFor(grants.get(request)) };
        return era === 'modern' ? { tools: listedTools(), ttlMs: CACHE_TTL_MS, cacheScope: 'public' } : { tools: listedTools() };
      case 'tools/call':
        // An argument the edge refused (U+0000) is an invalid argument like any other: the tool never sees it.
        if (argumentRefusal) return toolErrorResult(argumentRefusal, request.id);
        return callTool(String(message.params?.['name']), (message.params?.['arguments'] as Record<string, unknown> | undefined) ?? {}, request, revision);
      case 'resources/templates/list':
        return era === 'modern' ? { resourceTemplates: [noteTemplate], ttlMs: CACHE_TTL_MS, cacheScope: 'public' } : { resourceTemplates: [noteTemplate] };
      case 'resources/list':
      case 'resources/read': {
        const call = { db, caller: mcpCaller(request, message.method), revision };
        const grant = grants.get(request);
        if (message.method === 'resources/read' && outsideGrant(grant, parseNoteUri(message.params?.['uri']).mappingId)) {
          const { mappingId } = parseNoteUri(message.params?.['uri']);
          throw readRefusal(new AppError('mapping_not_found', undefined, { extensions: { mappingId } }), String(message.params?.['uri']), revision, request.id);
        }
        const result = message.method === 'resources/list' ? await listNoteResources(call, message.params?.['cursor']) : await readNoteResource(call, message.params?.['uri']);
        // A grant lists its own mappings' notes only (a page may then hold fewer; nextCursor still leads on).
        if (grant && 'resources' in result) result.resources = result.resources.filter((resource) => !outsideGrant(grant, parseNoteUri(resource.uri).mappingId));
        // A vault's notes change at any time and are the caller's own: fresh on every read, never shared.
        return era === 'modern' ? { ...result, ttlMs: 0, cacheScope: 'private' } : result;
      }
      default:
        throw new RpcError(rpcCodes.methodNotFound, `Method not found: ${message.method}`);
    }
  }

  async function callTool(name: string, rawArgs: Record<string, unknown>, request: FastifyRequest, revision: Revision): Promise<Record<string, unknown>> {
    const tool = toolsByName.get(name)!;
    const parsed = tool.input.safeParse(rawArgs);
    try {
      if (!parsed.success) {
        const errors: ErrorPointer[] = parsed.error.issues.map((i) => ({
          pointer: `/arguments${i.path.length ? `/${i.path.join('/')}` : i.code === 'unrecognized_keys' ? `/${(i as { keys?: string[] }).keys?.[0] ?? ''}` : ''}`,
          message: i.message,
          code: i.code,
        }));
        throw new AppError('invalid_request', `${errors[0]!.pointer}: ${errors[0]!.message}`, { extensions: { errors } });
      }
      const mappingId = (parsed.data as { mappingId?: unknown }).mappingId;
      if (outsideGrant(grants.get(request), mappingId)) throw new AppError('mapping_not_found', undefined, { extensions: { mappingId } });
      return toolResult(tool, await tool.run({ db, notes, principal: principalOf(request), requestId: request.id }, parsed.data as never), revision);
    } catch (error) {
      if (isAppError(error)) return toolErrorResult(error, request.id);
      throw error;
    }
  }
};

/** The server's Implementation as a revision defines it (description from 2025-11-25). */
function serverInfoFor(revision: Revision) {
  return featuresOf(revision).implementationDescription ? { ...SERVER_INFO, description: SERVER_DESCRIPTION } : SERVER_INFO;
}

/** The caller of a resource method, shaped as a tool's (resource methods only read: the source names no event). */
function mcpCaller(request: FastifyRequest, method: string) {
  return { accountId: principalOf(request).account.id, requestId: request.id, source: `mcp:${method}` as const };
}

/**
 * A successful tool result: the data as JSON text and as structuredContent, then a resource link
 * for each note it names, for revisions that have resource links (2025-06-18 on).
 */
function toolResult(tool: ToolDefinition, data: unknown, revision: Revision) {
  const links = tool.names && featuresOf(revision).resourceLinks ? tool.names(data as never).map((note) => noteLink(note.mappingId, note)) : [];
  return { content: [{ type: 'text', text: JSON.stringify(data) }, ...links], structuredContent: data };
}

const instructionsText =
  'Hosted Markdown vaults. Every vault tool takes a mappingId. Writes preview by default (dryRun true); ' +
  'apply with dryRun false and an idempotencyKey; changing an existing note needs its current revision as expectedHash.';
