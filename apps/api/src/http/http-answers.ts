import { ErrorCode } from '@matchplane/contracts';
import { DomainErrorCode, LibraryErrorCode, type AnyErrorCode } from '@matchplane/errors';

/** How the API answers one error code. */
export interface HttpAnswer {
  readonly status: number;
  /** The wire code of the problem, when the error's own code is not one (a library's code). */
  readonly as?: ErrorCode;
  /** The problem's detail from the error's message, when it is not the message itself. */
  readonly detail?: (message: string) => string;
  /** Seconds for Retry-After when the error does not say. */
  readonly retryAfterSeconds?: number;
}

const conflict: HttpAnswer = { status: 409, as: ErrorCode.CONFLICT };

/**
 * The API's one mapping from error code to HTTP status and problem code (the problem's `type` is
 * derived from that code: `problemType`). Services and libraries throw CodedErrors and never
 * choose a status; a test walks every code (http-answers.spec.ts).
 */
export const HTTP_ANSWERS: Readonly<Record<AnyErrorCode, HttpAnswer>> = {
  // The wire codes (libs/contracts ErrorCode), each answered as itself.
  [ErrorCode.VALIDATION_FAILED]: { status: 400 },
  [ErrorCode.MALFORMED_JSON]: { status: 400 },
  [ErrorCode.PAYLOAD_TOO_LARGE]: { status: 413 },
  [ErrorCode.UNSUPPORTED_MEDIA_TYPE]: { status: 415 },
  [ErrorCode.NOT_FOUND]: { status: 404 },
  [ErrorCode.METHOD_NOT_ALLOWED]: { status: 405 },
  [ErrorCode.UNAUTHENTICATED]: { status: 401 },
  [ErrorCode.FORBIDDEN]: { status: 403 },
  [ErrorCode.CONFLICT]: { status: 409 },
  [ErrorCode.RATE_LIMITED]: { status: 429 },
  [ErrorCode.NOT_CONFIGURED]: { status: 503 },
  [ErrorCode.DEPENDENCY_UNAVAILABLE]: { status: 503 },
  [ErrorCode.INTERNAL]: { status: 500 },
  [ErrorCode.DEAD_LETTER_NOT_FOUND]: { status: 404 },
  [ErrorCode.INVALID_CURSOR]: { status: 400 },
  [ErrorCode.NOT_DEAD_LETTERED]: { status: 409 },
  [ErrorCode.INVALID_CREDENTIAL]: {
    status: 401,
    detail: (message) => `The credential was not accepted: ${message}`,
  },
  [ErrorCode.UNKNOWN_IDENTITY_PROVIDER]: { status: 400 },
  [ErrorCode.IDEMPOTENCY_KEY_REQUIRED]: { status: 400 },
  [ErrorCode.IDEMPOTENCY_KEY_REUSED]: { status: 422 },
  [ErrorCode.IDEMPOTENCY_KEY_IN_PROGRESS]: { status: 409 },
  [ErrorCode.UNKNOWN_REGION]: { status: 404 },
  [ErrorCode.UNKNOWN_MODE]: { status: 422 },
  [ErrorCode.PROBE_CHALLENGE_NOT_FOUND]: { status: 404 },
  [ErrorCode.PROBE_NONCE_MISMATCH]: { status: 403 },
  [ErrorCode.PROBE_WRONG_PLAYER]: { status: 403 },
  [ErrorCode.PROBE_WRONG_REGION]: { status: 409 },
  [ErrorCode.PROBE_ALREADY_ANSWERED]: { status: 409 },
  [ErrorCode.PROBE_EXPIRED]: { status: 410 },
  [ErrorCode.PROBE_BAD_SIGNATURE]: { status: 403 },
  [ErrorCode.PROBE_UNKNOWN_KEY]: { status: 403 },
  [ErrorCode.PROBE_WRONG_EDGE]: { status: 409 },
  [ErrorCode.PROBE_MEASUREMENT_REPLAYED]: { status: 409 },
  [ErrorCode.PROBE_MEASUREMENT_EXPIRED]: { status: 410 },
  [ErrorCode.NO_LATENCY_MEASURED]: { status: 409 },
  [ErrorCode.TICKET_ALREADY_LIVE]: { status: 409 },
  [ErrorCode.COOLDOWN_ACTIVE]: { status: 429 },
  [ErrorCode.TICKET_NOT_FOUND]: { status: 404 },
  [ErrorCode.PLAYER_NOT_FOUND]: { status: 404 },
  [ErrorCode.BLOCK_LIST_FULL]: { status: 409 },
  [ErrorCode.AVOID_LIST_FULL]: { status: 409 },
  [ErrorCode.TICKET_NOT_CANCELLABLE]: { status: 409 },
  [ErrorCode.TICKET_FINISHED]: { status: 409 },
  [ErrorCode.PARTY_NOT_FOUND]: { status: 404 },
  [ErrorCode.PARTY_ALREADY_JOINED]: { status: 409 },
  [ErrorCode.PARTY_INVITE_INVALID]: { status: 404 },
  [ErrorCode.PARTY_FULL]: { status: 409 },
  [ErrorCode.PARTY_LEADER_ONLY]: { status: 403 },
  [ErrorCode.PARTY_IN_QUEUE]: { status: 409 },
  [ErrorCode.PARTY_TOO_SMALL]: { status: 409 },
  [ErrorCode.PARTY_TOO_LARGE]: { status: 409 },
  [ErrorCode.LOBBY_NOT_FOUND]: { status: 404 },
  [ErrorCode.LOBBY_INVITE_INVALID]: { status: 404 },
  [ErrorCode.LOBBY_ALREADY_JOINED]: { status: 409 },
  [ErrorCode.LOBBY_FULL]: { status: 409 },
  [ErrorCode.LOBBY_OWNER_ONLY]: { status: 403 },
  [ErrorCode.LOBBY_ALREADY_STARTED]: { status: 409 },
  [ErrorCode.LOBBY_PLAYER_QUEUED]: { status: 409 },
  [ErrorCode.LOBBY_NOT_MEMBER]: { status: 404 },
  [ErrorCode.LOBBY_REGION_NOT_OFFERED]: { status: 422 },
  [ErrorCode.LOBBY_TEAMS_INVALID]: { status: 422 },
  [ErrorCode.BACKFILL_NOT_FOUND]: { status: 404 },
  [ErrorCode.BACKFILL_CONFLICT]: { status: 409 },
  [ErrorCode.BACKFILL_NO_OPEN_SLOTS]: { status: 409 },
  [ErrorCode.SERVER_PROTOCOL_UNSUPPORTED]: { status: 400 },
  [ErrorCode.ASSIGNMENTS_NOT_READY]: { status: 409 },
  [ErrorCode.MATCH_STATE_CONFLICT]: { status: 409 },
  [ErrorCode.RESULT_CONFLICT]: { status: 409 },
  [ErrorCode.QUEUE_PAUSED]: { status: 409 },
  [ErrorCode.QUEUE_DRAINING]: { status: 409 },
  [ErrorCode.UNKNOWN_PARTICIPANT]: { status: 400 },
  [ErrorCode.CONTENDED]: { status: 503, retryAfterSeconds: 1 },
  [ErrorCode.ASSIGNMENT_NOT_READY]: { status: 409 },
  [ErrorCode.JSON_TOO_DEEP]: { status: 400 },
  [ErrorCode.MALFORMED_URL]: { status: 400 },
  [ErrorCode.URI_TOO_LONG]: { status: 414 },
  [ErrorCode.REQUEST_TIMEOUT]: { status: 408 },
  [ErrorCode.ALLOCATION_ENDED]: { status: 401 },
  [ErrorCode.MATCH_ENDED]: { status: 410 },
  [ErrorCode.NOT_AWAITING_ACCEPTANCE]: { status: 409 },
  [ErrorCode.ACCEPTANCE_ALREADY_ANSWERED]: { status: 409 },
  [ErrorCode.PRESENCE_CONFLICT]: { status: 409 },
  [ErrorCode.PLAYER_ABANDONED]: { status: 410 },

  // libs/domain rule violations: the request met a state the rule forbids, or bad input.
  [DomainErrorCode.ILLEGAL_TRANSITION]: conflict,
  [DomainErrorCode.REQUEUE_NOT_ALLOWED]: conflict,
  [DomainErrorCode.HEARTBEAT_NOT_EXPIRED]: conflict,
  [DomainErrorCode.SEARCH_NOT_TIMED_OUT]: conflict,
  [DomainErrorCode.MATCH_MISMATCH]: conflict,
  [DomainErrorCode.INVALID_ARGUMENT]: { status: 400, as: ErrorCode.VALIDATION_FAILED },
  [DomainErrorCode.REVISION_OVERFLOW]: conflict,
  [DomainErrorCode.REVISION_GAP]: conflict,
  [DomainErrorCode.INCONSISTENT_HISTORY]: conflict,

  // The other libraries: races and contention a request can meet are never a 500.
  [LibraryErrorCode.STALE_MATCH_REVISION]: {
    ...conflict,
    detail: (message) => `${message}; read it again and retry`,
  },
  [LibraryErrorCode.STALE_TICKET_REVISION]: {
    ...conflict,
    detail: (message) => `${message}; read it again and retry`,
  },
  [LibraryErrorCode.STALE_BACKFILL_REVISION]: {
    ...conflict,
    detail: (message) => `${message}; read it again and retry`,
  },
  [LibraryErrorCode.MATCH_NOT_FOUND]: { status: 404, as: ErrorCode.NOT_FOUND },
  [LibraryErrorCode.TRANSACTION_RETRIES_EXHAUSTED]: {
    status: 503,
    as: ErrorCode.CONTENDED,
    detail: () => 'Too many concurrent changes right now; retry',
    retryAfterSeconds: 1,
  },
  // A writer's bug: a 500 whose message (it names the envelope) stays in the log.
  [LibraryErrorCode.INVALID_ENVELOPE]: { status: 500, as: ErrorCode.INTERNAL },
  // Only the migrate command raises these.
  [LibraryErrorCode.INVALID_ROLLBACK]: { status: 400, as: ErrorCode.VALIDATION_FAILED },
  [LibraryErrorCode.IRREVERSIBLE]: conflict,
  [LibraryErrorCode.MIGRATION_FAILED]: { status: 500, as: ErrorCode.INTERNAL },
  [LibraryErrorCode.DATABASE_UNREACHABLE]: {
    status: 503,
    as: ErrorCode.DEPENDENCY_UNAVAILABLE,
    retryAfterSeconds: 1,
  },
  // Only CLIs raise it.
  [LibraryErrorCode.USAGE]: { status: 500, as: ErrorCode.INTERNAL },
};

/** The wire code a problem for `code` carries. */
export function wireCodeOf(code: AnyErrorCode): ErrorCode {
  return HTTP_ANSWERS[code].as ?? (code as ErrorCode);
}

/** The problem `type` of a wire code: a stable URI per code. */
export function problemType(code: ErrorCode): string {
  return `https://matchplane.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`;
}
