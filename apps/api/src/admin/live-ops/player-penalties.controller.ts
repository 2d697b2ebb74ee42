import { ErrorCode } from '@matchplane/contracts';
import { Body, Param, Post } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean } from 'class-validator';
import { IsOptionalNonNull } from '../../http/is-optional-non-null.decorator';
import { Answers } from '../../http/openapi/api-answers.decorator';
import { UuidParamPipe } from '../../http/uuid-input';
import { Operator, OperatorController } from '../operator.decorator';
import { PlayerPenaltiesAdmin, type LiftedCooldown } from './player-penalties.admin';
import { OperatorReasonBody } from './queue-controls.dto';

export class LiftCooldownBody extends OperatorReasonBody {
  @ApiPropertyOptional({
    description: 'Also forgive the offences in force, so the next one is a first offence again',
    default: false,
  })
  @IsOptionalNonNull()
  @IsBoolean({ message: 'forgiveOffences must be true or false' })
  forgiveOffences?: boolean;
}

/** Operator control of a player's offence penalties (audited). */
@OperatorController()
export class PlayerPenaltiesController {
  constructor(private readonly penalties: PlayerPenaltiesAdmin) {}

  @Post('players/:id/cooldown/lift')
  @Answers({
    summary: "Lift a player's offence cooldown now (optionally forgiving its offences)",
    caller: 'operator',
    status: 200,
    body: 'LiftedCooldown',
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.MALFORMED_JSON, ErrorCode.NOT_FOUND],
  })
  lift(
    @Param('id', new UuidParamPipe('player id')) playerId: string,
    @Body() body: LiftCooldownBody,
    @Operator() operator: string,
  ): Promise<LiftedCooldown> {
    return this.penalties.liftCooldown(playerId, operator, {
      reason: body.reason,
      forgiveOffences: body.forgiveOffences ?? false,
    });
  }
}
