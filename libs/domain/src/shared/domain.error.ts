import { CodedError, DomainErrorCode } from '@matchplane/errors';

export { DomainErrorCode };

/** A rule of libs/domain refused a command or a history; `details` says which values. */
export class DomainError extends CodedError<DomainErrorCode> {
  override name = 'DomainError';

  constructor(
    code: DomainErrorCode,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(code, message);
  }
}
