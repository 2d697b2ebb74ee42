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

/** The codes the edge raises, and how it answers each (the API's own mapping agrees). */
const STATUS_BY_CODE: Partial<Record<string, number>> = {
  [ErrorCode.VALIDATION_FAILED]: 400,
  [ErrorCode.MALFORMED_JSON]: 400,
  [ErrorCode.PROBE_BAD_SIGNATURE]: 403,
  [ErrorCode.PROBE_UNKNOWN_KEY]: 403,
  [ErrorCode.PROBE_WRONG_PLAYER]: 403,
  [ErrorCode.PROBE_WRONG_REGION]: 409,
  [ErrorCode.PROBE_WRONG_EDGE]: 409,
  [ErrorCode.PROBE_EXPIRED]: 410,
};

const CODE_BY_STATUS: Partial<Record<number, ErrorCode>> = {
  400: ErrorCode.VALIDATION_FAILED,
  404: ErrorCode.NOT_FOUND,
  405: ErrorCode.METHOD_NOT_ALLOWED,
  413: ErrorCode.PAYLOAD_TOO_LARGE,
  415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
};

/** Every refusal of the edge as application/problem+json with a stable code, as the API answers. */
@Catch()
export class EdgeProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.send(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }

  /** Answers `exception` as problem+json; also the error handler of the edge's Fastify routes. */
  send(exception: unknown, request: FastifyRequest, reply: FastifyReply): void {
    const problem = this.toProblem(exception, request);
    void reply
      .status(problem.status)
      .header('content-type', 'application/problem+json; charset=utf-8')
      .send(problem);
  }

  toProblem(exception: unknown, request: FastifyRequest): ProblemDetails {
    const instance = request.url;
    // `instanceof` on the generic class types the code `any`.
    const coded = exception instanceof CodedError ? (exception as CodedError) : undefined;
    const codedStatus = coded ? STATUS_BY_CODE[coded.code] : undefined;
    if (coded && codedStatus !== undefined) {
      return problem(codedStatus, coded.code as ErrorCode, instance, coded.message);
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const response = exception.getResponse();
      const messages =
        typeof response === 'string' ? response : (response as { message?: unknown }).message;
      const detail = Array.isArray(messages) ? messages.map(String).join('; ') : String(messages);
      const code =
        CODE_BY_STATUS[status] ??
        (status >= 500 ? ErrorCode.INTERNAL : ErrorCode.VALIDATION_FAILED);
      return problem(status, code, instance, detail);
    }
    const fastifyError = exception as { statusCode?: unknown; code?: unknown; message?: string };
    if (typeof fastifyError?.statusCode === 'number' && fastifyError.statusCode < 500) {
      const status = fastifyError.statusCode;
      const code =
        fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
        (exception instanceof SyntaxError && status === 400)
          ? ErrorCode.MALFORMED_JSON
          : (CODE_BY_STATUS[status] ?? ErrorCode.VALIDATION_FAILED);
      return problem(status, code, instance, fastifyError.message ?? 'bad request');
    }
    const correlationId = randomUUID();
    this.logger.error(
      `unhandled error ${correlationId} on ${request.method} ${instance}: ${String((exception as Error)?.stack ?? exception)}`,
    );
    return { ...problem(500, ErrorCode.INTERNAL, instance, 'Internal error'), correlationId };
  }
}

function problem(
  status: number,
  code: ErrorCode,
  instance: string,
  detail: string,
): ProblemDetails {
  return {
    type: `https://matchplane.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`,
    title: code,
    status,
    code,
    detail,
    instance,
  };
}
