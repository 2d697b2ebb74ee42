import { Inject, Injectable, Logger } from '@nestjs/common';
import { Histogram } from 'prom-client';
import type { TicketResponse } from '@matchplane/contracts';
import {
  idempotencyKeyId,
  IdempotencyStore,
  type IdempotentOutcome,
  type IdempotentRequest,
} from '@matchplane/idempotency';
import { MetricsRegistry } from '@matchplane/observability';
import { answerWithin, RequestBatcher, type BatchOutcome } from '@matchplane/persistence';
import {
  QueueWaitEstimates,
  TicketLiveness,
  TicketStore,
  type StoredTicket,
  type TicketBeat,
} from '@matchplane/tickets';
import { ApiConfig } from '../api.config';
import { estimatedWait, ticketFinished, ticketNotFound, ticketResponse } from './ticket-answers';

const HEARTBEAT_ROUTE = 'POST queue/tickets/:id/heartbeat';
/** A liveness batch Redis has not answered by then goes to PostgreSQL instead. */
const LIVENESS_TIMEOUT_MS = 250;

interface HeartbeatRequest extends IdempotentRequest {
  readonly input: { readonly ticketId: string };
}

/**
 * A searching player's ticket heartbeats, the API's hottest write. First through the liveness
 * store (TicketLiveness, one Redis pipeline per batch): a searching ticket of this player is
 * answered from Redis, no PostgreSQL row changed and no key stored, since a heartbeat is
 * idempotent by nature (a retry answers the current state). What Redis cannot answer (a ticket not
 * searching, another player's, unknown, Redis down or slow; or TICKET_LIVENESS_IN_REDIS=false)
 * goes to PostgreSQL: batched, each batch one transaction with its idempotency keys
 * (HEARTBEAT_BATCH_SIZE, HEARTBEAT_BATCHES_IN_FLIGHT), each caller answered alone.
 */
@Injectable()
export class TicketHeartbeats {
  private readonly logger = new Logger(TicketHeartbeats.name);
  private readonly livenessInRedis: boolean;
  private livenessFailing = false;
  private readonly beats: RequestBatcher<TicketBeat, StoredTicket | undefined>;
  private readonly heartbeats: RequestBatcher<HeartbeatRequest, IdempotentOutcome<TicketResponse>>;
  /** HEARTBEAT_SYNCHRONOUS_COMMIT: a heartbeat is worth no WAL flush of its own (see ApiConfig). */
  private readonly heartbeatCommits: { synchronousCommit: boolean };

  constructor(
    private readonly idempotency: IdempotencyStore,
    private readonly tickets: TicketStore,
    private readonly liveness: TicketLiveness,
    private readonly waits: QueueWaitEstimates,
    @Inject(ApiConfig) apiConfig: ApiConfig,
    @Inject(MetricsRegistry) metrics: MetricsRegistry,
  ) {
    this.livenessInRedis = apiConfig.TICKET_LIVENESS_IN_REDIS;
    const beatBatchSizes = new Histogram({
      name: 'api_heartbeat_liveness_batch_size',
      help: 'Heartbeats sent to the liveness store (Redis) per pipeline',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [metrics],
    });
    this.beats = new RequestBatcher<TicketBeat, StoredTicket | undefined>(
      (beats) => this.beatBatch(beats),
      {
        maxBatchSize: apiConfig.HEARTBEAT_BATCH_SIZE,
        maxConcurrentBatches: apiConfig.HEARTBEAT_BATCHES_IN_FLIGHT,
        onBatch: (size) => beatBatchSizes.observe(size),
      },
    );
    const batchSizes = new Histogram({
      name: 'api_heartbeat_batch_size',
      help: 'Heartbeats written per transaction (those arriving together share one)',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [metrics],
    });
    this.heartbeats = new RequestBatcher<HeartbeatRequest, IdempotentOutcome<TicketResponse>>(
      (requests) => this.heartbeatBatch(requests),
      {
        maxBatchSize: apiConfig.HEARTBEAT_BATCH_SIZE,
        maxConcurrentBatches: apiConfig.HEARTBEAT_BATCHES_IN_FLIGHT,
        // A replay must see its first request's outcome, not race it inside one batch.
        exclusiveKey: idempotencyKeyId,
        onBatch: (size) => batchSizes.observe(size),
      },
    );
    this.heartbeatCommits = { synchronousCommit: apiConfig.HEARTBEAT_SYNCHRONOUS_COMMIT };
  }

  /**
   * Heartbeats that arrive together share one Redis pipeline (see {@link beatBatch}), and those
   * Redis cannot answer one transaction (see {@link heartbeatBatch}); each caller still gets its
   * own answer, replay or error.
   */
  async heartbeat(
    playerId: string,
    key: string,
    ticketId: string,
  ): Promise<IdempotentOutcome<TicketResponse>> {
    if (this.livenessInRedis) {
      const ticket = await this.beats.submit({ ticketId, playerId });
      if (ticket) {
        const wait = estimatedWait(this.waits, ticket);
        const body = ticketResponse(ticket, ticket.lastHeartbeatAt, undefined, wait);
        return { status: 200, body, replayed: false };
      }
    }
    return this.heartbeats.submit({ playerId, key, route: HEARTBEAT_ROUTE, input: { ticketId } });
  }

  /**
   * One Redis pipeline for many beats; a ticket Redis cannot answer for, or the whole batch when
   * Redis fails or is slower than {@link LIVENESS_TIMEOUT_MS}, is answered undefined: PostgreSQL's.
   */
  private async beatBatch(
    beats: readonly TicketBeat[],
  ): Promise<BatchOutcome<StoredTicket | undefined>[]> {
    try {
      const tickets = await answerWithin(
        this.liveness.beatMany(beats, new Date()),
        LIVENESS_TIMEOUT_MS,
      );
      if (this.livenessFailing) this.logger.log('liveness store answers again');
      this.livenessFailing = false;
      return tickets.map((ticket) => ({ value: ticket }));
    } catch (error) {
      // One line per outage, not per batch.
      if (!this.livenessFailing) {
        this.logger.warn(
          `liveness store failed, heartbeats go to PostgreSQL: ${(error as Error).message}`,
        );
      }
      this.livenessFailing = true;
      return beats.map(() => ({ value: undefined }));
    }
  }

  /**
   * One transaction for many heartbeats (IdempotencyStore.executeMany): their tickets updated in
   * one statement, their keys stored with their answers in one. Then one Redis pipeline, sent by
   * the store once the transaction commits and not waited for, carries the whole current rows
   * into the projection, which repairs a stale candidate.
   */
  private heartbeatBatch(
    requests: readonly HeartbeatRequest[],
  ): Promise<BatchOutcome<IdempotentOutcome<TicketResponse>>[]> {
    const now = new Date();
    return this.idempotency.executeMany<TicketResponse>(
      requests,
      async (manager, claimed, unit) => {
        const beats = claimed.map((request) => ({
          ticketId: (request as HeartbeatRequest).input.ticketId,
          playerId: request.playerId,
        }));
        // The store refreshes the beaten candidates once this commits, not waited for (the
        // projection is an index the matcher re-checks; the next heartbeat repairs a lost write).
        const beaten = await this.tickets.heartbeatMany(unit, beats, now);
        const isBeaten = (beat: (typeof beats)[number]) =>
          beaten.get(beat.ticketId)?.playerId === beat.playerId;
        // Rare: why a ticket was not live, read in a statement of its own (a fresh snapshot).
        const others = await this.tickets.loadMany(
          manager,
          beats.filter((beat) => !isBeaten(beat)).map((beat) => beat.ticketId),
        );
        return beats.map((beat) => {
          const ticket = beaten.get(beat.ticketId);
          if (ticket && isBeaten(beat)) {
            return {
              value: {
                status: 200,
                body: ticketResponse(ticket, now, undefined, estimatedWait(this.waits, ticket)),
              },
            };
          }
          const other = others.get(beat.ticketId);
          return {
            error:
              !other || other.playerId !== beat.playerId
                ? ticketNotFound(beat.ticketId)
                : ticketFinished(other),
          };
        });
      },
      this.heartbeatCommits,
    );
  }
}
