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
import { SubscribesTo, type OutboxEnvelope } from '@matchplane/outbox';
import { AllocationJobTrigger, type AllocationJob } from './allocation-job.trigger';

/**
 * A player who left a running match gets a freshly signed join token: each LEFT becomes one job on
 * the allocation queue (the allocator holds the join keys), its id naming the leave, so a
 * redelivered event adds nothing.
 */
@Injectable()
@SubscribesTo(MATCH_PRESENCE_CHANGED)
export class RejoinTokenTriggerSubscriber extends AllocationJobTrigger {
  constructor(@InjectQueue(ALLOCATION_QUEUE) queue: Queue<AllocationJobData>) {
    super(queue);
  }

  protected jobFor(envelope: OutboxEnvelope): AllocationJob | undefined {
    if (envelope.event !== MATCH_PRESENCE_CHANGED || envelope.payload.presence !== 'LEFT') return;
    const { matchId, playerId } = envelope.payload;
    return {
      name: REJOIN_TOKEN_JOB,
      data: { matchId, rejoinPlayerId: playerId },
      options: rejoinTokenJobOptions(matchId, playerId, Number(envelope.revision)),
    };
  }
}
