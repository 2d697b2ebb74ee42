import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorCode, type ProblemDetails } from '@matchplane/contracts';

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
  409: 'Conflict',
  413: 'Content Too Large',
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

/**
 * The API's one error mapping: every failure becomes application/problem+json with a stable
 * code. Unknown errors are a 500 with a correlation id that is also in the log line; their
 * messages and stacks never reach the caller.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const { problem, headers } = this.toProblem(exception, request);
    void reply
      .status(problem.status)
      .headers(headers)
      .header('content-type', 'application/problem+json; charset=utf-8')
      .send(problem);
  }

  toProblem(exception: unknown, request: FastifyRequest): { problem: ProblemDetails; headers: Record<string, string> } {
    const instance = request.url;
    if (exception instanceof ApiError) {
      return {
        problem: {
          ...base(exception.status, exception.code, instance),
          detail: exception.message,
          ...(exception.extras.errors ? { errors: exception.extras.errors } : {}),
        },
        headers: exception.extras.headers ?? {},
      };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const response = exception.getResponse();
      const messages = typeof response === 'string' ? response : (response as { message?: unknown }).message;
      const detail = Array.isArray(messages)
        ? messages.map((message) => String(message)).join('; ')
        : typeof messages === 'string'
          ? messages
          : exception.message;
      const code = CODE_BY_STATUS[status] ?? (status >= 500 ? ErrorCode.INTERNAL : ErrorCode.VALIDATION_FAILED);
      return { problem: { ...base(status, code, instance), detail }, headers: {} };
    }
    const fastifyError = exception as FastifyError;
    if (typeof fastifyError?.statusCode === 'number' && fastifyError.statusCode < 500) {
      const status = fastifyError.statusCode;
      const code =
        fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || (exception instanceof SyntaxError && status === 400)
          ? ErrorCode.MALFORMED_JSON
          : (CODE_BY_STATUS[status] ?? ErrorCode.VALIDATION_FAILED);
      return { problem: { ...base(status, code, instance), detail: fastifyError.message }, headers: {} };
    }
    const correlationId = randomUUID();
    this.logger.error(
      `unhandled error ${correlationId} on ${request.method} ${instance}: ${(exception as Error)?.stack ?? String(exception)}`,
    );
    return {
      problem: { ...base(500, ErrorCode.INTERNAL, instance), detail: 'Internal error; quote the correlation id.', correlationId },
      headers: {},
    };
  }
}

function base(status: number, code: ErrorCode, instance: string): ProblemDetails {
  return { type: `https://matchplane.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`, title: TITLES[status] ?? 'Error', status, code, instance };
}
