// The authorization server's HTTP side (issue 47; docs/mcp.md "Authorization (OAuth 2.1)"): the
// protected-resource metadata of /api/mcp (RFC 9728), the authorization server's metadata
// (RFC 8414), dynamic client registration (RFC 7591), the token endpoint (authorization code with
// PKCE, refresh with rotation) and revocation (RFC 7009). The authorization endpoint is a console
// page (api/routes/console/oauth-consent.ts): it needs the person's session. Answers here are in
// OAuth's own error format ({error, error_description}), which OAuth clients parse, not problem+json.
import formbody from '@fastify/formbody';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsync } from 'fastify';
import type { DatabasePool } from 'slonik';
import { AppError } from '../../../domain/errors.ts';
import { exchangeCode, oauthLimits, oauthScopes, OAuthProtocolError, refreshTokens, registerClient, revokeByToken } from '../../../domain/oauth/authorization.ts';
import { sendProblem, toAppError, logFailure } from '../../problems.ts';
import { oauthBaseUrl, oauthEndpoints, RESOURCE_METADATA_PATH } from './issuer.ts';

export type OAuthDeps = { db: DatabasePool; publicBaseUrl: string | undefined };

export const oauthServer: FastifyPluginAsync<OAuthDeps> = async (app, deps) => {
  const { db, publicBaseUrl } = deps;
  await app.register(formbody, { bodyLimit: oauthLimits.registrationBytes });

  const endpointsOf = (request: FastifyRequest) => {
    const base = oauthBaseUrl(request, publicBaseUrl);
    if (!base) throw new AppError('oauth_unavailable', 'This server has no public base URL (PUBLIC_BASE_URL), so it cannot name itself as an authorization server.');
    return oauthEndpoints(base);
  };

  // Every answer may be read by a browser-based client (nothing here rides on cookies), and none is cached.
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('access-control-allow-origin', '*').header('cache-control', 'no-store');
  });
  app.setErrorHandler(async (error, request, reply) => {
    if (error instanceof OAuthProtocolError) return sendOAuthError(reply, error);
    const appError = toAppError(error);
    logFailure(request, error, appError, 'oauth request failed');
    // A malformed body is OAuth's invalid_request on the endpoints OAuth clients post to.
    if (request.method === 'POST' && appError.status < 500 && appError.code !== 'oauth_unavailable') {
      return sendOAuthError(reply, new OAuthProtocolError('invalid_request', appError.message, appError.status === 413 || appError.status === 415 ? appError.status : 400));
    }
    return sendProblem(reply, appError);
  });

  // A browser-based client's preflight: the metadata is fetched with MCP-Protocol-Version, registration posts JSON.
  for (const url of [RESOURCE_METADATA_PATH, '/.well-known/oauth-protected-resource', '/.well-known/oauth-authorization-server', '/oauth/register', '/oauth/token', '/oauth/revoke']) {
    app.route({ method: 'OPTIONS', url, schema: { hide: true }, handler: preflight });
  }

  const resourceMetadata = async (request: FastifyRequest) => {
    const e = endpointsOf(request);
    return {
      resource: e.resource,
      authorization_servers: [e.issuer],
      scopes_supported: [...oauthScopes],
      bearer_methods_supported: ['header'],
      resource_name: 'Hosted Markdown vaults (MCP)',
    };
  };
  // RFC 9728's place for /api/mcp, and the root variant clients try when that one is missing.
  app.get(RESOURCE_METADATA_PATH, { schema: { hide: true } }, resourceMetadata);
  app.get('/.well-known/oauth-protected-resource', { schema: { hide: true } }, resourceMetadata);

  app.get('/.well-known/oauth-authorization-server', { schema: { hide: true } }, async (request) => {
    const e = endpointsOf(request);
    return {
      issuer: e.issuer,
      authorization_endpoint: e.authorization,
      token_endpoint: e.token,
      registration_endpoint: e.registration,
      revocation_endpoint: e.revocation,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      scopes_supported: [...oauthScopes],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: false,
    };
  });

  app.post('/oauth/register', { schema: { hide: true }, bodyLimit: oauthLimits.registrationBytes }, async (request, reply) => {
    endpointsOf(request);
    if (!request.headers['content-type']?.startsWith('application/json')) throw new OAuthProtocolError('invalid_client_metadata', 'Send the client metadata as application/json.');
    return reply.code(201).send(await registerClient(db, request.body));
  });

  app.post('/oauth/token', { schema: { hide: true } }, async (request) => {
    const e = endpointsOf(request);
    const form = formOf(request);
    const clientId = single(form, 'client_id');
    if (!clientId) throw new OAuthProtocolError('invalid_client', 'client_id is required (public clients authenticate with none).', 401);
    const resource = single(form, 'resource');
    if (resource !== undefined && resource !== e.resource) throw new OAuthProtocolError('invalid_target', `resource must be ${e.resource}.`);
    const grantType = single(form, 'grant_type');
    if (grantType === 'authorization_code') {
      const code = single(form, 'code');
      const codeVerifier = single(form, 'code_verifier');
      const redirectUri = single(form, 'redirect_uri');
      if (!code || !codeVerifier || !redirectUri) throw new OAuthProtocolError('invalid_request', 'code, code_verifier and redirect_uri are required.');
      return exchangeCode(db, { clientId, code, codeVerifier, redirectUri, resource });
    }
    if (grantType === 'refresh_token') {
      const refreshToken = single(form, 'refresh_token');
      if (!refreshToken) throw new OAuthProtocolError('invalid_request', 'refresh_token is required.');
      return refreshTokens(db, { clientId, refreshToken, resource });
    }
    throw new OAuthProtocolError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
  });

  app.post('/oauth/revoke', { schema: { hide: true } }, async (request, reply) => {
    endpointsOf(request);
    const form = formOf(request);
    const token = single(form, 'token');
    const clientId = single(form, 'client_id');
    if (!token) throw new OAuthProtocolError('invalid_request', 'token is required.');
    if (!clientId) throw new OAuthProtocolError('invalid_client', 'client_id is required.', 401);
    await revokeByToken(db, { clientId, token });
    return reply.code(200).send();
  });
};

async function preflight(request: FastifyRequest, reply: FastifyReply) {
  return reply
    .code(204)
    .header('access-control-allow-methods', request.url.startsWith('/.well-known/') ? 'GET' : 'POST')
    .header('access-control-allow-headers', 'content-type, mcp-protocol-version')
    .header('access-control-max-age', '600')
    .send();
}

function sendOAuthError(reply: FastifyReply, error: OAuthProtocolError) {
  return reply.code(error.status).type('application/json').send({ error: error.error, error_description: error.message });
}

function formOf(request: FastifyRequest): Record<string, unknown> {
  if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
    throw new OAuthProtocolError('invalid_request', 'Send the parameters as application/x-www-form-urlencoded.');
  }
  return (request.body ?? {}) as Record<string, unknown>;
}

/** A parameter sent once (RFC 6749 §3.1: parameters must not be repeated), or undefined. */
function single(form: Record<string, unknown>, name: string): string | undefined {
  const value = form[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > 2048 || value.includes('\u0000')) throw new OAuthProtocolError('invalid_request', `${name} must be sent once, as text of at most 2,048 characters.`);
  return value;
}
