// Where the authorization server and the MCP resource live, as a client must see them: the base
// URL is PUBLIC_BASE_URL when configured (behind a proxy the request's own Host is not to be
// trusted), else the request's own origin, but only on a loopback host (a local `npm start`).
// Without either there is no issuer: metadata answers 404 and the MCP 401 names none.
import type { FastifyRequest } from 'fastify';

export const MCP_RESOURCE_PATH = '/api/mcp';
/** The protected-resource metadata of the MCP endpoint (RFC 9728 §3.1: the well-known segment before the path). */
export const RESOURCE_METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_RESOURCE_PATH}`;

const LOOPBACK_HOSTNAMES = new Set(['127.0.0.1', '[::1]', 'localhost']);

export function oauthBaseUrl(request: FastifyRequest, publicBaseUrl: string | undefined): string | null {
  if (publicBaseUrl) return new URL(publicBaseUrl).origin;
  return LOOPBACK_HOSTNAMES.has(request.hostname) ? `${request.protocol}://${request.host}` : null;
}

/** The base's issuer, MCP resource and the endpoints' URLs. */
export function oauthEndpoints(base: string) {
  return {
    issuer: base,
    resource: `${base}${MCP_RESOURCE_PATH}`,
    resourceMetadata: `${base}${RESOURCE_METADATA_PATH}`,
    authorization: `${base}/console/oauth/authorize`,
    token: `${base}/oauth/token`,
    registration: `${base}/oauth/register`,
    revocation: `${base}/oauth/revoke`,
  };
}
