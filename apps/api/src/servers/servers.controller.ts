import { Body, Controller, Get, HttpCode, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AllocationRecord } from '@matchplane/allocation';
import { RateLimit, RateLimitScope } from '../http/rate-limit.decorator';
import {
  type InitialConnectResponse,
  type MatchResultResponse,
  type RegisterServerResponse,
  type RosterResponse,
} from '@matchplane/contracts';
import { contractPaths } from '@matchplane/routing';
import { CurrentAllocation, ServerCredentialGuard } from './server-credential.guard';
import { ServerLifecycleService } from './server-lifecycle.service';
import { InitialConnectBody, MatchResultBody, RegisterServerBody } from './servers.dto';

const SERVER_ID = { name: 'id', description: 'The server id the allocator gave this server' };

/** The game-server contract (libs/contracts server-api.ts), behind the workload credential. */
@ApiTags('servers')
@ApiBearerAuth()
@ApiParam(SERVER_ID)
@UseGuards(ServerCredentialGuard)
@RateLimit(RateLimitScope.SERVER)
@Controller(contractPaths('servers'))
export class ServersController {
  constructor(private readonly servers: ServerLifecycleService) {}

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
  @HttpCode(200)
  result(
    @CurrentAllocation() allocation: AllocationRecord,
    @Body() body: MatchResultBody,
  ): Promise<MatchResultResponse> {
    return this.servers.result(allocation, body);
  }
}
