import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
} from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { TRACER_NAME, tracingEnabled } from '@matchplane/observability';

const spans = new WeakMap<FastifyRequest, Span>();

/**
 * A SERVER span per HTTP request, child of the caller's `traceparent` header when it sends one,
 * made active around the route's handler (guards, interceptors, the service, its transaction), so
 * what the request writes to the outbox carries its trace. Hand-made in three Fastify hooks
 * rather than through @opentelemetry/instrumentation-http/-fastify: those patch modules as they
 * load (the app must start through a preloaded register file) and add a dependency tree for what
 * is three hooks here. Installed only while tracing is on.
 */
export function traceRequests(fastify: FastifyInstance): void {
  if (!tracingEnabled()) return;
  const tracer = trace.getTracer(TRACER_NAME);
  fastify.addHook('onRequest', (request, _reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    spans.set(
      request,
      tracer.startSpan(
        `${request.method}`,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': request.method,
            'url.path': request.url.split('?')[0],
          },
        },
        parent,
      ),
    );
    done();
  });
  // After the body is parsed (its stream callbacks would lose the context), right before the handler,
  // which Fastify calls synchronously from `done`: everything it awaits runs in the span.
  fastify.addHook('preHandler', (request, _reply, done) => {
    const span = spans.get(request);
    if (!span) return done();
    context.with(trace.setSpan(context.active(), span), done);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    if (span) {
      const route = request.routeOptions.url;
      if (route) {
        span.updateName(`${request.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      spans.delete(request);
    }
    done();
  });
  fastify.addHook('onRequestAbort', (request, done) => {
    spans.get(request)?.end();
    spans.delete(request);
    done();
  });
}
