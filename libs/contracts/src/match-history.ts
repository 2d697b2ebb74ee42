/** GET /v1/matches/history: the calling player's finished matches, newest first, in pages. */
export interface MatchHistoryQuery {
  /** Matches per page, 1-50 (default 20). */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

export interface MatchHistoryEntry {
  matchId: string;
  mode: string;
  /** The region the match was placed in. */
  region: string;
  /** COMPLETED, FAILED or CANCELLED. */
  state: string;
  /** Why a match that did not complete ended (e.g. NO_SHOW, ALLOCATION_FAILED). */
  endReason?: string;
  startedAt: string;
  finishedAt: string;
  /** The caller's team. */
  team: number;
  teams: { team: number; playerIds: string[] }[];
  /** What the game server reported at the end, when it reported. */
  result?: { outcome: string; winningTeam?: number; scores?: Record<string, number> };
  /** For the caller's team: WIN, LOSS or DRAW; absent without a COMPLETED result. */
  outcome?: 'WIN' | 'LOSS' | 'DRAW';
  /** The caller's display rating before and after, when the match rated them. */
  ratingChange?: { before: number; after: number; delta: number };
}

export interface MatchHistoryResponse {
  matches: MatchHistoryEntry[];
  /** Pass as `cursor` for the next (older) page; absent on the last page. */
  nextCursor?: string;
}
