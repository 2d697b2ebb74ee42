export const DomainErrorCode = {
  ILLEGAL_TRANSITION: 'ILLEGAL_TRANSITION',
  INVALID_MATCH: 'INVALID_MATCH',
  EVENT_OUT_OF_ORDER: 'EVENT_OUT_OF_ORDER',
  EVENT_FOR_OTHER_AGGREGATE: 'EVENT_FOR_OTHER_AGGREGATE',
} as const;
export type DomainErrorCode = (typeof DomainErrorCode)[keyof typeof DomainErrorCode];

/** A rule of the domain was broken; `code` is stable, the message is for humans. */
export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
