import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ErrorCode, IDEMPOTENCY_KEY_HEADER } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

function readKey(context: ExecutionContext, required: boolean): string | undefined {
  const raw = context.switchToHttp().getRequest<FastifyRequest>().headers[IDEMPOTENCY_KEY_HEADER];
  if (raw === undefined || raw === '') {
    if (!required) return undefined;
    throw new CodedError(
      ErrorCode.IDEMPOTENCY_KEY_REQUIRED,
      'This route requires an Idempotency-Key header (e.g. a UUID per logical request)',
    );
  }
  if (typeof raw !== 'string' || !KEY_PATTERN.test(raw)) {
    throw new CodedError(
      ErrorCode.VALIDATION_FAILED,
      'Idempotency-Key must be 1-255 printable ASCII characters without spaces',
    );
  }
  return raw;
}

/** The Idempotency-Key header, required: missing is a 400 IDEMPOTENCY_KEY_REQUIRED. */
export const RequiredIdempotencyKey = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string => readKey(context, true) as string,
);

/** The Idempotency-Key header when the client sent one. */
export const OptionalIdempotencyKey = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string | undefined => readKey(context, false),
);
