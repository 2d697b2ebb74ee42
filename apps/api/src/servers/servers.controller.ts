import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
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

const SERVER_ID = { name: 'id', description: 'The server id the allocator gave this server' };
const REQUEST_ID_PIPE = new UuidParamPipe('backfill request id');
const PLAYER_ID_PIPE = new UuidParamPipe('player id');
const PLAYER_ID = { name: 'playerId', description: 'A participant of the match', format: 'uuid' };
const REQUEST_ID = {
  name: 'requestId',
  description: 'A backfill request of this server',
  format: 'uuid',
};

/** The game-server contract (libs/contracts server-api.ts), behind the workload credential. */
@ApiTags('servers')
@ApiBearerAuth()
@ApiParam(SERVER_ID)
@UseGuards(ServerCredentialGuard)
@RateLimit(RateLimitScope.SERVER)
@Controller(contractPaths('servers'))
export class ServersController {
  constructor(
    private readonly servers: ServerLifecycleService,
    private readonly backfills: ServerBackfillService,
    private readonly presence: ServerPresenceService,
  ) {}

  @Post(':id/register')
  @HttpCode(200)
  register(
    @CurrentAllocation() allocation: AllocationRecord,
    @Body() body: RegisterServerBody,
  ): Promise<RegisterServerResponse> {
    return this.servers.register(allocation, body);
  }

  @Get(':id/roster')
  roster(@CurrentAllocation() allocation: AllocationRecord): Promise<RosterResponse> {
    return this.servers.roster(allocation);
  }

  @Post(':id/initial-connect')
  @HttpCode(200)
  initialConnect(
    @CurrentAllocation() allocation: AllocationRecord,
    @Body() body: InitialConnectBody,
  ): Promise<InitialConnectResponse> {
    return this.servers.initialConnect(allocation, body);
  }

  @Post(':id/result')
  @AnswersEndedAllocation()
  @HttpCode(200)
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
  @HttpCode(200)
  @RecordsServerHeartbeat()
  heartbeat(@CurrentAllocation() allocation: AllocationRecord): ServerHeartbeatResponse {
    return { matchId: allocation.matchId, serverId: allocation.serverId };
  }

  /**
   * The player's connection is gone: it may rejoin within its mode's grace window (QUEUE_REJOIN_GRACE),
   * past which it is ABANDONED. Idempotent; 409 PRESENCE_CONFLICT, 410 PLAYER_ABANDONED.
   */
  @Post(':id/players/:playerId/left')
  @HttpCode(200)
  @ApiParam(PLAYER_ID)
  playerLeft(
    @CurrentAllocation() allocation: AllocationRecord,
    @Param('playerId', PLAYER_ID_PIPE) playerId: string,
  ): Promise<PlayerPresenceResponse> {
    return this.presence.left(allocation, playerId);
  }

  /** The player who left is back on its team. Idempotent; 409 PRESENCE_CONFLICT, 410 PLAYER_ABANDONED. */
  @Post(':id/players/:playerId/rejoined')
  @HttpCode(200)
  @ApiParam(PLAYER_ID)
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
  @ApiParam(REQUEST_ID)
  backfill(
    @CurrentAllocation() allocation: AllocationRecord,
    @Param('requestId', REQUEST_ID_PIPE) requestId: string,
  ): Promise<BackfillResponse> {
    return this.backfills.status(allocation, requestId);
  }

  @Delete(':id/backfills/:requestId')
  @ApiParam(REQUEST_ID)
  cancelBackfill(
    @CurrentAllocation() allocation: AllocationRecord,
    @Param('requestId', REQUEST_ID_PIPE) requestId: string,
  ): Promise<BackfillResponse> {
    return this.backfills.cancel(allocation, requestId);
  }

  @Post(':id/backfills/:requestId/accept')
  @HttpCode(200)
  @ApiParam(REQUEST_ID)
  acceptBackfill(
    @CurrentAllocation() allocation: AllocationRecord,
    @Param('requestId', REQUEST_ID_PIPE) requestId: string,
    @Body() body: BackfillAcceptBody,
  ): Promise<BackfillResponse> {
    return this.backfills.accept(allocation, requestId, body);
  }

  @Post(':id/backfills/:requestId/connect')
  @HttpCode(200)
  @ApiParam(REQUEST_ID)
  backfillConnect(
    @CurrentAllocation() allocation: AllocationRecord,
    @Param('requestId', REQUEST_ID_PIPE) requestId: string,
    @Body() body: BackfillConnectBody,
  ): Promise<BackfillConnectResponse> {
    return this.backfills.connect(allocation, requestId, body);
  }
}
