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
import { SubscribesTo, type OutboxEnvelope } from '@matchplane/outbox';
import { AllocationJobTrigger, type AllocationJob } from './allocation-job.trigger';

/**
 * Starts the allocation of every new match: a match entering ALLOCATING becomes one allocation
 * job, its id the match id, so a redelivered event (delivery is at least once) adds nothing.
 */
@Injectable()
@SubscribesTo(MATCH_STATE_CHANGED)
export class AllocationTriggerSubscriber extends AllocationJobTrigger {
  constructor(@InjectQueue(ALLOCATION_QUEUE) queue: Queue<AllocationJobData>) {
    super(queue);
  }

  protected jobFor(envelope: OutboxEnvelope): AllocationJob | undefined {
    if (envelope.event !== MATCH_STATE_CHANGED || envelope.payload.to !== 'ALLOCATING') return;
    const matchId = envelope.aggregateId;
    return { name: ALLOCATE_JOB, data: { matchId }, options: allocationJobOptions(matchId) };
  }
}
