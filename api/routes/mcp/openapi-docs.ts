// The MCP endpoint's part of the OpenAPI document, handed to api/openapi.ts by the composition root
// (api/app.ts): the JSON-RPC request and responses its route does not state (it validates its raw
// body itself), the protocol's request headers and the version header on every answer. api/openapi.ts
// imports no interface; what it must know of MCP comes from here.
import { z } from 'zod';
import type { DocumentContribution, OperationDoc, RequestHeaderParameter, ResponseHeaderComponent } from '../../openapi.ts';
import { MODERN_VERSION, PROTOCOL_VERSION_META_KEY, SERVED_VERSIONS } from './protocol.ts';
import { toolsByName } from './tools.ts';

const requestHeaders = {
  McpProtocolVersion: {
    name: 'MCP-Protocol-Version',
    in: 'header',
    required: false,
    description:
      `Required on ${MODERN_VERSION} requests and equal to params._meta["${PROTOCOL_VERSION_META_KEY}"] (else -32020); after an initialize handshake, the revision it negotiated. ` +
      'A request without it (and without _meta) is taken as 2025-03-26.',
    schema: { type: 'string', enum: [...SERVED_VERSIONS] },
    example: MODERN_VERSION,
  },
  McpMethod: {
    name: 'Mcp-Method',
    in: 'header',
    required: false,
    description: `Required on ${MODERN_VERSION} requests and equal to the body's method (else -32020). Values of the form =?base64?…?= are decoded as UTF-8.`,
    schema: { type: 'string' },
    example: 'tools/call',
  },
  McpName: {
    name: 'Mcp-Name',
    in: 'header',
    required: false,
    description: `Required on ${MODERN_VERSION} tools/call and resources/read requests and equal to params.name or params.uri (else -32020).`,
    schema: { type: 'string' },
    example: 'search_notes',
  },
} as const satisfies Record<string, RequestHeaderParameter>;
type McpRequestHeader = keyof typeof requestHeaders;

const responseHeaders = {
  McpProtocolVersion: {
    name: 'MCP-Protocol-Version',
    description: 'The protocol revision this server speaks natively; on every MCP response.',
    schema: { type: 'string', enum: [MODERN_VERSION] },
    example: MODERN_VERSION,
  },
} as const satisfies Record<string, ResponseHeaderComponent>;
type McpResponseHeader = keyof typeof responseHeaders;

const toolNames = [...toolsByName.keys()] as [string, ...string[]];
const jsonRpcId = z.union([z.string(), z.number().int()]);

const jsonRpcRequestSchema = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: jsonRpcId.optional().describe('A string or an integer, never null. Without an id the message is a notification (202, no body).'),
    method: z
      .string()
      .min(1)
      .describe(
        `server/discover, tools/list, tools/call, resources/templates/list, resources/list, resources/read; initialize and ping too before ${MODERN_VERSION}; ` +
          'notifications such as notifications/initialized. Anything else is -32601.',
      ),
    params: z
      .looseObject({
        _meta: z.record(z.string(), z.unknown()).optional().describe(`${MODERN_VERSION} requests carry {"${PROTOCOL_VERSION_META_KEY}": "${MODERN_VERSION}"}.`),
        name: z.enum(toolNames).optional().describe('tools/call: the tool.'),
        arguments: z.record(z.string(), z.unknown()).optional().describe("tools/call: the tool's arguments (tools/list gives each tool's input schema)."),
        protocolVersion: z.string().optional().describe('initialize: the version the client asks for (answered with it when served, else the newest handshake revision).'),
        uri: z.string().optional().describe('resources/read: note://{mappingId}/{+path}.'),
        cursor: z.string().optional().describe('resources/list: the nextCursor of the previous page.'),
      })
      .optional(),
  })
  .describe('One JSON-RPC 2.0 request or notification (batches are refused).')
  .meta({ id: 'JsonRpcRequest' });

const jsonRpcErrorSchema = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: jsonRpcId.nullable(),
    error: z.object({
      code: z.number().int().describe('JSON-RPC error code (docs/mcp.md).'),
      message: z.string(),
      data: z.record(z.string(), z.unknown()).optional().describe('For refusals of the HTTP edge: the REST problem code, status and requestId.'),
    }),
  })
  .meta({ id: 'JsonRpcError' });

const jsonRpcResultSchema = z
  .object({ jsonrpc: z.literal('2.0'), id: jsonRpcId, result: z.record(z.string(), z.unknown()) })
  .meta({ id: 'JsonRpcResult' });

/** The MCP route validates its raw body itself (z.unknown()); the document shows the protocol. */
const jsonRpcSchema = {
  body: jsonRpcRequestSchema,
  response: {
    200: z.union([jsonRpcResultSchema, jsonRpcErrorSchema]),
    202: z.null(),
    400: jsonRpcErrorSchema,
    401: jsonRpcErrorSchema,
    403: jsonRpcErrorSchema,
    413: jsonRpcErrorSchema,
    415: jsonRpcErrorSchema,
    429: jsonRpcErrorSchema,
    500: jsonRpcErrorSchema,
  },
};

const callMcp: OperationDoc<McpRequestHeader, McpResponseHeader> = {
  jsonRpc: true,
  headers: ['McpProtocolVersion', 'McpMethod', 'McpName'],
  everyResponseHeaders: ['McpProtocolVersion'],
  responses: {
    200: {
      description:
        `A JSON-RPC result, or a JSON-RPC error: -32601 unknown method (before ${MODERN_VERSION}), -32602 unknown tool, arguments not an object, invalid cursor or resource URI, ` +
        'resource not found (-32002 before 2026-07-28). A tool failure is a result with isError: true. ' +
        'A recognized operation counts against the MCP allowance and carries the RateLimit fields.',
      headers: ['RateLimit', 'RateLimitPolicy'],
    },
    202: { description: 'A notification (no id): accepted, no body.' },
    400: { description: 'JSON-RPC error: -32700 not JSON, -32600 not a JSON-RPC 2.0 request, -32020 a header missing or disagreeing with the body, -32022 unsupported protocol version.' },
    401: { description: 'JSON-RPC error -32001 (data.code authentication_required or invalid_token).', headers: ['WWWAuthenticate'] },
    403: { description: 'JSON-RPC error -32003 (data.code account_inactive or entitlement_required; origin_not_allowed, id null, for a browser Origin not in MCP_ALLOWED_ORIGINS).' },
    413: { description: 'JSON-RPC error (data.code payload_too_large): the body is over 16 MiB.' },
    415: { description: 'JSON-RPC error (data.code unsupported_media_type): MCP requests are application/json.' },
    429: { description: 'JSON-RPC error -32029 (data.code rate_limited or monthly_limit_exceeded): the MCP allowance.', headers: ['RetryAfter', 'RateLimit', 'RateLimitPolicy'] },
    500: { description: 'JSON-RPC error -32603 (data.code internal_error).' },
  },
};

/** The MCP endpoint's contribution, for the gateway mounted at `mount` (POST, one JSON-RPC message per request). */
export function mcpDocumentation(mount: string): DocumentContribution<McpRequestHeader, McpResponseHeader> {
  return {
    requestHeaders,
    responseHeaders,
    routes: [{ method: 'POST', url: mount, schema: { ...jsonRpcSchema, operationId: 'callMcp', docs: callMcp } }],
  };
}
