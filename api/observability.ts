// Traces of the HTTP interfaces (docs/observability.md): @fastify/otel's span per request (and its
// handler), joined to the caller's trace by W3C traceparent; every log line of the request and every
// problem+json body carry the trace id. Registered at the root, before the interfaces, when the
// process traces (platform/tracing.ts); without it nothing here runs. Fastify's own request lines
// are written here then (after the span starts), in Fastify's shape.
import otel from '@fastify/otel';
import type { FastifyInstance } from 'fastify';

export async function registerTracing(app: FastifyInstance): Promise<void> {
  const instrumentation = new otel.FastifyOtelInstrumentation({
    // The request's span only: a span per lifecycle hook, or for the handler (the request's span
    // minus its hooks, named by the plugin chain), would multiply spans for little.
    instrumentHooks: false,
    instrumentHandler: false,
    // Exception messages can quote input (a validation message, a path); the status says enough.
    recordExceptions: false,
    requestHook: (span, request) => {
      // `url.path` without the query string: a callback's ?code=…&state= must not reach a collector.
      span.setAttribute('url.path', request.url.split('?')[0] ?? '/');
      span.updateName(`${request.method} ${request.routeOptions.url ?? 'unmatched'}`);
    },
  });
  await app.register(instrumentation.plugin());
  app.addHook('onRequest', async (request, reply) => {
    const span = request.opentelemetry().span;
    if (!span) {
      request.log.info({ req: request }, 'incoming request');
      return;
    }
    const traceId = span.spanContext().traceId;
    request.traceId = traceId;
    // Every later line of this request (Fastify's "request completed" included) names the trace.
    request.log = request.log.child({ traceId });
    reply.log = request.log;
    request.log.info({ req: request }, 'incoming request');
  });
  // Fastify's "request completed" line (its own is off when tracing, see api/app.ts).
  app.addHook('onResponse', async (request, reply) => {
    reply.log.info({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  });
}
