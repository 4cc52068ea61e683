// The Origin rule of MCP's Streamable HTTP transport (2025-11-25 and 2026-07-28): a request whose
// Origin header is present and not allowed is refused with 403, against DNS rebinding (a page on
// another site, or on a name rebound to this server's address, driving a browser at /api/mcp).
// A request without Origin — every non-browser client — is unaffected. The Host header is never
// evidence: under DNS rebinding it carries the attacker's name, as Origin does.

/** `MCP_ALLOWED_ORIGINS`: comma-separated browser origins (scheme://host[:port]) allowed besides PUBLIC_BASE_URL's. */
export const ALLOWED_ORIGINS_VARIABLE = 'MCP_ALLOWED_ORIGINS';

/** The origin of an absolute http(s) URL that names nothing but an origin (no path, query, fragment or credentials), or undefined. */
function originOf(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') return undefined;
  return url.origin;
}

/**
 * Parses a comma-separated allow-list. Each entry must be an origin (`https://host[:port]`, no path,
 * query, credentials or wildcard); a bad entry stops start-up naming itself, rather than being
 * dropped and refusing a browser later for a reason nobody sees.
 */
export function parseAllowedOrigins(list: string): string[] {
  const origins: string[] = [];
  for (const raw of list.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')) {
    const origin = raw.includes('*') ? undefined : originOf(raw);
    if (origin === undefined) {
      throw new Error(`${ALLOWED_ORIGINS_VARIABLE}: ${JSON.stringify(raw)} is not an origin (scheme://host[:port], e.g. https://app.example.com)`);
    }
    origins.push(origin);
  }
  return origins;
}

/**
 * The allow-list of a process: MCP_ALLOWED_ORIGINS, plus the service's own origin when
 * PUBLIC_BASE_URL names it (the console is served there). Without either, no browser origin is allowed.
 */
export function allowedOriginsFromEnvironment(env: NodeJS.ProcessEnv): string[] {
  const own = env['PUBLIC_BASE_URL'] ? new URL(env['PUBLIC_BASE_URL']).origin : undefined;
  return [...new Set([...(own ? [own] : []), ...parseAllowedOrigins(env[ALLOWED_ORIGINS_VARIABLE] ?? '')])];
}

/**
 * Whether a request's Origin header passes: absent passes; present, it must name an allowed origin
 * exactly (browsers send the serialized origin: lower-case, no default port). `null` (sandboxed
 * frames, file:) and anything unparsable never pass.
 */
export function originAllowed(header: string | string[] | undefined, allowed: ReadonlySet<string>): boolean {
  if (header === undefined) return true;
  if (Array.isArray(header)) return false;
  const origin = originOf(header);
  return origin !== undefined && origin === header && allowed.has(origin);
}

/** What a page of an allowed origin may send and read (CORS): the protocol's request headers, and the answers' headers it needs. */
export const corsHeaders = {
  allowHeaders: 'Authorization, Content-Type, MCP-Protocol-Version, Mcp-Method, Mcp-Name',
  exposeHeaders: 'MCP-Protocol-Version, WWW-Authenticate, Retry-After, RateLimit, RateLimit-Policy',
  /** How long a browser may keep a preflight's answer. */
  maxAgeSeconds: 600,
} as const;
