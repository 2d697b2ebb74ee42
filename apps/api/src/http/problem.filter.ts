import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  Logger,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, type ProblemDetails } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { DatabaseHostUnavailableError, sqlStateOf } from '@matchplane/persistence';
import { HTTP_ANSWERS, problemType, wireCodeOf } from './http-answers';

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: ErrorCode.VALIDATION_FAILED,
  401: ErrorCode.UNAUTHENTICATED,
  403: ErrorCode.FORBIDDEN,
  404: ErrorCode.NOT_FOUND,
  405: ErrorCode.METHOD_NOT_ALLOWED,
  409: ErrorCode.CONFLICT,
  413: ErrorCode.PAYLOAD_TOO_LARGE,
  415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
  429: ErrorCode.RATE_LIMITED,
  503: ErrorCode.DEPENDENCY_UNAVAILABLE,
};

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Fastify's own errors (body parsing, limits) carry a statusCode and an FST_ code. */
interface FastifyError extends Error {
  statusCode?: number;
  code?: string;
}

/** Fastify's refusals whose status alone does not say what was wrong. */
const CODE_BY_FASTIFY_CODE: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: ErrorCode.MALFORMED_JSON,
  FST_ERR_BAD_URL: ErrorCode.MALFORMED_URL,
  FST_ERR_MAX_PARAM_LENGTH: ErrorCode.URI_TOO_LONG,
};

/** PostgreSQL refusing a string (U+0000, bad encoding): the caller's input, were it not checked first. */
const BAD_INPUT_SQLSTATES = new Set(['22021', '22P05']);
/** Lock timeout, serialization failure or deadlock outside a retrying transaction: try again. */
const CONTENDED_SQLSTATES = new Set(['55P03', '40001', '40P01']);
/** The database is unreachable, shutting down or out of connections. */
const UNAVAILABLE_SQLSTATE = /^(08|57P0[123]|53300)/;
/**
 * While PostgreSQL restarts, node-postgres raises no SQLSTATE: the socket's own error (refused,
 * reset) or its pool's and client's messages. Found by the chaos run (`npm run chaos`): these
 * answered 500 INTERNAL, and the SDKs do not retry a 500 on another replica.
 */
const UNREACHABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
const UNREACHABLE_DRIVER_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect)/;

function databaseUnreachable(exception: unknown, sqlState: string | undefined): boolean {
  if (sqlState !== undefined && UNREACHABLE_SOCKET_CODES.has(sqlState)) return true;
  if (!(exception instanceof Error)) return false;
  const driverError = (exception as { driverError?: unknown }).driverError;
  const error = driverError instanceof Error ? driverError : exception;
  // The apps' own walk of a host list (a failover under way: the chaos run's HA topology).
  if (error instanceof DatabaseHostUnavailableError) return true;
  return UNREACHABLE_DRIVER_MESSAGE.test(error.message);
}

/**
 * The driver's errors a request can run into (contention, an unreachable database, a string it
 * refuses) as coded errors: a 4xx or a 503, never a 500.
 */
function databaseError(exception: unknown): CodedError | undefined {
  const sqlState = sqlStateOf(exception);
  if (databaseUnreachable(exception, sqlState)) return databaseUnavailable();
  if (sqlState === undefined || !/^[0-9A-Z]{5}$/.test(sqlState)) return undefined;
  if (BAD_INPUT_SQLSTATES.has(sqlState)) {
    return new CodedError(
      ErrorCode.VALIDATION_FAILED,
      'The request holds a string the database cannot store',
    );
  }
  if (CONTENDED_SQLSTATES.has(sqlState)) {
    return new CodedError(ErrorCode.CONTENDED, 'The data this request needs is busy; retry');
  }
  if (UNAVAILABLE_SQLSTATE.test(sqlState)) return databaseUnavailable();
  return undefined;
}

function databaseUnavailable(): CodedError {
  return new CodedError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'The database is unavailable; retry', {
    retryAfterSeconds: 1,
  });
}

/**
 * The API's one error mapping: every failure becomes application/problem+json with a stable
 * code. Unknown errors are a 500 with a correlation id that is also in the log line; their
 * messages and stacks never reach the caller.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.send(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }

  /** Answers `exception` as problem+json; also Fastify's `frameworkErrors` handler. */
  send(exception: unknown, request: FastifyRequest, reply: FastifyReply): void {
    const { problem, headers } = this.toProblem(exception, request);
    void reply
      .status(problem.status)
      .headers(headers)
      .header('content-type', 'application/problem+json; charset=utf-8')
      .send(problem);
  }

  toProblem(
    raised: unknown,
    request: FastifyRequest,
  ): { problem: ProblemDetails; headers: Record<string, string> } {
    const instance = request.url;
    const exception =
      raised instanceof CodedError || raised instanceof HttpException
        ? raised
        : (databaseError(raised) ?? raised);
    // `instanceof` on the generic class types the code `any`.
    const coded = exception instanceof CodedError ? (exception as CodedError) : undefined;
    if (coded && wireCodeOf(coded.code) !== ErrorCode.INTERNAL) {
      const answer = HTTP_ANSWERS[coded.code];
      const { errors, extensions, challenge } = coded.extras;
      const retryAfter = coded.extras.retryAfterSeconds ?? answer.retryAfterSeconds;
      return {
        problem: {
          ...extensions,
          ...base(answer.status, wireCodeOf(coded.code), instance),
          detail: answer.detail ? answer.detail(coded.message) : coded.message,
          ...(errors ? { errors } : {}),
        },
        headers: {
          ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
          ...(challenge === undefined ? {} : { 'www-authenticate': challenge }),
        },
      };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const response = exception.getResponse();
      const messages =
        typeof response === 'string' ? response : (response as { message?: unknown }).message;
      const detail = Array.isArray(messages)
        ? messages.map((message) => String(message)).join('; ')
        : typeof messages === 'string'
          ? messages
          : exception.message;
      const code =
        CODE_BY_STATUS[status] ??
        (status >= 500 ? ErrorCode.INTERNAL : ErrorCode.VALIDATION_FAILED);
      return { problem: { ...base(status, code, instance), detail }, headers: {} };
    }
    const fastifyError = exception as FastifyError;
    if (typeof fastifyError?.statusCode === 'number' && fastifyError.statusCode < 500) {
      const status = fastifyError.statusCode;
      const code =
        CODE_BY_FASTIFY_CODE[fastifyError.code ?? ''] ??
        (exception instanceof SyntaxError && status === 400
          ? ErrorCode.MALFORMED_JSON
          : (CODE_BY_STATUS[status] ?? ErrorCode.VALIDATION_FAILED));
      return {
        problem: { ...base(status, code, instance), detail: fastifyError.message },
        headers: {},
      };
    }
    const correlationId = randomUUID();
    this.logger.error(
      `unhandled error ${correlationId} on ${request.method} ${instance}: ${(exception as Error)?.stack ?? String(exception)}`,
    );
    return {
      problem: {
        ...base(500, ErrorCode.INTERNAL, instance),
        detail: 'Internal error; quote the correlation id.',
        correlationId,
      },
      headers: {},
    };
  }
}

function base(status: number, code: ErrorCode, instance: string): ProblemDetails {
  return { type: problemType(code), title: TITLES[status] ?? 'Error', status, code, instance };
}
