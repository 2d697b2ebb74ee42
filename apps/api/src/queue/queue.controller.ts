import { ErrorCode } from '@matchplane/contracts';
import { Body, Delete, Get, Param, Post, Res } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import {
  type PartyTicketResponse,
  type QueueOptionsResponse,
  type TicketResponse,
} from '@matchplane/contracts';
import type { AuthenticatedSession } from '@matchplane/players';
import { CurrentSession } from '../auth/player-auth.guard';
import { RequiredIdempotencyKey } from '../idempotency/idempotency-key.decorator';
import { sendIdempotent as send } from '../idempotency/idempotent-reply';
import { CreatePartyTicketBody, CreateTicketBody } from './queue.dto';
import { QueueService } from './queue.service';
import { TicketHeartbeats } from './ticket-heartbeats.service';
import { UuidParamPipe } from '../http/uuid-input';
import { Answers } from '../http/openapi/api-answers.decorator';
import { PlayerController } from '../auth/player-controller.decorator';

const ticketId = new UuidParamPipe('ticket id');

const IDEMPOTENCY_HEADER = {
  name: 'Idempotency-Key',
  required: true,
  description:
    'Unique per logical request; a retry with the same key and body replays the first answer',
};

/** The refusals of a request that must carry an Idempotency-Key. */
const IDEMPOTENCY_ERRORS = [
  ErrorCode.IDEMPOTENCY_KEY_REQUIRED,
  ErrorCode.IDEMPOTENCY_KEY_REUSED,
  ErrorCode.IDEMPOTENCY_KEY_IN_PROGRESS,
];

/** The refusals of queueing a ticket, alone or as a party (each route adds its own). */
const QUEUEING_ERRORS = [
  ErrorCode.VALIDATION_FAILED,
  ErrorCode.MALFORMED_JSON,
  ...IDEMPOTENCY_ERRORS,
  ErrorCode.UNKNOWN_MODE,
  ErrorCode.NO_LATENCY_MEASURED,
  ErrorCode.TICKET_ALREADY_LIVE,
  ErrorCode.COOLDOWN_ACTIVE,
  ErrorCode.QUEUE_PAUSED,
  ErrorCode.QUEUE_DRAINING,
];

/** An idempotent change to one ticket of this player, refused with `refusal` when it cannot apply. */
function AnswersTicketChange(summary: string, refusal: ErrorCode): MethodDecorator {
  return Answers({
    summary,
    caller: 'player',
    status: 200,
    body: 'TicketResponse',
    errors: [
      ErrorCode.VALIDATION_FAILED,
      ...IDEMPOTENCY_ERRORS,
      ErrorCode.TICKET_NOT_FOUND,
      refusal,
    ],
  });
}

@PlayerController('queue')
export class QueueController {
  constructor(
    private readonly queue: QueueService,
    private readonly heartbeats: TicketHeartbeats,
  ) {}

  @Get('options')
  @Answers({
    summary: 'What a client may queue for: modes, regions, probe edges, heartbeat interval',
    caller: 'player',
    status: 200,
    body: 'QueueOptionsResponse',
  })
  options(): Promise<QueueOptionsResponse> {
    return this.queue.options();
  }

  @Post('tickets')
  @Answers({
    summary: 'Queue this player (a measured region first); heartbeat the ticket until it ends',
    caller: 'player',
    status: 201,
    body: 'TicketResponse',
    description:
      'A retry with the same Idempotency-Key and body replays the first answer with its status (header idempotent-replayed: true).',
    errors: [...QUEUEING_ERRORS, ErrorCode.PARTY_IN_QUEUE],
  })
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
  @Answers({
    summary: "The party's leader queues the whole party as one ticket",
    caller: 'player',
    status: 201,
    body: 'PartyTicketResponse',
    errors: [
      ...QUEUEING_ERRORS,
      ErrorCode.PARTY_NOT_FOUND,
      ErrorCode.PARTY_LEADER_ONLY,
      ErrorCode.PARTY_IN_QUEUE,
      ErrorCode.PARTY_TOO_SMALL,
      ErrorCode.PARTY_TOO_LARGE,
    ],
  })
  @ApiHeader(IDEMPOTENCY_HEADER)
  async createForParty(
    @Body() body: CreatePartyTicketBody,
    @CurrentSession() session: AuthenticatedSession,
    @RequiredIdempotencyKey() key: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PartyTicketResponse> {
    return send(
      reply,
      await this.queue.createForParty(
        session.playerId,
        key,
        body.mode,
        body.attributes,
        body.memberRoles,
      ),
    );
  }

  @Get('tickets/:id')
  @Answers({
    summary: 'Read a ticket of this player (state, matchId once matched, endReason once ended)',
    caller: 'player',
    status: 200,
    body: 'TicketResponse',
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.TICKET_NOT_FOUND],
  })
  get(
    @Param('id', ticketId) id: string,
    @CurrentSession() session: AuthenticatedSession,
  ): Promise<TicketResponse> {
    return this.queue.get(session.playerId, id);
  }

  @Post('tickets/:id/heartbeat')
  @AnswersTicketChange(
    'Keep a live ticket alive (at least every heartbeatIntervalMs)',
    ErrorCode.TICKET_FINISHED,
  )
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
  @AnswersTicketChange('Cancel a ticket that is still searching', ErrorCode.TICKET_NOT_CANCELLABLE)
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
