import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TracingConfig } from '@matchplane/config';
import { setTracingEnabled } from './trace-context';

/**
 * Where spans go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else OTEL_EXPORTER_OTLP_ENDPOINT
 * plus the signal path, as the OTLP exporter specification says; undefined = tracing off.
 */
export function tracesEndpoint(config: TracingConfig): string | undefined {
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (!config.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  return `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
}

/**
 * The process's tracer provider. Off (no endpoint configured): nothing is registered, the
 * OpenTelemetry API stays its no-op self and no span is made. On: W3C trace context propagation,
 * an AsyncLocalStorage context manager, and a BatchSpanProcessor exporting OTLP/HTTP (JSON),
 * flushed when the app shuts down.
 */
export class Tracing implements OnApplicationShutdown {
  private readonly logger = new Logger(Tracing.name);
  private readonly provider?: BasicTracerProvider;

  constructor(appName: string, config: TracingConfig) {
    const url = tracesEndpoint(config);
    if (!url) return;
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': config.OTEL_SERVICE_NAME ?? appName }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
    });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(this.provider);
    setTracingEnabled(true);
    // The origin and path only: a URL may carry credentials.
    const { origin, pathname } = new URL(url);
    this.logger.log(`exporting traces to ${origin}${pathname}`);
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.provider) return;
    setTracingEnabled(false);
    try {
      await this.provider.shutdown();
    } catch (error) {
      this.logger.warn(`flushing traces failed: ${(error as Error).message}`);
    }
    trace.disable();
    propagation.disable();
    context.disable();
  }
}
