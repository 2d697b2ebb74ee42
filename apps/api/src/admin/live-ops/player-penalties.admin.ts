import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { AuditWriter, runInTransaction } from '@matchplane/persistence';
import { PlayerStore } from '@matchplane/players';

export interface LiftedCooldown {
  playerId: string;
  /** ISO time the lifted cooldown would have ended; null when none was in force. */
  liftedCooldownUntil: string | null;
  offencesBefore: number;
  offencesAfter: number;
}

/**
 * An operator lifts a player's offence cooldown (no-shows, ready checks, abandoned matches): a
 * tester caught by one, or a player penalised for the operator's own outage. One transaction with
 * its audit row; the player may queue again at once.
 */
@Injectable()
export class PlayerPenaltiesAdmin {
  constructor(
    private readonly dataSource: DataSource,
    private readonly players: PlayerStore,
    private readonly audit: AuditWriter,
  ) {}

  liftCooldown(
    playerId: string,
    operator: string,
    request: { reason: string; forgiveOffences: boolean },
  ): Promise<LiftedCooldown> {
    return runInTransaction(this.dataSource, async (manager, unit) => {
      const lifted = await this.players.liftCooldown(unit, playerId, new Date(), {
        forgiveOffences: request.forgiveOffences,
      });
      if (!lifted) throw new CodedError(ErrorCode.NOT_FOUND, `No player ${playerId}`);
      const answer: LiftedCooldown = {
        playerId,
        liftedCooldownUntil: lifted.liftedCooldownUntil?.toISOString() ?? null,
        offencesBefore: lifted.offencesBefore,
        offencesAfter: lifted.offencesAfter,
      };
      await this.audit.record(manager, {
        actor: operator,
        action: 'player.cooldown.lifted',
        targetType: 'player',
        targetId: playerId,
        reason: request.reason,
        details: { ...answer },
      });
      return answer;
    });
  }
}
