// OpenTelemetry traces (docs/observability.md): off unless the standard OTEL_* variables ask for
// them. One tracer provider per process, registered globally (the OpenTelemetry API is a process
// singleton by design): W3C trace context and baggage in and out, AsyncLocalStorage for the active
// span, so @fastify/otel's request span, the Temporal interceptors' spans and the SQL spans
// (db/observability.ts) of one request share one trace.
//
// The SDK is OpenTelemetry JS 1.x because @temporalio/interceptors-opentelemetry 1.24 builds its
// workflow spans with it (sdk-trace-base 1.x); spans of both must go through one span processor.
import { trace } from '@opentelemetry/api';
import { envDetectorSync, Resource } from '@opentelemetry/resources';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/** What the API and the worker need to trace: the processor and resource (the worker's Temporal plugin exports workflow spans through them). */
export type Tracing = { spanProcessor: SpanProcessor; resource: Resource; shutdown: () => Promise<void> };

type Exporter = 'otlp' | 'console';

/**
 * Which exporter the environment asks for, or null (tracing off). On when OTEL_TRACES_EXPORTER is
 * `otlp` or `console`, or when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); off with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
 */
export function tracesExporterFrom(env: NodeJS.ProcessEnv): Exporter | null {
  if (env['OTEL_SDK_DISABLED']?.toLowerCase() === 'true') return null;
  const asked = env['OTEL_TRACES_EXPORTER']?.trim().toLowerCase();
  if (asked === 'none') return null;
  if (asked === 'otlp' || asked === 'console') return asked;
  if (asked) throw new Error(`OTEL_TRACES_EXPORTER=${asked} is not supported here; use otlp, console or none.`);
  return env['OTEL_EXPORTER_OTLP_ENDPOINT'] || env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] ? 'otlp' : null;
}

/**
 * Starts tracing for this process when the environment asks for it (null otherwise). The OTLP
 * exporter reads its endpoint, headers, timeout and protocol settings from the OTEL_EXPORTER_OTLP_*
 * variables itself; the sampler comes from OTEL_TRACES_SAMPLER / _ARG (default: parent-based,
 * always on); OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the resource.
 */
export function startTracingFromEnv(defaultServiceName: string, env: NodeJS.ProcessEnv = process.env): Tracing | null {
  const exporter = tracesExporterFrom(env);
  if (!exporter) return null;
  const spanProcessor = exporter === 'otlp' ? new BatchSpanProcessor(new OTLPTraceExporter()) : new SimpleSpanProcessor(new ConsoleSpanExporter());
  return startTracing({ serviceName: env['OTEL_SERVICE_NAME'] || defaultServiceName, spanProcessor });
}

/** Registers a tracer provider that sends every span to `spanProcessor` (tests pass an in-memory exporter's). */
export function startTracing(options: { serviceName: string; spanProcessor: SpanProcessor }): Tracing {
  const resource = new Resource({ 'service.name': options.serviceName }).merge(envDetectorSync.detect());
  const provider = new NodeTracerProvider({ resource, spanProcessors: [options.spanProcessor] });
  provider.register();
  return {
    spanProcessor: options.spanProcessor,
    resource,
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
    },
  };
}
