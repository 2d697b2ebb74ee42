/**
 * POST /v1/matches/{id}/accept and /decline: the calling player's answer to its match's ready check
 * (a match of a mode with `acceptanceTimeoutMs` waits AWAITING_ACCEPTANCE for every player).
 * Idempotent: repeating an answer answers 200 again, whatever the match did since.
 */
export interface ReadyCheckAnswerResponse {
  matchId: string;
  answer: 'ACCEPTED' | 'DECLINED';
  /**
   * The match's state after the answer: AWAITING_ACCEPTANCE (others still to answer), ALLOCATING
   * (this was the last acceptance), CANCELLED (a decline, or a later state on a repeat).
   */
  matchState: string;
}
