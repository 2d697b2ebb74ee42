import { CodedError, LibraryErrorCode } from '@matchplane/errors';
import type { EnvelopeProblem } from './events.schemas';

/**
 * An envelope that must not be written (builder) or cannot be delivered (delivery-side parser).
 * `problems` lists every fault found, each with its field, not just the first.
 */
export class InvalidEnvelopeError extends CodedError<typeof LibraryErrorCode.INVALID_ENVELOPE> {
  override name = 'InvalidEnvelopeError';

  constructor(
    readonly problems: readonly EnvelopeProblem[],
    /** Which envelope, as far as it could be read: event, aggregate and revision. */
    readonly subject: string,
  ) {
    super(
      LibraryErrorCode.INVALID_ENVELOPE,
      `invalid outbox envelope (${subject}): ${problems.map((problem) => `${problem.field} ${problem.message}`).join('; ')}`,
    );
  }
}
