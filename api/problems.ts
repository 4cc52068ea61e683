// RFC 9457 problem+json for every error the service returns, whichever interface raised it.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError, errorCatalog, isAppError } from '../domain/errors.ts';
import type { ErrorCode, ErrorPointer } from '../domain/errors.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

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
    ...error.extensions,
  };
}

export function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type(PROBLEM_CONTENT_TYPE).send(problemBody(error, reply.request));
}

/** Maps anything thrown inside Fastify (ours, Fastify's own, validation) onto an AppError. */
export function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
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

export function registerProblemHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error);
    if (appError.status >= 500) {
      const cause = isResponseSerializationError(error) ? { issues: error.cause.issues } : {};
      request.log.error({ err: error, ...cause }, 'request failed');
    }
    return sendProblem(reply, appError);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const allowed = request.server.allowedMethods(request.url);
    if (allowed.length) {
      return sendProblem(reply, new AppError('method_not_allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}.`, { headers: { allow: allowed.join(', ') } }));
    }
    return sendProblem(reply, new AppError('route_not_found', `No route for ${request.method} ${path}.`));
  });

  // Each problem type URI dereferences to its description, so `type` is more than a label.
  app.get('/problems/:code', { schema: { hide: true } }, async (request, reply) => {
    const code = (request.params as { code: string }).code;
    if (!Object.hasOwn(errorCatalog, code)) return sendProblem(reply, new AppError('not_found', `No problem type ${code}.`));
    const entry = errorCatalog[code as ErrorCode];
    return { type: `/problems/${code}`, code, status: entry.status, title: entry.title };
  });
}
