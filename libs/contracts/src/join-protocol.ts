/**
 * The player-facing protocol of a game server (apps/game-server/README.md "Join protocol"): a
 * WebSocket at `ws://<endpoint>/join` whose first message is the join message. The token travels
 * in a message, not in the URL, so it never lands in a proxy's access log. The reference server
 * (apps/game-server) speaks it and the SDK's GameConnection (libs/sdk) is its client; both take
 * it from here.
 */

/** The path players connect to on a game server's endpoint. */
export const JOIN_PATH = '/join';

/** Client -> server: the first (and only meaningful) message a player sends. */
export interface JoinMessage {
  type: 'join';
  /** The player's join token from its assignment (libs/join-auth). */
  token: string;
}

/** Server -> client. */
export type JoinServerMessage =
  | { type: 'joined'; playerId: string; team: number }
  | { type: 'started'; durationMs: number }
  | { type: 'tick'; seq: number; remainingMs: number }
  | { type: 'ended'; outcome: 'COMPLETED' | 'FAILED'; winningTeam?: number };

/**
 * Close codes (4000-4999 are the application's). 4401/4403/4409 mirror the HTTP statuses they
 * resemble, so a client can map them the way it maps API errors.
 */
export const JoinCloseCode = {
  /** The match ended and its result is recorded (after `ended`), or the control plane ended it. */
  NORMAL: 1000,
  /** The server is shutting down before the match ended. */
  GOING_AWAY: 1001,
  /** The server could not record the result (could not report to the control plane). */
  SERVER_ERROR: 1011,
  /** The first message was not `{"type":"join","token":"..."}` (or was binary). */
  BAD_JOIN_MESSAGE: 4400,
  /**
   * The token does not verify (forged, tampered, expired, unknown key, other server or match); the
   * reason says why (`invalid join token: EXPIRED`, ...).
   */
  INVALID_TOKEN: 4401,
  /** The token verifies but its player is not on this match's roster. */
  NOT_ON_ROSTER: 4403,
  /** No join message within the server's handshake timeout (JOIN_HANDSHAKE_TIMEOUT_MS). */
  JOIN_TIMEOUT: 4408,
  /** The player already has an open connection; the first one stays. */
  DUPLICATE: 4409,
  /** Joining is closed: initial-connect was reported (the player is a no-show) or the match is over. */
  JOINING_CLOSED: 4410,
} as const;
export type JoinCloseCode = (typeof JoinCloseCode)[keyof typeof JoinCloseCode];
