import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import {
  ALLOCATION_QUEUE,
  REJOIN_TOKEN_JOB,
  rejoinTokenJobOptions,
  type AllocationJobData,
} from '@matchplane/allocation';
import { MATCH_PRESENCE_CHANGED } from '@matchplane/domain';
import { activeTraceparent } from '@matchplane/observability';
import { SubscribesTo, type OutboxEnvelope, type OutboxSubscriber } from '@matchplane/outbox';

/**
 * A player who left a running match gets a freshly signed join token: each LEFT becomes one job on
 * the allocation queue (the allocator holds the join keys), its id naming the leave, so a
 * redelivered event adds nothing.
 */
@Injectable()
@SubscribesTo(MATCH_PRESENCE_CHANGED)
export class RejoinTokenTriggerSubscriber implements OutboxSubscriber {
  constructor(@InjectQueue(ALLOCATION_QUEUE) private readonly queue: Queue<AllocationJobData>) {}

  async handle(envelope: OutboxEnvelope): Promise<void> {
    if (envelope.event !== MATCH_PRESENCE_CHANGED || envelope.payload.presence !== 'LEFT') return;
    const { matchId, playerId } = envelope.payload;
    const traceparent = activeTraceparent();
    await this.queue.add(
      REJOIN_TOKEN_JOB,
      { matchId, rejoinPlayerId: playerId, ...(traceparent ? { traceparent } : {}) },
      rejoinTokenJobOptions(matchId, playerId, Number(envelope.revision)),
    );
  }
}
