/**
 * Stable error codes of the HTTP API (the `code` of every application/problem+json body).
 * Clients switch on these, never on messages; add codes, never repurpose one.
 */
export const ErrorCode = {
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  MALFORMED_JSON: 'MALFORMED_JSON',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  CONFLICT: 'CONFLICT',
  RATE_LIMITED: 'RATE_LIMITED',
  NOT_CONFIGURED: 'NOT_CONFIGURED',
  DEPENDENCY_UNAVAILABLE: 'DEPENDENCY_UNAVAILABLE',
  INTERNAL: 'INTERNAL',
  DEAD_LETTER_NOT_FOUND: 'DEAD_LETTER_NOT_FOUND',
  INVALID_CURSOR: 'INVALID_CURSOR',
  NOT_DEAD_LETTERED: 'NOT_DEAD_LETTERED',
  INVALID_CREDENTIAL: 'INVALID_CREDENTIAL',
  UNKNOWN_IDENTITY_PROVIDER: 'UNKNOWN_IDENTITY_PROVIDER',
  IDEMPOTENCY_KEY_REQUIRED: 'IDEMPOTENCY_KEY_REQUIRED',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  IDEMPOTENCY_KEY_IN_PROGRESS: 'IDEMPOTENCY_KEY_IN_PROGRESS',
  UNKNOWN_REGION: 'UNKNOWN_REGION',
  UNKNOWN_MODE: 'UNKNOWN_MODE',
  PROBE_CHALLENGE_NOT_FOUND: 'PROBE_CHALLENGE_NOT_FOUND',
  PROBE_NONCE_MISMATCH: 'PROBE_NONCE_MISMATCH',
  PROBE_WRONG_PLAYER: 'PROBE_WRONG_PLAYER',
  PROBE_WRONG_REGION: 'PROBE_WRONG_REGION',
  PROBE_ALREADY_ANSWERED: 'PROBE_ALREADY_ANSWERED',
  PROBE_EXPIRED: 'PROBE_EXPIRED',
  /** A probe challenge or measurement whose MAC does not match its contents: forged or tampered. */
  PROBE_BAD_SIGNATURE: 'PROBE_BAD_SIGNATURE',
  /** A probe challenge or measurement signed with a key id the verifier does not hold. */
  PROBE_UNKNOWN_KEY: 'PROBE_UNKNOWN_KEY',
  /** A probe challenge answered at another probe edge process than the one that issued it. */
  PROBE_WRONG_EDGE: 'PROBE_WRONG_EDGE',
  /** A probe measurement already recorded (each is single use). */
  PROBE_MEASUREMENT_REPLAYED: 'PROBE_MEASUREMENT_REPLAYED',
  /** A probe measurement older than PROBE_MEASUREMENT_MAX_AGE_MS (or stamped in the future). */
  PROBE_MEASUREMENT_EXPIRED: 'PROBE_MEASUREMENT_EXPIRED',
  NO_LATENCY_MEASURED: 'NO_LATENCY_MEASURED',
  TICKET_ALREADY_LIVE: 'TICKET_ALREADY_LIVE',
  COOLDOWN_ACTIVE: 'COOLDOWN_ACTIVE',
  TICKET_NOT_FOUND: 'TICKET_NOT_FOUND',
  /** A route named a player id that no player has (an operator route, a block or an avoid). */
  PLAYER_NOT_FOUND: 'PLAYER_NOT_FOUND',
  /** The player's block list holds PLAYER_BLOCK_LIST_MAX_ENTRIES players: unblock one first. */
  BLOCK_LIST_FULL: 'BLOCK_LIST_FULL',
  /** The player's avoid list holds PLAYER_AVOID_LIST_MAX_ENTRIES players: remove one first. */
  AVOID_LIST_FULL: 'AVOID_LIST_FULL',
  TICKET_NOT_CANCELLABLE: 'TICKET_NOT_CANCELLABLE',
  TICKET_FINISHED: 'TICKET_FINISHED',
  SERVER_PROTOCOL_UNSUPPORTED: 'SERVER_PROTOCOL_UNSUPPORTED',
  ASSIGNMENTS_NOT_READY: 'ASSIGNMENTS_NOT_READY',
  MATCH_STATE_CONFLICT: 'MATCH_STATE_CONFLICT',
  /** A game server's result report differs from the result already recorded for its match. */
  RESULT_CONFLICT: 'RESULT_CONFLICT',
  UNKNOWN_PARTICIPANT: 'UNKNOWN_PARTICIPANT',
  CONTENDED: 'CONTENDED',
  ASSIGNMENT_NOT_READY: 'ASSIGNMENT_NOT_READY',
  /** A JSON body nests arrays and objects deeper than API_JSON_MAX_DEPTH. */
  JSON_TOO_DEEP: 'JSON_TOO_DEEP',
  /** The request path is not valid percent-encoding. */
  MALFORMED_URL: 'MALFORMED_URL',
  /** The client took longer than API_HEADERS_TIMEOUT_MS / API_REQUEST_TIMEOUT_MS to send its request (408). */
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  /** A path parameter is longer than the router accepts (414). */
  URI_TOO_LONG: 'URI_TOO_LONG',
  /** A workload credential whose allocation was released or failed: the server's match is over. */
  ALLOCATION_ENDED: 'ALLOCATION_ENDED',
  /**
   * 410 from GET /v1/matches/{id}/assignment: the match ended (COMPLETED, FAILED, CANCELLED) and
   * will never be joinable; `matchState` and `endReason` say how. Stop waiting for an assignment.
   */
  MATCH_ENDED: 'MATCH_ENDED',
  /** The player is in no party (GET/leave/disband/enqueue of the current party). */
  PARTY_NOT_FOUND: 'PARTY_NOT_FOUND',
  /** The player is in a party already: leave it first (a player is in at most one). */
  PARTY_ALREADY_JOINED: 'PARTY_ALREADY_JOINED',
  /** No party has this invite code, or its invite expired. */
  PARTY_INVITE_INVALID: 'PARTY_INVITE_INVALID',
  /** The party has as many members as the largest team of any mode. */
  PARTY_FULL: 'PARTY_FULL',
  /** Only the party's leader may do this (enqueue, disband). */
  PARTY_LEADER_ONLY: 'PARTY_LEADER_ONLY',
  /** The party is searching: its members cannot change until its ticket is cancelled or matched. */
  PARTY_IN_QUEUE: 'PARTY_IN_QUEUE',
  /** A party ticket needs at least two members (queue alone with POST /v1/queue/tickets). */
  PARTY_TOO_SMALL: 'PARTY_TOO_SMALL',
  /** The party has more members than a team of the mode asked for. */
  PARTY_TOO_LARGE: 'PARTY_TOO_LARGE',
  /** The player is in no open lobby (GET/leave/kick/teams/start of the current lobby). */
  LOBBY_NOT_FOUND: 'LOBBY_NOT_FOUND',
  /** No open lobby has this invite code, or it expired (idle past LOBBY_TTL_SECONDS). */
  LOBBY_INVITE_INVALID: 'LOBBY_INVITE_INVALID',
  /** The player is in a lobby already: leave it first (a player is in at most one). */
  LOBBY_ALREADY_JOINED: 'LOBBY_ALREADY_JOINED',
  /** The lobby has as many members as its size. */
  LOBBY_FULL: 'LOBBY_FULL',
  /** Only the lobby's owner may do this (kick, set teams, start). */
  LOBBY_OWNER_ONLY: 'LOBBY_OWNER_ONLY',
  /** The lobby was started: its members and teams no longer change. */
  LOBBY_ALREADY_STARTED: 'LOBBY_ALREADY_STARTED',
  /** The player (`playerId`) holds a live queue ticket: a lobby member cannot also queue. */
  LOBBY_PLAYER_QUEUED: 'LOBBY_PLAYER_QUEUED',
  /** The named player is not a member of the lobby (kick, teams). */
  LOBBY_NOT_MEMBER: 'LOBBY_NOT_MEMBER',
  /** The region asked for is not one the API offers (PROBE_REGIONS). */
  LOBBY_REGION_NOT_OFFERED: 'LOBBY_REGION_NOT_OFFERED',
  /** The teams do not fit the mode: too many teams, a team over the mode's size, or one empty at start. */
  LOBBY_TEAMS_INVALID: 'LOBBY_TEAMS_INVALID',
  /** An operator paused the mode (or every region the player measured): Retry-After when known. */
  QUEUE_PAUSED: 'QUEUE_PAUSED',
  /** An operator is draining the mode (or every region the player measured): nothing new queues. */
  QUEUE_DRAINING: 'QUEUE_DRAINING',
  /** No backfill request of this server's match has this id. */
  BACKFILL_NOT_FOUND: 'BACKFILL_NOT_FOUND',
  /**
   * The backfill request is not in a state for this call (e.g. accepting one not yet PUBLISHED,
   * cancelling one already ASSIGNED), or a team already has a live request.
   */
  BACKFILL_CONFLICT: 'BACKFILL_CONFLICT',
  /** The team is full (no no-show or leaver to replace) or has fewer open places than asked. */
  BACKFILL_NO_OPEN_SLOTS: 'BACKFILL_NO_OPEN_SLOTS',
  /**
   * 409 from POST /v1/matches/{id}/accept or /decline: the match is not waiting for its ready
   * check (it moved on, ended, or its mode has none); `matchState` says where it is.
   */
  NOT_AWAITING_ACCEPTANCE: 'NOT_AWAITING_ACCEPTANCE',
  /** 409: the player already gave the other answer to this ready check (an answer is final). */
  ACCEPTANCE_ALREADY_ANSWERED: 'ACCEPTANCE_ALREADY_ANSWERED',
  /**
   * 409 from POST /v1/servers/{id}/players/{playerId}/left or /rejoined: the report contradicts
   * the player's recorded presence (a rejoin of a player who never left) or the match is not
   * IN_PROGRESS; `presence` / `matchState` say where things stand.
   */
  PRESENCE_CONFLICT: 'PRESENCE_CONFLICT',
  /** 410: the player did not rejoin within its grace window and has ABANDONED the match (final). */
  PLAYER_ABANDONED: 'PLAYER_ABANDONED',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The body of every 4xx and 5xx (RFC 9457), plus our stable `code`. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail?: string;
  instance?: string;
  /** Per-field problems of a validation failure. */
  errors?: { field: string; problems: string[] }[];
  /** Present on 500s: quote it to find the log line. */
  correlationId?: string;
  /** The match's state, on ASSIGNMENT_NOT_READY and MATCH_ENDED. */
  matchState?: string;
  /**
   * Why the match ended (e.g. NO_SHOW, ALLOCATION_FAILED), on MATCH_ENDED when it failed or was
   * cancelled; why the ticket ended (e.g. SEARCH_TIMED_OUT) on TICKET_FINISHED.
   */
  endReason?: string;
  /** The ticket's final state, on TICKET_FINISHED (e.g. EXPIRED). */
  ticketState?: string;
  /**
   * The party member a party enqueue was refused for (NO_LATENCY_MEASURED, TICKET_ALREADY_LIVE,
   * COOLDOWN_ACTIVE on POST /v1/queue/party-tickets).
   */
  playerId?: string;
}

/** Members of a problem beyond RFC 9457's and our `code` that some codes carry. */
export type ProblemExtensions = Pick<
  ProblemDetails,
  'matchState' | 'endReason' | 'ticketState' | 'playerId'
>;
