import { ErrorCode } from '@matchplane/contracts';
import { Body, Controller, Delete, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { PlayerRoutes, type SessionResponse } from '@matchplane/contracts';
import { contractPaths, PublicRoute } from '@matchplane/routing';
import { SessionService, type AuthenticatedSession } from '@matchplane/players';
import { CurrentSession, PlayerAuthGuard } from '../auth/player-auth.guard';
import { RateLimit, RateLimitScope } from '../http/rate-limit.decorator';
import { SessionRevocationPublisher } from './session-revocation.publisher';
import { CreateSessionBody } from './sessions.dto';
import { Answers } from '../http/openapi/api-answers.decorator';

@ApiTags('sessions')
@Controller(contractPaths(''))
export class SessionsController {
  constructor(
    private readonly sessions: SessionService,
    private readonly revocations: SessionRevocationPublisher,
  ) {}

  @Post(PlayerRoutes.sessions)
  @Answers({
    summary:
      'Sign in: a guest (new, or resumed with its device secret) or an identity provider credential',
    caller: 'public',
    status: 201,
    body: 'SessionResponse',
    errors: [
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.MALFORMED_JSON,
      ErrorCode.INVALID_CREDENTIAL,
      ErrorCode.UNKNOWN_IDENTITY_PROVIDER,
    ],
  })
  @PublicRoute('this is how a player gets a token; the identity verifier checks the credential')
  @RateLimit(RateLimitScope.SESSION_CREATION)
  async create(@Body() body: CreateSessionBody): Promise<SessionResponse> {
    const issued = await this.sessions.create(body.provider ?? 'guest', body.credential);
    return {
      token: issued.token,
      expiresAt: issued.expiresAt.toISOString(),
      playerId: issued.playerId,
      ...(issued.deviceSecret ? { deviceSecret: issued.deviceSecret } : {}),
    };
  }

  @Delete(PlayerRoutes.currentSession)
  @Answers({
    summary: 'Sign out: revoke this session (its notification sockets close with 4401)',
    caller: 'player',
    status: 204,
  })
  @ApiBearerAuth()
  @UseGuards(PlayerAuthGuard)
  @RateLimit(RateLimitScope.PLAYER)
  async revoke(@CurrentSession() session: AuthenticatedSession): Promise<void> {
    await this.sessions.revoke(session);
    // After commit: every replica closes the notification sockets of this session (4401).
    await this.revocations.announce(session);
  }
}
