import { ErrorCode } from '@matchplane/contracts';
import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  Param,
  Post,
  Res,
  UseGuards,
} from '@nestjs/common';
import { ApiBearerAuth, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { AllocationRecord } from '@matchplane/allocation';
import { RateLimit, RateLimitScope } from '../http/rate-limit.decorator';
import {
  type BackfillConnectResponse,
  type BackfillResponse,
  type InitialConnectResponse,
  type MatchResultResponse,
  type PlayerPresenceResponse,
  type RegisterServerResponse,
  type RosterResponse,
  type ServerHeartbeatResponse,
} from '@matchplane/contracts';
import { contractPaths } from '@matchplane/routing';
import {
  AnswersEndedAllocation,
  CurrentAllocation,
  RecordsServerHeartbeat,
  ServerCredentialGuard,
} from './server-credential.guard';
import { ServerLifecycleService } from './server-lifecycle.service';
import { ServerRegistrationService } from './server-registration.service';
import { ServerBackfillService } from './server-backfill.service';
import { ServerPresenceService } from './server-presence.service';
import {
  BackfillAcceptBody,
  BackfillConnectBody,
  BackfillRequestBody,
  InitialConnectBody,
  MatchResultBody,
  RegisterServerBody,
} from './servers.dto';
import { UuidParamPipe } from '../http/uuid-input';
import { Answers, type AnswersSpec } from '../http/openapi/api-answers.decorator';

const SERVER_ID = { name: 'id', description: 'The server id the allocator gave this server' };
const REQUEST_ID_PIPE = new UuidParamPipe('backfill request id');
const PLAYER_ID_PIPE = new UuidParamPipe('player id');
const PLAYER_ID = { name: 'playerId', description: 'A participant of the match', format: 'uuid' };
const REQUEST_ID = {
  name: 'requestId',
  description: 'A backfill request of this server',
  format: 'uuid',
};

/** What a route taking a JSON body refuses before it reads it. */
const BODY_ERRORS = [ErrorCode.VALIDATION_FAILED, ErrorCode.MALFORMED_JSON];

/** A route the game server calls with its workload credential: 200 unless told otherwise. */
function AnswersServer(
  spec: Omit<AnswersSpec, 'caller' | 'status'> & { readonly status?: AnswersSpec['status'] },
): MethodDecorator {
  return Answers({ caller: 'server', status: 200, ...spec });
}

/** A route on one backfill request of this server (its :requestId). */
function AnswersBackfill(spec: Omit<AnswersSpec, 'caller' | 'status'>): MethodDecorator {
  return applyDecorators(AnswersServer(spec), ApiParam(REQUEST_ID));
}

/** A player's connection went (`left`) or came back (`rejoined`): the same contract either way. */
function PresenceRoute(event: 'left' | 'rejoined', summary: string): MethodDecorator {
  return applyDecorators(
    Post(`:id/players/:playerId/${event}`),
    AnswersServer({
      summary,
      body: 'PlayerPresenceResponse',
      errors: [
        ErrorCode.VALIDATION_FAILED,
        ErrorCode.ALLOCATION_ENDED,
        ErrorCode.UNKNOWN_PARTICIPANT,
        ErrorCode.PRESENCE_CONFLICT,
        ErrorCode.PLAYER_ABANDONED,
      ],
    }),
    ApiParam(PLAYER_ID),
  );
}

/** The game-server contract (libs/contracts server-api.ts), behind the workload credential. */
@ApiTags('servers')
@ApiBearerAuth()
@ApiParam(SERVER_ID)
@UseGuards(ServerCredentialGuard)
@RateLimit(RateLimitScope.SERVER)
@Controller(contractPaths('servers'))
export class ServersController {
  constructor(
    private readonly registrations: ServerRegistrationService,
    private readonly servers: ServerLifecycleService,
    private readonly backfills: ServerBackfillService,
    private readonly presence: ServerPresenceService,
  ) {}

  @Post(':id/register')
  @AnswersServer({
    summary: 'The game server is up: the match becomes ASSIGNMENT_READY',
    body: 'RegisterServerResponse',
    errors: [
      ...BODY_ERRORS,
      ErrorCode.SERVER_PROTOCOL_UNSUPPORTED,
      ErrorCode.ALLOCATION_ENDED,
      ErrorCode.MATCH_STATE_CONFLICT,
    ],
  })
  register(
    @CurrentAllocation() allocation: AllocationRecord,
    @Body() body: RegisterServerBody,
  ): Promise<RegisterServerResponse> {
    return this.registrations.register(allocation, body);
  }

  @Get(':id/roster')
  @AnswersServer({
    summary: "The match's roster: players, teams, join tokens and the signed manifest",
    body: 'RosterResponse',
    errors: [ErrorCode.ALLOCATION_ENDED, ErrorCode.ASSIGNMENTS_NOT_READY, ErrorCode.NOT_FOUND],
  })
  roster(@CurrentAllocation() allocation: AllocationRecord): Promise<RosterResponse> {
    return this.registrations.roster(allocation);
  }

  @Post(':id/initial-connect')
  @AnswersServer({
    summary:
      'Who joined in time; the others are no-shows (their tickets end NO_SHOW and a cooldown follows)',
    body: 'InitialConnectResponse',
    errors: [
      ...BODY_ERRORS,
      ErrorCode.ALLOCATION_ENDED,
      ErrorCode.MATCH_STATE_CONFLICT,
      ErrorCode.UNKNOWN_PARTICIPANT,
    ],
  })
  initialConnect(
    @CurrentAllocation() allocation: AllocationRecord,
    @Body() body: InitialConnectBody,
  ): Promise<InitialConnectResponse> {
    return this.servers.initialConnect(allocation, body);
  }

  @Post(':id/result')
  @AnswersServer({
    summary: "The match's result: COMPLETED or FAILED",
    body: 'MatchResultResponse',
    errors: [
      ...BODY_ERRORS,
      ErrorCode.MATCH_STATE_CONFLICT,
      ErrorCode.RESULT_CONFLICT,
      ErrorCode.UNKNOWN_PARTICIPANT,
    ],
  })
  @AnswersEndedAllocation()
  result(
    @CurrentAllocation() allocation: AllocationRecord,
    @Body() body: MatchResultBody,
  ): Promise<MatchResultResponse> {
    return this.servers.result(allocation, body);
  }

  /**
   * The server is alive (no body; idempotent): its guard stamps the heartbeat as it checks the
   * credential. A registered server silent past SERVER_HEARTBEAT_TIMEOUT_MS loses its match
   * (FAILED SERVER_LOST, maintenance's `silent_servers` stage).
   */
  @Post(':id/heartbeat')
  @AnswersServer({
    summary: 'The server is alive (no body; idempotent)',
    body: 'ServerHeartbeatResponse',
    errors: [ErrorCode.ALLOCATION_ENDED],
  })
  @RecordsServerHeartbeat()
  heartbeat(@CurrentAllocation() allocation: AllocationRecord): ServerHeartbeatResponse {
    return { matchId: allocation.matchId, serverId: allocation.serverId };
  }

  /**
   * The player's connection is gone: it may rejoin within its mode's grace window (QUEUE_REJOIN_GRACE),
   * past which it is ABANDONED. Idempotent; 409 PRESENCE_CONFLICT, 410 PLAYER_ABANDONED.
   */
  @PresenceRoute(
    'left',
    "A player's connection is gone: it may rejoin within its mode's grace window",
  )
  playerLeft(
    @CurrentAllocation() allocation: AllocationRecord,
    @Param('playerId', PLAYER_ID_PIPE) playerId: string,
  ): Promise<PlayerPresenceResponse> {
    return this.presence.left(allocation, playerId);
  }

  /** The player who left is back on its team. Idempotent; 409 PRESENCE_CONFLICT, 410 PLAYER_ABANDONED. */
  @PresenceRoute('rejoined', 'The player who left is back on its team')
  playerRejoined(
    @CurrentAllocation() allocation: AllocationRecord,
    @Param('playerId', PLAYER_ID_PIPE) playerId: string,
  ): Promise<PlayerPresenceResponse> {
    return this.presence.rejoined(allocation, playerId);
  }

  /**
   * Ask for players to fill open places on a team of the running match (backfill): 201 with the
   * new request, or 200 with the one a repeat of the same request opened while it is still OPEN.
   */
  @Post(':id/backfills')
  @AnswersServer({
    summary: 'Ask for players to fill open places on a team of the running match',
    status: 201,
    alsoStatus: {
      status: 200,
      description: 'The open request a repeat of the same request opened',
    },
    body: 'BackfillResponse',
    errors: [
      ...BODY_ERRORS,
      ErrorCode.ALLOCATION_ENDED,
      ErrorCode.MATCH_STATE_CONFLICT,
      ErrorCode.BACKFILL_CONFLICT,
      ErrorCode.BACKFILL_NO_OPEN_SLOTS,
    ],
  })
  async requestBackfill(
    @CurrentAllocation() allocation: AllocationRecord,
    @Body() body: BackfillRequestBody,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<BackfillResponse> {
    const { created, response } = await this.backfills.request(allocation, body);
    void reply.status(created ? 201 : 200);
    return response;
  }

  @Get(':id/backfills/:requestId')
  @AnswersBackfill({
    summary: 'Read a backfill request of this server',
    body: 'BackfillResponse',
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.ALLOCATION_ENDED, ErrorCode.BACKFILL_NOT_FOUND],
  })
  backfill(
    @CurrentAllocation() allocation: AllocationRecord,
    @Param('requestId', REQUEST_ID_PIPE) requestId: string,
  ): Promise<BackfillResponse> {
    return this.backfills.status(allocation, requestId);
  }

  @Delete(':id/backfills/:requestId')
  @AnswersBackfill({
    summary: 'Cancel a backfill request',
    body: 'BackfillResponse',
    errors: [
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.ALLOCATION_ENDED,
      ErrorCode.BACKFILL_NOT_FOUND,
      ErrorCode.BACKFILL_CONFLICT,
    ],
  })
  cancelBackfill(
    @CurrentAllocation() allocation: AllocationRecord,
    @Param('requestId', REQUEST_ID_PIPE) requestId: string,
  ): Promise<BackfillResponse> {
    return this.backfills.cancel(allocation, requestId);
  }

  @Post(':id/backfills/:requestId/accept')
  @AnswersBackfill({
    summary: 'Accept the roster revision that carries the backfilled players',
    body: 'BackfillResponse',
    errors: [
      ...BODY_ERRORS,
      ErrorCode.ALLOCATION_ENDED,
      ErrorCode.BACKFILL_NOT_FOUND,
      ErrorCode.BACKFILL_CONFLICT,
    ],
  })
  acceptBackfill(
    @CurrentAllocation() allocation: AllocationRecord,
    @Param('requestId', REQUEST_ID_PIPE) requestId: string,
    @Body() body: BackfillAcceptBody,
  ): Promise<BackfillResponse> {
    return this.backfills.accept(allocation, requestId, body);
  }

  @Post(':id/backfills/:requestId/connect')
  @AnswersBackfill({
    summary: 'Which backfilled players joined; the others are no-shows',
    body: 'BackfillConnectResponse',
    errors: [
      ...BODY_ERRORS,
      ErrorCode.ALLOCATION_ENDED,
      ErrorCode.BACKFILL_NOT_FOUND,
      ErrorCode.BACKFILL_CONFLICT,
      ErrorCode.UNKNOWN_PARTICIPANT,
    ],
  })
  backfillConnect(
    @CurrentAllocation() allocation: AllocationRecord,
    @Param('requestId', REQUEST_ID_PIPE) requestId: string,
    @Body() body: BackfillConnectBody,
  ): Promise<BackfillConnectResponse> {
    return this.backfills.connect(allocation, requestId, body);
  }
}
