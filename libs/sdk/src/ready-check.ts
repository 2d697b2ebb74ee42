import { PlayerRoutes, type ReadyCheckAnswerResponse } from '@matchplane/contracts';
import type { TransportRequest } from './http.transport';

type Send = (request: Omit<TransportRequest, 'token'>) => Promise<ReadyCheckAnswerResponse>;

/**
 * A player's answers to its match's ready check (a match AWAITING_ACCEPTANCE, announced by the
 * match's notification). Both calls are idempotent on the server, so a lost answer is retried.
 * A 409 NOT_AWAITING_ACCEPTANCE (the match moved on) or ACCEPTANCE_ALREADY_ANSWERED is thrown
 * as a MatchplaneApiError.
 */
export class ReadyCheckCalls {
  constructor(private readonly send: Send) {}

  /** Accepts the match; the last player to accept starts its allocation. */
  accept(matchId: string): Promise<ReadyCheckAnswerResponse> {
    return this.send({ method: 'POST', path: PlayerRoutes.matchAccept(matchId), retry: 'safe' });
  }

  /** Declines the match: it is cancelled, and this player gets the no-show cooldown. */
  decline(matchId: string): Promise<ReadyCheckAnswerResponse> {
    return this.send({ method: 'POST', path: PlayerRoutes.matchDecline(matchId), retry: 'safe' });
  }
}
