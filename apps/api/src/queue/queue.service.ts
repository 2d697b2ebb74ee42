import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { DataSource, type EntityManager } from 'typeorm';
import { ServiceConfig } from '@matchplane/config';
import {
  ApiError,
  ErrorCode,
  type QueueOptionsResponse,
  type TicketExplanation,
  type TicketResponse,
} from '@matchplane/contracts';
import { isTerminalTicketState, measuredRegions } from '@matchplane/domain';
import { OutboxSignal } from '@matchplane/outbox';
import { sqlStateOf } from '@matchplane/persistence';
import { PlayerStore } from '@matchplane/players';
import {
  CandidateProjection,
  ticketExplanationKey,
  TicketStore,
  type StoredTicket,
} from '@matchplane/tickets';
import { IdempotencyStore, type IdempotentOutcome } from '../idempotency/idempotency.store';
import { LatencyStore } from '../probes/latency.store';
import { QueuePolicy } from './queue-policy';

/** The API view of a ticket. */
export function ticketResponse(
  ticket: StoredTicket,
  now: Date,
  explanation?: TicketExplanation,
): TicketResponse {
  const predictedRtt = ticket.predictedRtt;
  const end = ticket.finishedAt ?? (ticket.state === 'SEARCHING' ? now : ticket.stateChangedAt);
  return {
    id: ticket.id,
    playerId: ticket.playerId,
    mode: ticket.mode,
    state: ticket.state,
    revision: ticket.revision,
    regionsMeasured: measuredRegions(predictedRtt).sort(),
    predictedRttMs: { ...predictedRtt },
    enqueuedAt: ticket.enqueuedAt.toISOString(),
    lastHeartbeatAt: ticket.lastHeartbeatAt.toISOString(),
    waitSeconds: Math.max(0, Math.round((end.getTime() - ticket.enqueuedAt.getTime()) / 100) / 10),
    ...(ticket.matchId ? { matchId: ticket.matchId } : {}),
    ...(explanation && ticket.state === 'SEARCHING' ? { explanation } : {}),
  };
}

/**
 * Queue tickets for players: each mutation is one transaction with its idempotency key and
 * outbox envelope; the candidate projection and the relay are told after commit.
 */
@Injectable()
export class QueueService {
  private readonly prefix: string;

  constructor(
    private readonly idempotency: IdempotencyStore,
    private readonly tickets: TicketStore,
    private readonly players: PlayerStore,
    private readonly latencies: LatencyStore,
    private readonly projection: CandidateProjection,
    private readonly signal: OutboxSignal,
    private readonly policy: QueuePolicy,
    private readonly dataSource: DataSource,
    @Inject(Redis) private readonly redis: Redis,
    @Inject(ServiceConfig) config: ServiceConfig,
  ) {
    this.prefix = config.REDIS_KEY_PREFIX;
  }

  options(): QueueOptionsResponse {
    return {
      modes: this.policy.modes.map(({ mode, teamSize, teamCount }) => ({
        mode,
        teamSize,
        teamCount,
      })),
      regions: [...this.policy.regions],
      heartbeatIntervalMs: this.policy.heartbeatIntervalMs,
    };
  }

  async create(
    playerId: string,
    key: string,
    mode: string,
  ): Promise<IdempotentOutcome<TicketResponse>> {
    this.policy.mode(mode);
    let created: StoredTicket | undefined;
    const outcome = await this.idempotency.execute<TicketResponse>(
      { playerId, key, route: 'POST queue/tickets', input: { mode } },
      async (manager) => {
        const now = new Date();
        const profile = await this.players.queueEntryProfile(manager, playerId);
        if (!profile)
          throw new ApiError(401, ErrorCode.UNAUTHENTICATED, 'The session belongs to no player');
        if (profile.cooldownUntil && profile.cooldownUntil > now) {
          const seconds = Math.ceil((profile.cooldownUntil.getTime() - now.getTime()) / 1000);
          throw new ApiError(
            429,
            ErrorCode.COOLDOWN_ACTIVE,
            `A no-show penalty is in force for ${seconds} s more`,
            {
              headers: { 'retry-after': String(seconds) },
            },
          );
        }
        const live = await this.tickets.liveTicketOf(manager, playerId);
        if (live) throw liveTicketConflict(live.id);
        const predictedRtt = await this.latencies.estimates(manager, playerId, this.policy.regions);
        if (Object.keys(predictedRtt).length === 0) {
          throw new ApiError(
            409,
            ErrorCode.NO_LATENCY_MEASURED,
            'Probe at least one region (POST /v1/probes/{region}/challenge) before queueing',
          );
        }
        const { ticket } = await this.createTicket(
          manager,
          { playerId, mode, rating: profile.rating, predictedRtt },
          now,
        );
        created = ticket;
        return { status: 201, body: ticketResponse(ticket, now) };
      },
    );
    if (created) await this.afterCommit(created);
    return outcome;
  }

  async heartbeat(
    playerId: string,
    key: string,
    ticketId: string,
  ): Promise<IdempotentOutcome<TicketResponse>> {
    let beaten: StoredTicket | undefined;
    const outcome = await this.idempotency.execute<TicketResponse>(
      { playerId, key, route: 'POST queue/tickets/:id/heartbeat', input: { ticketId } },
      async (manager) => {
        const now = new Date();
        const ticket = await this.tickets.heartbeat(manager, ticketId, playerId, now);
        if (!ticket) throw await this.notLive(manager, ticketId, playerId);
        beaten = ticket;
        return { status: 200, body: ticketResponse(ticket, now) };
      },
    );
    // The heartbeat carries the whole current row into the projection, so it repairs a stale candidate.
    if (beaten) await this.projection.applyAfterCommit(beaten);
    return outcome;
  }

  async cancel(
    playerId: string,
    key: string,
    ticketId: string,
  ): Promise<IdempotentOutcome<TicketResponse>> {
    let cancelled: StoredTicket | undefined;
    const outcome = await this.idempotency.execute<TicketResponse>(
      { playerId, key, route: 'DELETE queue/tickets/:id', input: { ticketId } },
      async (manager) => {
        const now = new Date();
        const current = await this.tickets.load(manager, ticketId, { forUpdate: true });
        if (!current || current.playerId !== playerId) throw ticketNotFound(ticketId);
        if (isTerminalTicketState(current.state)) throw ticketFinished(current);
        if (current.state !== 'SEARCHING') {
          throw new ApiError(
            409,
            ErrorCode.TICKET_NOT_CANCELLABLE,
            `Ticket ${ticketId} is ${current.state}: it has a match and can no longer be cancelled from the queue`,
          );
        }
        const { ticket } = await this.tickets.transition(
          manager,
          current,
          { to: 'CANCELLED', reason: 'PLAYER_CANCELLED' },
          now,
        );
        cancelled = ticket;
        return { status: 200, body: ticketResponse(ticket, now) };
      },
    );
    if (cancelled) await this.afterCommit(cancelled);
    return outcome;
  }

  async get(playerId: string, ticketId: string): Promise<TicketResponse> {
    const ticket = await this.tickets.load(this.dataSource.manager, ticketId);
    if (!ticket || ticket.playerId !== playerId) throw ticketNotFound(ticketId);
    const explanation = ticket.state === 'SEARCHING' ? await this.explanation(ticketId) : undefined;
    return ticketResponse(ticket, new Date(), explanation);
  }

  private async createTicket(
    manager: EntityManager,
    input: { playerId: string; mode: string; rating: number; predictedRtt: Record<string, number> },
    now: Date,
  ) {
    try {
      return await this.tickets.create(manager, { id: randomUUID(), ...input }, now);
    } catch (error) {
      // Two creates raced past the check above; the partial unique index decided.
      if (sqlStateOf(error) === '23505') throw liveTicketConflict();
      throw error;
    }
  }

  private async afterCommit(ticket: StoredTicket): Promise<void> {
    this.signal.committed();
    await this.projection.applyAfterCommit(ticket);
  }

  private async notLive(
    manager: EntityManager,
    ticketId: string,
    playerId: string,
  ): Promise<ApiError> {
    const ticket = await this.tickets.load(manager, ticketId);
    if (!ticket || ticket.playerId !== playerId) return ticketNotFound(ticketId);
    return ticketFinished(ticket);
  }

  private async explanation(ticketId: string): Promise<TicketExplanation | undefined> {
    const raw = await this.redis.get(ticketExplanationKey(this.prefix, ticketId)).catch(() => null);
    if (raw === null) return undefined;
    try {
      return JSON.parse(raw) as TicketExplanation;
    } catch {
      return undefined;
    }
  }
}

function ticketNotFound(ticketId: string): ApiError {
  // Another player's ticket is indistinguishable from a missing one: ids are not disclosed.
  return new ApiError(404, ErrorCode.TICKET_NOT_FOUND, `No ticket ${ticketId} of this player`);
}

function ticketFinished(ticket: StoredTicket): ApiError {
  return new ApiError(
    409,
    ErrorCode.TICKET_FINISHED,
    `Ticket ${ticket.id} is ${ticket.state}; create a new ticket to queue again`,
  );
}

function liveTicketConflict(ticketId?: string): ApiError {
  return new ApiError(
    409,
    ErrorCode.TICKET_ALREADY_LIVE,
    `This player already holds a live ticket${ticketId ? ` (${ticketId})` : ''}; cancel it or wait for its match to end`,
  );
}
