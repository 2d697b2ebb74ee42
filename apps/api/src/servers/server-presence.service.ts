import { Inject, Injectable } from '@nestjs/common';
import type { AllocationRecord } from '@matchplane/allocation';
import { parseQueueModes, parseRejoinGrace } from '@matchplane/config';
import { ErrorCode, type PlayerPresenceResponse } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import {
  MatchPresenceService,
  type ParticipantPresence,
  type PresenceOutcome,
} from '@matchplane/matches';
import { noShowPenaltyPolicy, type NoShowPenaltyPolicy } from '@matchplane/players';
import { ApiConfig } from '../api.config';

/**
 * The game server's reports of players leaving and rejoining its running match
 * (MatchPresenceService does the work under the match's row lock), answered as the contract says:
 * 404 not a participant, 409 PRESENCE_CONFLICT, 410 PLAYER_ABANDONED.
 */
@Injectable()
export class ServerPresenceService {
  private readonly graceMs: ReadonlyMap<string, number>;
  private readonly penalty: NoShowPenaltyPolicy;

  constructor(
    private readonly presence: MatchPresenceService,
    @Inject(ApiConfig) config: ApiConfig,
  ) {
    const modes = parseQueueModes(config.QUEUE_MODES).map(({ mode }) => mode);
    this.graceMs = parseRejoinGrace(config.QUEUE_REJOIN_GRACE, modes);
    this.penalty = noShowPenaltyPolicy(config);
  }

  async left(allocation: AllocationRecord, playerId: string): Promise<PlayerPresenceResponse> {
    // A mode without a window: the player is abandoned at the next reconciliation pass.
    const grace = (mode: string) => this.graceMs.get(mode) ?? 0;
    return answer(
      allocation,
      playerId,
      await this.presence.left(allocation.matchId, playerId, grace),
    );
  }

  async rejoined(allocation: AllocationRecord, playerId: string): Promise<PlayerPresenceResponse> {
    const outcome = await this.presence.rejoined(allocation.matchId, playerId, this.penalty);
    return answer(allocation, playerId, outcome);
  }
}

function answer(
  allocation: AllocationRecord,
  playerId: string,
  outcome: PresenceOutcome,
): PlayerPresenceResponse {
  const matchId = allocation.matchId;
  switch (outcome.kind) {
    case 'recorded':
      return view(matchId, outcome.presence, outcome.matchRevision);
    case 'not_found':
      throw new CodedError(ErrorCode.NOT_FOUND, `Player ${playerId} is not in match ${matchId}`);
    case 'not_live':
      throw new CodedError(
        ErrorCode.PRESENCE_CONFLICT,
        `Match ${matchId} is ${outcome.matchState}: players leave and rejoin only while IN_PROGRESS`,
        { extensions: { matchState: outcome.matchState } },
      );
    case 'conflict':
      throw new CodedError(
        ErrorCode.PRESENCE_CONFLICT,
        `Player ${playerId} is ${outcome.presence.presence ?? 'CONNECTED'} in match ${matchId}: only a player who left may rejoin`,
      );
    case 'abandoned':
      throw new CodedError(
        ErrorCode.PLAYER_ABANDONED,
        `Player ${playerId} did not rejoin match ${matchId} in time and has abandoned it`,
      );
  }
}

function view(
  matchId: string,
  presence: ParticipantPresence,
  matchRevision: number,
): PlayerPresenceResponse {
  return {
    matchId,
    playerId: presence.playerId,
    presence: presence.presence ?? 'CONNECTED',
    ...(presence.rejoinDeadline && presence.presence === 'LEFT'
      ? { rejoinDeadline: presence.rejoinDeadline.toISOString() }
      : {}),
    leaveCount: presence.leaveCount,
    matchRevision,
  };
}
