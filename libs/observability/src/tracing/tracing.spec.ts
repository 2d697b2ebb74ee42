import { Logger } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
import { activeTraceparent, inSpan, tracingEnabled } from './trace-context';
import { Tracing, tracesEndpoint } from './tracing';

describe(Tracing.name, () => {
  // The export to a closed port fails at shutdown (logged, not thrown): not this test's subject.
  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  afterAll(() => {
    Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose', 'fatal']);
  });

  it('takes the traces URL as it is, else the base URL plus /v1/traces, else none (tracing off)', () => {
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom' })).toBe(
      'http://c:4318/custom',
    );
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toBe(
      'http://c:4318/v1/traces',
    );
    expect(tracesEndpoint({})).toBeUndefined();
  });

  it('unconfigured, registers nothing: no span is made and rows carry no trace context', async () => {
    const tracing = new Tracing('api', {});
    expect(tracingEnabled()).toBe(false);
    await inSpan('work', {}, (span) => {
      expect(span).toBeUndefined();
      expect(trace.getActiveSpan()).toBeUndefined();
      expect(activeTraceparent()).toBeNull();
      return Promise.resolve();
    });
    await tracing.onApplicationShutdown();
  });

  it('configured, makes spans whose context is carried as a W3C traceparent, and shuts down', async () => {
    const tracing = new Tracing('api', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    try {
      expect(tracingEnabled()).toBe(true);
      const carried = await inSpan('work', {}, (span) => {
        const { traceId, spanId } = span!.spanContext();
        expect(activeTraceparent()).toBe(`00-${traceId}-${spanId}-01`);
        return Promise.resolve(traceId);
      });
      expect(carried).toMatch(/^[0-9a-f]{32}$/);
    } finally {
      await tracing.onApplicationShutdown();
    }
    expect(tracingEnabled()).toBe(false);
  });
});
