import { Body, Controller, Delete, Get, HttpCode, Post, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { PartyResponse } from '@matchplane/contracts';
import { contractPaths } from '@matchplane/routing';
import type { AuthenticatedSession } from '@matchplane/players';
import { CurrentSession, PlayerAuthGuard } from '../auth/player-auth.guard';
import { RateLimit, RateLimitScope } from '../http/rate-limit.decorator';
import { OptionalIdempotencyKey } from '../idempotency/idempotency-key.decorator';
import { sendIdempotent } from '../idempotency/idempotent-reply';
import { JoinPartyBody } from './party.dto';
import { PartyService } from './party.service';

/** Parties: create, join by invite code, read, leave, disband. The enqueue is a queue route. */
@ApiTags('parties')
@ApiBearerAuth()
@UseGuards(PlayerAuthGuard)
@RateLimit(RateLimitScope.PLAYER)
@Controller(contractPaths('parties'))
export class PartiesController {
  constructor(private readonly parties: PartyService) {}

  @Post()
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'With it, a retry replays the first answer (invite code included)',
  })
  async create(
    @CurrentSession() session: AuthenticatedSession,
    @OptionalIdempotencyKey() key: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PartyResponse> {
    return sendIdempotent(reply, await this.parties.create(session.playerId, key));
  }

  @Post('join')
  @HttpCode(200)
  join(
    @Body() body: JoinPartyBody,
    @CurrentSession() session: AuthenticatedSession,
  ): Promise<PartyResponse> {
    return this.parties.join(session.playerId, body.inviteCode);
  }

  @Get('current')
  current(@CurrentSession() session: AuthenticatedSession): Promise<PartyResponse> {
    return this.parties.current(session.playerId);
  }

  @Post('current/leave')
  @HttpCode(204)
  leave(@CurrentSession() session: AuthenticatedSession): Promise<void> {
    return this.parties.leave(session.playerId);
  }

  @Delete('current')
  @HttpCode(204)
  disband(@CurrentSession() session: AuthenticatedSession): Promise<void> {
    return this.parties.disband(session.playerId);
  }
}
