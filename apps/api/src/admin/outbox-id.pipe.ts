import { Injectable, type PipeTransform } from '@nestjs/common';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { isOutboxId } from '@matchplane/outbox';

/** An outbox id path parameter: a positive int8 in decimal, else 400 (never a database error). */
@Injectable()
export class OutboxIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (isOutboxId(value)) return value;
    const problem = 'id must be a positive integer outbox id';
    throw new CodedError(ErrorCode.VALIDATION_FAILED, `${problem} (got "${value.slice(0, 40)}")`, {
      errors: [{ field: 'id', problems: [problem] }],
    });
  }
}
