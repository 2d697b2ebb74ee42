/**
 * POST /v1/servers/{id}/players/{playerId}/left and .../rejoined (no body): the game server reports
 * a player's connection gone, or back. Idempotent: a repeat of the last report answers the same.
 * A player who left may rejoin until `rejoinDeadline` (the mode's `rejoinGraceMs`); past it the
 * player is ABANDONED (410 PLAYER_ABANDONED from then on). 409 PRESENCE_CONFLICT: a rejoin of a
 * player who did not leave, or a match not IN_PROGRESS.
 */
export interface PlayerPresenceResponse {
  matchId: string;
  playerId: string;
  /** CONNECTED: never left. */
  presence: 'CONNECTED' | 'LEFT' | 'REJOINED' | 'ABANDONED';
  /** ISO instant until which a LEFT player may rejoin; present while LEFT. */
  rejoinDeadline?: string;
  /** How many times the player left this match. */
  leaveCount: number;
  /** The match's revision after the report (its `match.presence_changed` carries it). */
  matchRevision: number;
}
