import { Body, Controller, Delete, Get, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import {
  type PartyTicketResponse,
  type QueueOptionsResponse,
  type TicketResponse,
} from '@matchplane/contracts';
import { contractPaths } from '@matchplane/routing';
import type { AuthenticatedSession } from '@matchplane/players';
import { CurrentSession, PlayerAuthGuard } from '../auth/player-auth.guard';
import { RateLimit, RateLimitScope } from '../http/rate-limit.decorator';
import { RequiredIdempotencyKey } from '../idempotency/idempotency-key.decorator';
import { sendIdempotent as send } from '../idempotency/idempotent-reply';
import { CreatePartyTicketBody, CreateTicketBody } from './queue.dto';
import { QueueService } from './queue.service';
import { TicketHeartbeats } from './ticket-heartbeats.service';
import { UuidParamPipe } from '../http/uuid-input';

const ticketId = new UuidParamPipe('ticket id');

const IDEMPOTENCY_HEADER = {
  name: 'Idempotency-Key',
  required: true,
  description:
    'Unique per logical request; a retry with the same key and body replays the first answer',
};

@ApiTags('queue')
@ApiBearerAuth()
@UseGuards(PlayerAuthGuard)
@RateLimit(RateLimitScope.PLAYER)
@Controller(contractPaths('queue'))
export class QueueController {
  constructor(
    private readonly queue: QueueService,
    private readonly heartbeats: TicketHeartbeats,
  ) {}

  @Get('options')
  options(): Promise<QueueOptionsResponse> {
    return this.queue.options();
  }

  @Post('tickets')
  @ApiHeader(IDEMPOTENCY_HEADER)
  async create(
    @Body() body: CreateTicketBody,
    @CurrentSession() session: AuthenticatedSession,
    @RequiredIdempotencyKey() key: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TicketResponse> {
    return send(reply, await this.queue.create(session.playerId, key, body.mode, body.attributes));
  }

  /** The party's leader queues the whole party (POST /v1/parties first). */
  @Post('party-tickets')
  @ApiHeader(IDEMPOTENCY_HEADER)
  async createForParty(
    @Body() body: CreatePartyTicketBody,
    @CurrentSession() session: AuthenticatedSession,
    @RequiredIdempotencyKey() key: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PartyTicketResponse> {
    return send(
      reply,
      await this.queue.createForParty(session.playerId, key, body.mode, body.attributes),
    );
  }

  @Get('tickets/:id')
  get(
    @Param('id', ticketId) id: string,
    @CurrentSession() session: AuthenticatedSession,
  ): Promise<TicketResponse> {
    return this.queue.get(session.playerId, id);
  }

  @Post('tickets/:id/heartbeat')
  @ApiHeader(IDEMPOTENCY_HEADER)
  async heartbeat(
    @Param('id', ticketId) id: string,
    @CurrentSession() session: AuthenticatedSession,
    @RequiredIdempotencyKey() key: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TicketResponse> {
    return send(reply, await this.heartbeats.heartbeat(session.playerId, key, id));
  }

  @Delete('tickets/:id')
  @ApiHeader(IDEMPOTENCY_HEADER)
  async cancel(
    @Param('id', ticketId) id: string,
    @CurrentSession() session: AuthenticatedSession,
    @RequiredIdempotencyKey() key: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TicketResponse> {
    return send(reply, await this.queue.cancel(session.playerId, key, id));
  }
}
