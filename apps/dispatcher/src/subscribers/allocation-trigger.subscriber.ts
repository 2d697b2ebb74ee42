import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import {
  ALLOCATE_JOB,
  ALLOCATION_QUEUE,
  allocationJobOptions,
  type AllocationJobData,
} from '@matchplane/allocation';
import { MATCH_STATE_CHANGED } from '@matchplane/domain';
import { activeTraceparent } from '@matchplane/observability';
import { SubscribesTo, type OutboxEnvelope, type OutboxSubscriber } from '@matchplane/outbox';

/**
 * Starts the allocation of every new match: a match entering ALLOCATING becomes one allocation
 * job, its id the match id, so a redelivered event (delivery is at least once) adds nothing. The
 * job carries this delivery's trace context to the allocator.
 */
@Injectable()
@SubscribesTo(MATCH_STATE_CHANGED)
export class AllocationTriggerSubscriber implements OutboxSubscriber {
  constructor(@InjectQueue(ALLOCATION_QUEUE) private readonly queue: Queue<AllocationJobData>) {}

  async handle(envelope: OutboxEnvelope): Promise<void> {
    if (envelope.event !== MATCH_STATE_CHANGED || envelope.payload.to !== 'ALLOCATING') return;
    const matchId = envelope.aggregateId;
    const traceparent = activeTraceparent();
    await this.queue.add(
      ALLOCATE_JOB,
      traceparent ? { matchId, traceparent } : { matchId },
      allocationJobOptions(matchId),
    );
  }
}
