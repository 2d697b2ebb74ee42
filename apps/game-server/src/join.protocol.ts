/**
 * The player-facing protocol of the reference game server (apps/game-server/README.md "Join
 * protocol"): a WebSocket at `/join` whose first message is the join message. The token travels in
 * a message, not in the URL, so it never lands in a proxy's access log.
 */

export const JOIN_PATH = '/join';

/** Client -> server: the first (and only meaningful) message a player sends. */
export interface JoinMessage {
  type: 'join';
  /** The player's join token from its assignment (libs/join-auth). */
  token: string;
}

/** Server -> client. */
export type ServerMessage =
  | { type: 'joined'; playerId: string; team: number }
  | { type: 'started'; durationMs: number }
  | { type: 'tick'; seq: number; remainingMs: number }
  | { type: 'ended'; outcome: 'COMPLETED' | 'FAILED'; winningTeam?: number };

/**
 * Close codes (4000-4999 are the application's). 4401/4403/4409 mirror the HTTP statuses they
 * resemble, so a client can map them the way it maps API errors.
 */
export const JoinCloseCode = {
  /** The match ended and its result is recorded. */
  NORMAL: 1000,
  /** The server is shutting down before the match ended. */
  GOING_AWAY: 1001,
  /** The server could not record the result. */
  SERVER_ERROR: 1011,
  /** The first message was not `{"type":"join","token":"..."}` (or was binary). */
  BAD_JOIN_MESSAGE: 4400,
  /** The token does not verify (forged, tampered, expired, unknown key, other server or match). */
  INVALID_TOKEN: 4401,
  /** The token verifies but its player is not on this match's roster. */
  NOT_ON_ROSTER: 4403,
  /** No join message within JOIN_HANDSHAKE_TIMEOUT_MS. */
  JOIN_TIMEOUT: 4408,
  /** The player already has an open connection; the first one stays. */
  DUPLICATE: 4409,
  /** Joining is closed: initial-connect was reported (the player is a no-show) or the match is over. */
  JOINING_CLOSED: 4410,
} as const;
export type JoinCloseCode = (typeof JoinCloseCode)[keyof typeof JoinCloseCode];

/** The join message in `data`, or undefined when it is anything else. */
export function parseJoinMessage(data: string): JoinMessage | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const message = parsed as Record<string, unknown>;
  if (message.type !== 'join' || typeof message.token !== 'string' || message.token === '') {
    return undefined;
  }
  return { type: 'join', token: message.token };
}
