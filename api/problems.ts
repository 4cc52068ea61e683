// RFC 9457 problem+json for every error the service returns, whichever interface raised it.
// `toAppError` maps anything thrown onto one code; `logFailure` is how every interface's error
// handler logs a 5xx (REST, automation and the Product Runtime here, MCP and the console in their
// plugins): a database outage once per outage (db/availability.ts), anything else with its stack.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DatabaseUnavailableError } from '../db/availability.ts';
import type { FailedStep } from '../db/availability.ts';
import { AppError, errorCatalog, isAppError } from '../domain/errors.ts';
import type { ErrorCode, ErrorPointer } from '../domain/errors.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

declare module 'fastify' {
  interface FastifyReply {
    /** The problem code this reply answered with (api/metrics/http.ts counts them); null: not a problem. */
    problemCode: string | null;
  }
  interface FastifyRequest {
    /** The request's OpenTelemetry trace id when tracing is on (api/observability.ts), else null. */
    traceId: string | null;
  }
}

/** The documented body of every error response (also published in OpenAPI). */
export const problemSchema = z
  .object({
    type: z.string().describe('URI reference of the problem type: /problems/<code>, which describes it.'),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    instance: z.string().optional(),
    code: z.enum(Object.keys(errorCatalog) as [ErrorCode, ...ErrorCode[]]).describe('Stable machine-readable code; branch on this.'),
    requestId: z.string(),
    traceId: z.string().optional().describe('The OpenTelemetry trace id of the request, when the service traces (docs/observability.md).'),
    errors: z
      .array(z.looseObject({ pointer: z.string(), message: z.string(), code: z.string().optional(), currentRevision: z.string().nullable().optional() }))
      .optional()
      .describe('Field-level failures, each with a JSON Pointer into the request.'),
  })
  .catchall(z.unknown())
  .meta({ id: 'Problem' });

export type Problem = z.infer<typeof problemSchema>;

export function problemBody(error: AppError, request: FastifyRequest): Problem {
  return {
    type: `/problems/${error.code}`,
    title: errorCatalog[error.code].title,
    status: error.status,
    ...(error.detail ? { detail: error.detail } : {}),
    instance: request.url.split('?')[0],
    code: error.code,
    requestId: request.id,
    ...(request.traceId ? { traceId: request.traceId } : {}),
    ...error.extensions,
  };
}

export function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  reply.problemCode = error.code;
  return reply.code(error.status).type(PROBLEM_CONTENT_TYPE).send(problemBody(error, reply.request));
}

/**
 * Retry-After of `database_unavailable`, in seconds: about the length of a Postgres restart (a fast
 * shutdown and start-up take a few seconds; the outage issue 25 measured lasted 5.6 s), so a client
 * that waits it out mostly finds the database back on its first retry, while a refused request costs
 * only a refused connection attempt. Longer outages (a failover) just take a few more retries.
 */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

const databaseDetail: Record<FailedStep, string> = {
  connect: 'The service could not open a connection to its database; the step that failed sent it nothing.',
  rolled_back: 'The connection to the database was lost before the change under way was committed; the database rolled that change back.',
  unknown: 'The connection to the database was lost while a statement or a commit was in flight; if this request changes something, the change may or may not have been applied.',
};

/** The one answer to Postgres being unreachable (db/availability.ts), on every interface. */
export function databaseUnavailable(error: DatabaseUnavailableError): AppError {
  return new AppError('database_unavailable', databaseDetail[error.step], {
    extensions: { retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS },
    headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
  });
}

/**
 * Logs a failure an interface answers with `appError`: nothing below 500; a database outage as its
 * outage's one warn line (the first request to meet it writes it, later ones only count); anything
 * else at error level with its stack, under `message`.
 */
export function logFailure(request: FastifyRequest, error: unknown, appError: AppError, message = 'request failed'): void {
  if (appError.status < 500) return;
  if (error instanceof DatabaseUnavailableError) {
    error.outage.report(request.server.log, request.id);
    return;
  }
  const cause = isResponseSerializationError(error) ? { issues: error.cause.issues } : {};
  request.log.error({ err: error, ...cause }, message);
}

/** Maps anything thrown inside Fastify (ours, Fastify's own, validation) onto an AppError. */
export function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  if (error instanceof DatabaseUnavailableError) return databaseUnavailable(error);
  if (hasZodFastifySchemaValidationErrors(error)) {
    const where = (error as FastifyError).validationContext ?? 'body';
    const errors: ErrorPointer[] = error.validation.map((v) => {
      // keyword is the zod issue code; params carries the rest of the issue.
      const keys = v.params?.['keys'] as string[] | undefined;
      const base = `/${where}${v.instancePath}`.replace(/\/$/, '');
      // An unknown field points at itself, not at the object that holds it.
      const pointer = v.keyword === 'unrecognized_keys' && keys?.[0] ? `${base}/${keys[0]}` : base;
      return { pointer, message: v.message ?? 'invalid', code: v.keyword };
    });
    const first = errors[0];
    return new AppError('invalid_request', first ? `${first.pointer}: ${first.message}` : undefined, { extensions: { errors } });
  }
  const fastifyError = error as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('malformed_json', fastifyError.message);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('unsupported_media_type', fastifyError.message);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', fastifyError.message);
    default:
      break;
  }
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new AppError('invalid_request', fastifyError.message, { status: fastifyError.statusCode });
  }
  return new AppError('internal_error');
}

/** A request no route matched: 405 with Allow when the path has other methods, else 404 (an interface's own not-found handler reuses it). */
export function answerNoRoute(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0];
  const allowed = request.server.allowedMethods(request.url);
  if (allowed.length) {
    return sendProblem(reply, new AppError('method_not_allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}.`, { headers: { allow: allowed.join(', ') } }));
  }
  return sendProblem(reply, new AppError('route_not_found', `No route for ${request.method} ${path}.`));
}

export function registerProblemHandling(app: FastifyInstance): void {
  app.decorateReply('problemCode', null);
  app.decorateRequest('traceId', null);
  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error);
    logFailure(request, error, appError);
    return sendProblem(reply, appError);
  });

  app.setNotFoundHandler(answerNoRoute);

  // Each problem type URI dereferences to its description, so `type` is more than a label.
  app.get('/problems/:code', { schema: { hide: true } }, async (request, reply) => {
    const code = (request.params as { code: string }).code;
    if (!Object.hasOwn(errorCatalog, code)) return sendProblem(reply, new AppError('not_found', `No problem type ${code}.`));
    const entry = errorCatalog[code as ErrorCode];
    return { type: `/problems/${code}`, code, status: entry.status, title: entry.title };
  });
}
