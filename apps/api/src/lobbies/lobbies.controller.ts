import { ErrorCode, type LobbyResponse } from '@matchplane/contracts';
import { Body, Get, Post, Res } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { AuthenticatedSession } from '@matchplane/players';
import { CurrentSession } from '../auth/player-auth.guard';
import { Answers } from '../http/openapi/api-answers.decorator';
import { OptionalIdempotencyKey } from '../idempotency/idempotency-key.decorator';
import { sendIdempotent } from '../idempotency/idempotent-reply';
import { LobbyStarter } from './lobby-starter';
import {
  CreateLobbyBody,
  JoinLobbyBody,
  KickLobbyMemberBody,
  SetLobbyTeamsBody,
} from './lobby.dto';
import { LobbyService } from './lobby.service';
import { PlayerController } from '../auth/player-controller.decorator';

const OWNER_REFUSALS = [
  ErrorCode.LOBBY_NOT_FOUND,
  ErrorCode.LOBBY_OWNER_ONLY,
  ErrorCode.LOBBY_ALREADY_STARTED,
];

/** The refusals of the owner's changes to who plays on which team (kick, teams). */
const MEMBER_CHANGE_REFUSALS = [
  ErrorCode.VALIDATION_FAILED,
  ErrorCode.MALFORMED_JSON,
  ...OWNER_REFUSALS,
  ErrorCode.LOBBY_NOT_MEMBER,
  ErrorCode.LOBBY_TEAMS_INVALID,
];

/** Lobbies (custom games): create, join by invite code, read, leave, kick, arrange teams, start. */
@PlayerController('lobbies')
export class LobbiesController {
  constructor(
    private readonly lobbies: LobbyService,
    private readonly starter: LobbyStarter,
  ) {}

  @Post()
  @Answers({
    summary: 'Create a private lobby owned by this player (the answer carries its invite code)',
    caller: 'player',
    status: 201,
    body: 'LobbyResponse',
    errors: [
      ErrorCode.IDEMPOTENCY_KEY_REUSED,
      ErrorCode.IDEMPOTENCY_KEY_IN_PROGRESS,
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.MALFORMED_JSON,
      ErrorCode.UNKNOWN_MODE,
      ErrorCode.LOBBY_REGION_NOT_OFFERED,
      ErrorCode.LOBBY_ALREADY_JOINED,
      ErrorCode.LOBBY_PLAYER_QUEUED,
    ],
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'With it, a retry replays the first answer (invite code included)',
  })
  async create(
    @Body() body: CreateLobbyBody,
    @CurrentSession() session: AuthenticatedSession,
    @OptionalIdempotencyKey() key: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<LobbyResponse> {
    return sendIdempotent(reply, await this.lobbies.create(session.playerId, body, key));
  }

  @Post('join')
  @Answers({
    summary: 'Join a lobby by its invite code',
    caller: 'player',
    status: 200,
    body: 'LobbyResponse',
    errors: [
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.MALFORMED_JSON,
      ErrorCode.LOBBY_INVITE_INVALID,
      ErrorCode.LOBBY_ALREADY_JOINED,
      ErrorCode.LOBBY_FULL,
      ErrorCode.LOBBY_PLAYER_QUEUED,
    ],
  })
  join(
    @Body() body: JoinLobbyBody,
    @CurrentSession() session: AuthenticatedSession,
  ): Promise<LobbyResponse> {
    return this.lobbies.join(session.playerId, body.inviteCode);
  }

  @Get('current')
  @Answers({
    summary: "This player's lobby (once started: its match and each member's ticket)",
    caller: 'player',
    status: 200,
    body: 'LobbyResponse',
    errors: [ErrorCode.LOBBY_NOT_FOUND],
  })
  current(@CurrentSession() session: AuthenticatedSession): Promise<LobbyResponse> {
    return this.lobbies.current(session.playerId);
  }

  @Post('current/leave')
  @Answers({
    summary: "Leave this player's lobby (the owner leaving closes it)",
    caller: 'player',
    status: 204,
    errors: [ErrorCode.LOBBY_NOT_FOUND, ErrorCode.LOBBY_ALREADY_STARTED],
  })
  leave(@CurrentSession() session: AuthenticatedSession): Promise<void> {
    return this.lobbies.leave(session.playerId);
  }

  @Post('current/kick')
  @Answers({
    summary: 'Remove a member from the lobby (the owner)',
    caller: 'player',
    status: 200,
    body: 'LobbyResponse',
    errors: MEMBER_CHANGE_REFUSALS,
  })
  kick(
    @Body() body: KickLobbyMemberBody,
    @CurrentSession() session: AuthenticatedSession,
  ): Promise<LobbyResponse> {
    return this.lobbies.kick(session.playerId, body.playerId);
  }

  @Post('current/teams')
  @Answers({
    summary: 'Arrange the teams (the owner): every member named once',
    caller: 'player',
    status: 200,
    body: 'LobbyResponse',
    errors: MEMBER_CHANGE_REFUSALS,
  })
  setTeams(
    @Body() body: SetLobbyTeamsBody,
    @CurrentSession() session: AuthenticatedSession,
  ): Promise<LobbyResponse> {
    return this.lobbies.setTeams(session.playerId, body.teams);
  }

  @Post('current/start')
  @Answers({
    summary:
      'Start the lobby (the owner): its match is created and allocated like a matched one; members follow their tickets',
    caller: 'player',
    status: 200,
    body: 'LobbyResponse',
    errors: [
      ...OWNER_REFUSALS,
      ErrorCode.LOBBY_TEAMS_INVALID,
      ErrorCode.LOBBY_PLAYER_QUEUED,
      ErrorCode.QUEUE_PAUSED,
      ErrorCode.QUEUE_DRAINING,
    ],
  })
  start(@CurrentSession() session: AuthenticatedSession): Promise<LobbyResponse> {
    return this.starter.start(session.playerId);
  }
}
