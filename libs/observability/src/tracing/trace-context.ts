import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Context,
  type Link,
  type Span,
  type SpanOptions,
} from '@opentelemetry/api';

/** The instrumentation scope of every span Matchplane makes. */
export const TRACER_NAME = 'matchplane';

let enabled = false;

/** Set by {@link startTracing}: spans are made only while an exporter is configured. */
export function setTracingEnabled(value: boolean): void {
  enabled = value;
}

export function tracingEnabled(): boolean {
  return enabled;
}

/**
 * The active trace context as a W3C `traceparent`, for a row or a job to carry across processes;
 * null when nothing is traced (always, with tracing off: no span is ever active then).
 */
export function activeTraceparent(): string | null {
  if (!enabled || trace.getActiveSpan() === undefined) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier['traceparent'] ?? null;
}

/** The context a carried `traceparent` names (a fresh root when there is none or it is malformed). */
export function contextFromTraceparent(traceparent: string | null | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

/** A span link to a carried `traceparent`, when it names a valid span. */
export function linkToTraceparent(traceparent: string | null | undefined): Link | undefined {
  const spanContext = trace.getSpanContext(contextFromTraceparent(traceparent));
  return spanContext && trace.isSpanContextValid(spanContext)
    ? { context: spanContext }
    : undefined;
}

/**
 * Runs `work` in a new active span, child of `parent` (the active context by default), ended
 * when `work` settles and marked as an error when it throws. With tracing off, `work` runs
 * directly with no span at all, so the hot paths pay nothing for it.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions & { parent?: Context },
  work: (span?: Span) => Promise<T>,
): Promise<T> {
  if (!enabled) return work();
  const { parent, ...spanOptions } = options;
  return trace
    .getTracer(TRACER_NAME)
    .startActiveSpan(name, spanOptions, parent ?? context.active(), async (span) => {
      try {
        return await work(span);
      } catch (error) {
        failSpan(span, error);
        throw error;
      } finally {
        span.end();
      }
    });
}

/** Records `error` on `span` and marks it failed. */
export function failSpan(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}
