import { ErrorCode } from '@matchplane/contracts';
import { Body, Delete, Get, Post, Res } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { PartyResponse } from '@matchplane/contracts';
import type { AuthenticatedSession } from '@matchplane/players';
import { CurrentSession } from '../auth/player-auth.guard';
import { OptionalIdempotencyKey } from '../idempotency/idempotency-key.decorator';
import { sendIdempotent } from '../idempotency/idempotent-reply';
import { JoinPartyBody } from './party.dto';
import { PartyService } from './party.service';
import { Answers } from '../http/openapi/api-answers.decorator';
import { PlayerController } from '../auth/player-controller.decorator';

/** Parties: create, join by invite code, read, leave, disband. The enqueue is a queue route. */
@PlayerController('parties')
export class PartiesController {
  constructor(private readonly parties: PartyService) {}

  @Post()
  @Answers({
    summary: 'Create a party led by this player (the answer carries its invite code)',
    caller: 'player',
    status: 201,
    body: 'PartyResponse',
    errors: [
      ErrorCode.IDEMPOTENCY_KEY_REUSED,
      ErrorCode.IDEMPOTENCY_KEY_IN_PROGRESS,
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.PARTY_ALREADY_JOINED,
    ],
  })
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
  @Answers({
    summary: 'Join a party by its invite code',
    caller: 'player',
    status: 200,
    body: 'PartyResponse',
    errors: [
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.MALFORMED_JSON,
      ErrorCode.PARTY_INVITE_INVALID,
      ErrorCode.PARTY_ALREADY_JOINED,
      ErrorCode.PARTY_FULL,
      ErrorCode.PARTY_IN_QUEUE,
    ],
  })
  join(
    @Body() body: JoinPartyBody,
    @CurrentSession() session: AuthenticatedSession,
  ): Promise<PartyResponse> {
    return this.parties.join(session.playerId, body.inviteCode);
  }

  @Get('current')
  @Answers({
    summary: "This player's party",
    caller: 'player',
    status: 200,
    body: 'PartyResponse',
    errors: [ErrorCode.PARTY_NOT_FOUND],
  })
  current(@CurrentSession() session: AuthenticatedSession): Promise<PartyResponse> {
    return this.parties.current(session.playerId);
  }

  @Post('current/leave')
  @Answers({
    summary: "Leave this player's party (a member)",
    caller: 'player',
    status: 204,
    errors: [ErrorCode.PARTY_NOT_FOUND, ErrorCode.PARTY_IN_QUEUE],
  })
  leave(@CurrentSession() session: AuthenticatedSession): Promise<void> {
    return this.parties.leave(session.playerId);
  }

  @Delete('current')
  @Answers({
    summary: "Disband this player's party (the leader)",
    caller: 'player',
    status: 204,
    errors: [ErrorCode.PARTY_NOT_FOUND, ErrorCode.PARTY_LEADER_ONLY, ErrorCode.PARTY_IN_QUEUE],
  })
  disband(@CurrentSession() session: AuthenticatedSession): Promise<void> {
    return this.parties.disband(session.playerId);
  }
}
