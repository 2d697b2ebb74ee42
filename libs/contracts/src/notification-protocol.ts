/**
 * The client notification protocol: the WebSocket at `/v1/notifications` (also under `/api/v1`)
 * and the HTTP catch-up route `GET /v1/matches/{id}/events?after=N`. Every frame is one JSON
 * text message with a `type`. Clients dedupe on (matchId, revision); per match the server sends
 * revisions in order, without a gap, from the first it sends (a resync jumps to the current one).
 *
 * Authentication, at connect: `Authorization: Bearer <session token>` (Node clients, the SDK) or,
 * for browsers, which cannot set headers on a WebSocket, the subprotocols
 * `[NOTIFICATIONS_SUBPROTOCOL, BEARER_SUBPROTOCOL_PREFIX + token]` (the server selects the
 * first). No `?token=` query: URLs end up in access logs and proxies.
 */

/** The resource path under each of ROUTE_PREFIXES. */
export const NOTIFICATIONS_PATH = 'notifications';

/** The subprotocol the server selects when a client offers it. */
export const NOTIFICATIONS_SUBPROTOCOL = 'matchplane.notifications.v1';

/** A subprotocol `matchplane.bearer.<session token>` carries the token (session tokens are base64url). */
export const BEARER_SUBPROTOCOL_PREFIX = 'matchplane.bearer.';

/** Close codes the server uses (4000-4999 are the application's own). */
export const NotificationCloseCode = {
  /** The session token is missing, invalid, expired or revoked: sign in again, do not retry as is. */
  UNAUTHENTICATED: 4401,
  /**
   * The client did not keep up: more than NOTIFY_SOCKET_BUFFER messages unread (or
   * NOTIFY_SOCKET_BUFFER_BYTES queued). A `resync` precedes it; reconnect and resume.
   */
  SLOW_CONSUMER: 4008,
  /**
   * Too many sockets open on this replica for the session (NOTIFY_MAX_SOCKETS_PER_SESSION) or the
   * client address (NOTIFY_MAX_SOCKETS_PER_ADDRESS). Close one first; reconnecting with backoff
   * (the SDK does) succeeds once there is room.
   */
  TOO_MANY_CONNECTIONS: 4429,
  /**
   * A client frame was larger than the server accepts (16 KiB; a resume is far smaller). Fix the
   * client; reconnecting with the same frame is closed the same way.
   */
  MESSAGE_TOO_BIG: 1009,
  /** The server could not authenticate or replay history (e.g. the database failed); reconnect and resume. */
  SERVER_ERROR: 1011,
  /** The replica is shutting down; reconnect (to another replica) and resume. */
  GOING_AWAY: 1001,
} as const;
export type NotificationCloseCode =
  (typeof NotificationCloseCode)[keyof typeof NotificationCloseCode];

/** Why a `resync` replaces the events a client asked for. */
export const ResyncReason = {
  /** The events after the client's revision are no longer retained (the outbox purge ran). */
  RETENTION_EXPIRED: 'RETENTION_EXPIRED',
  /** The client fell behind; its connection is closed with SLOW_CONSUMER right after. */
  BUFFER_OVERFLOW: 'BUFFER_OVERFLOW',
  /** The client claimed a revision the server never had (e.g. state from another deployment). */
  UNKNOWN_REVISION: 'UNKNOWN_REVISION',
} as const;
export type ResyncReason = (typeof ResyncReason)[keyof typeof ResyncReason];

/** Codes of `error` messages. */
export const NotificationErrorCode = {
  /**
   * Not JSON, or not a client message this protocol defines (including one nesting arrays or
   * objects deeper than the server's API_JSON_MAX_DEPTH).
   */
  INVALID_MESSAGE: 'INVALID_MESSAGE',
  /** A resume named a match that does not exist or that this player is not part of. */
  MATCH_NOT_FOUND: 'MATCH_NOT_FOUND',
  /** A resume named more matches than NOTIFY_RESUME_MAX_MATCHES; nothing of it was applied. */
  RESUME_TOO_LARGE: 'RESUME_TOO_LARGE',
} as const;
export type NotificationErrorCode =
  (typeof NotificationErrorCode)[keyof typeof NotificationErrorCode];

// ---- server -> client ------------------------------------------------------------------------

/** Sent once the token is accepted; the socket then receives the player's match events. */
export interface ReadyMessage {
  type: 'ready';
  playerId: string;
  /** Messages the server lets go unread before it closes the socket with SLOW_CONSUMER. */
  bufferLimit: number;
  /** The server pings at least this often (ms): a client hearing nothing for longer may reconnect. */
  heartbeatIntervalMs: number;
}

/** One match event (an outbox row of the match), live or replayed. */
export interface MatchEventMessage {
  type: 'event';
  /** e.g. `match.state_changed`. */
  event: string;
  matchId: string;
  revision: number;
  /** The state the match entered at this revision. */
  state: string;
  /**
   * Where the match's game server runs, from PROCESS_READY on: the match's region, or another
   * when its own had no free server (the allocator's fallback). Absent before.
   */
  serverRegion?: string;
  /** ISO 8601. */
  occurredAt: string;
}

/**
 * The events the client asked for cannot be sent (see `reason`); this is the match's current
 * state, from its row. Take it as the state at `revision` and go on from there.
 */
export interface ResyncMessage {
  type: 'resync';
  matchId: string;
  state: string;
  revision: number;
  reason: ResyncReason;
}

/** A client message was refused; the connection stays open. */
export interface ErrorMessage {
  type: 'error';
  code: NotificationErrorCode;
  message: string;
  matchId?: string;
}

export type ServerNotificationMessage =
  ReadyMessage | MatchEventMessage | ResyncMessage | ErrorMessage;

// ---- client -> server ------------------------------------------------------------------------

/**
 * "I have seen each of these matches up to this revision": the server replays what came after
 * (from the retained outbox rows; a resync past retention), merged with live events so nothing is
 * missed or repeated, then goes on live. Send it after connecting, and whenever a gap shows; 0
 * asks for a match's whole history. Live events of matches not named are sent as they come (the
 * server fills in from revision 1 a match it has not sent before).
 */
export interface ResumeMessage {
  type: 'resume';
  matches: Record<string, number>;
}

export type ClientNotificationMessage = ResumeMessage;

// ---- HTTP catch-up -----------------------------------------------------------------------------

/** Path of the catch-up route under each of ROUTE_PREFIXES. */
export function matchEventsPath(matchId: string): string {
  return `matches/${encodeURIComponent(matchId)}/events`;
}

/** GET /v1/matches/{id}/events?after=N: what a socket resuming from N would be sent. */
export interface MatchEventsResponse {
  matchId: string;
  /** The match's current state and revision (its row). */
  state: string;
  revision: number;
  /** A resync first when the events after N are no longer retained, then the events, in order. */
  messages: (MatchEventMessage | ResyncMessage)[];
}
