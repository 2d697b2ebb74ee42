import helmet, { type HelmetOptions } from 'helmet';
import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { WsAdapter } from '@nestjs/platform-ws';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiConfig } from '../api.config';
import { ErrorCode } from '@matchplane/contracts';
import { logRequests } from '@matchplane/observability';
import { CodedError } from '@matchplane/errors';
import { describeJsonProblem, inspectJson, type JsonProblem } from './json-limits';
import { ProblemFilter } from './problem.filter';
import { clientErrorHandler, requestTimeoutOptions } from './request-timeouts';
import { traceRequests } from './request-tracing';

/**
 * helmet's strict defaults, or for a console served over plain HTTP on a LAN the same without the
 * two headers that send a browser to https (upgrade-insecure-requests, HSTS).
 */
export function plainHttpHeaders(plainHttp: boolean): HelmetOptions {
  if (!plainHttp) return {};
  return {
    contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
    strictTransportSecurity: false,
  };
}

/** Flattens class-validator errors (nested DTOs included) into per-field problems. */
export function fieldProblems(
  errors: ValidationError[],
  parent = '',
): { field: string; problems: string[] }[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = error.constraints ? [{ field, problems: Object.values(error.constraints) }] : [];
    return [...own, ...fieldProblems(error.children ?? [], field)];
  });
}

/** 400 VALIDATION_FAILED naming every field class-validator refused (DTOs and console forms alike). */
export function validationFailed(errors: ValidationError[]): CodedError {
  const problems = fieldProblems(errors);
  return new CodedError(
    ErrorCode.VALIDATION_FAILED,
    problems.map((p) => `${p.field}: ${p.problems.join(', ')}`).join('; '),
    { errors: problems },
  );
}

/** A JSON limit broken by a request: 400 JSON_TOO_DEEP, or VALIDATION_FAILED naming the field. */
function jsonProblemError(problem: JsonProblem): CodedError {
  const detail = describeJsonProblem(problem);
  if (problem.kind === 'too-deep') return new CodedError(ErrorCode.JSON_TOO_DEEP, detail);
  return new CodedError(ErrorCode.VALIDATION_FAILED, detail, {
    errors: [{ field: problem.path, problems: [detail] }],
  });
}

/**
 * The API's Fastify adapter, shared by main.ts and in-process tests: the body limit, the proxies
 * trusted for the client address (`request.ip`, which per-address limits count), and Fastify's
 * own refusals before routing (a malformed percent-encoding, a path parameter longer than
 * maxParamLength, a request too slow to arrive) answered as problem+json like every other error. These options exist only at
 * construction, hence a factory beside {@link configureApi}.
 */
export function createApiAdapter(
  config: Pick<
    ApiConfig,
    | 'API_BODY_LIMIT_BYTES'
    | 'API_TRUST_PROXY_HOPS'
    | 'API_REQUEST_TIMEOUT_MS'
    | 'API_HEADERS_TIMEOUT_MS'
  >,
): FastifyAdapter {
  const problems = new ProblemFilter();
  return new FastifyAdapter({
    ...requestTimeoutOptions(config),
    clientErrorHandler: clientErrorHandler(problems),
    bodyLimit: config.API_BODY_LIMIT_BYTES,
    trustProxy: config.API_TRUST_PROXY_HOPS > 0 ? config.API_TRUST_PROXY_HOPS : false,
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
      problems.send(error, request, reply),
  });
}

/**
 * Cross-cutting HTTP behaviour, shared by main.ts and in-process tests: strict DTO validation
 * (unknown fields rejected), JSON limits (depth, NUL) on bodies, query strings and path
 * parameters, and problem+json for every error, including Fastify's own (bad JSON, oversized
 * bodies) and unknown routes. Create the app with {@link createApiAdapter} and
 * `bodyParser: false`: the body parsers are installed here.
 */
export function configureApi(app: NestFastifyApplication): void {
  const { API_JSON_MAX_DEPTH: maxDepth, OPERATOR_CONSOLE_PLAIN_HTTP: plainHttp } =
    app.get(ApiConfig);
  // Notifications are plain WebSockets (ws) on the same server; without this Nest would look for socket.io.
  app.useWebSocketAdapter(new WsAdapter(app));
  const filter = new ProblemFilter();
  app.useGlobalFilters(filter);
  app.useGlobalPipes(
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      exceptionFactory: validationFailed,
    }),
  );
  const fastify = app.getHttpAdapter().getInstance();
  traceRequests(fastify);
  logRequests(app);
  // Security headers on every answer (problem+json included). The API serves JSON only (the
  // OpenAPI document, no Swagger UI page), so helmet's strict defaults cost nothing. Its
  // middleware is built once: @fastify/helmet built it (and parsed its policy) again for every
  // request, 4 % of the API's CPU under heartbeats.
  const securityHeaders = helmet(plainHttpHeaders(plainHttp));
  fastify.addHook('onRequest', (request, reply, done) =>
    securityHeaders(request.raw, reply.raw, (error?: unknown) => done(error as Error | undefined)),
  );
  // JSON only. Our own parser because Nest turns Fastify's SyntaxError into a generic 400, losing
  // the MALFORMED_JSON code; an empty body reads as no body, so DTO validation names what is missing.
  fastify.removeContentTypeParser(['application/json', 'text/plain']);
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    (_request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') return done(null, undefined);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text) as unknown;
      } catch (error) {
        return done(
          new CodedError(
            ErrorCode.MALFORMED_JSON,
            `The body is not valid JSON: ${(error as Error).message}`,
          ),
          undefined,
        );
      }
      const problem = inspectJson(parsed, maxDepth);
      if (problem) return done(jsonProblemError(problem), undefined);
      done(null, parsed);
    },
  );
  // Query strings and path parameters reach SQL too; bodies were checked by the parser.
  fastify.addHook('preValidation', (request: FastifyRequest, _reply, done) => {
    const problem =
      inspectJson(request.params, maxDepth, 'path') ??
      inspectJson(request.query, maxDepth, 'query');
    done(problem ? jsonProblemError(problem) : undefined);
  });
  // Stamped before body parsing and auth, so a probe's RTT excludes our own processing.
  fastify.addHook('onRequest', (request, _reply, done) => {
    (request as typeof request & { receivedAt?: number }).receivedAt = Date.now();
    done();
  });
}
