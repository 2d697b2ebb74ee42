import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { ErrorCode, type ProblemDetails } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';

/** The codes the edge raises, and how it answers each (the API's own mapping agrees). */
const STATUS_BY_CODE: Partial<Record<string, number>> = {
  [ErrorCode.VALIDATION_FAILED]: 400,
  [ErrorCode.MALFORMED_JSON]: 400,
  [ErrorCode.NOT_FOUND]: 404,
  [ErrorCode.METHOD_NOT_ALLOWED]: 405,
  [ErrorCode.PAYLOAD_TOO_LARGE]: 413,
  [ErrorCode.UNSUPPORTED_MEDIA_TYPE]: 415,
  [ErrorCode.PROBE_BAD_SIGNATURE]: 403,
  [ErrorCode.PROBE_UNKNOWN_KEY]: 403,
  [ErrorCode.PROBE_WRONG_PLAYER]: 403,
  [ErrorCode.PROBE_WRONG_REGION]: 409,
  [ErrorCode.PROBE_WRONG_EDGE]: 409,
  [ErrorCode.PROBE_EXPIRED]: 410,
};

const logger = new Logger('Errors');

/**
 * Every refusal of the edge as application/problem+json with a stable code, as the API answers:
 * a {@link CodedError} with the status of its code; anything else is a logged 500 with a
 * correlation id (its message never reaches the client).
 */
export function edgeProblem(exception: unknown, method: string, instance: string): ProblemDetails {
  // `instanceof` on the generic class types the code `any`.
  const coded = exception instanceof CodedError ? (exception as CodedError) : undefined;
  const codedStatus = coded ? STATUS_BY_CODE[coded.code] : undefined;
  if (coded && codedStatus !== undefined) {
    return problem(codedStatus, coded.code as ErrorCode, instance, coded.message);
  }
  const correlationId = randomUUID();
  logger.error(
    `unhandled error ${correlationId} on ${method} ${instance}: ${String((exception as Error)?.stack ?? exception)}`,
  );
  return { ...problem(500, ErrorCode.INTERNAL, instance, 'Internal error'), correlationId };
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
