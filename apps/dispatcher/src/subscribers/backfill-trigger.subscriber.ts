import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import {
  ALLOCATION_QUEUE,
  BACKFILL_JOB,
  backfillJobOptions,
  type AllocationJobData,
} from '@matchplane/allocation';
import { BACKFILL_STATE_CHANGED } from '@matchplane/domain';
import { SubscribesTo, type OutboxEnvelope } from '@matchplane/outbox';
import { AllocationJobTrigger, type AllocationJob } from './allocation-job.trigger';

/**
 * A backfill request the matcher filled becomes one job on the allocation queue: the allocator,
 * which holds the join keys, signs the added players' tokens and publishes the roster revision.
 * Job id = request id, so a redelivered event adds nothing.
 */
@Injectable()
@SubscribesTo(BACKFILL_STATE_CHANGED)
export class BackfillTriggerSubscriber extends AllocationJobTrigger {
  constructor(@InjectQueue(ALLOCATION_QUEUE) queue: Queue<AllocationJobData>) {
    super(queue);
  }

  protected jobFor(envelope: OutboxEnvelope): AllocationJob | undefined {
    if (envelope.event !== BACKFILL_STATE_CHANGED || envelope.payload.to !== 'MATCHED') return;
    const { requestId, matchId } = envelope.payload;
    return {
      name: BACKFILL_JOB,
      data: { matchId, backfillRequestId: requestId },
      options: backfillJobOptions(requestId),
    };
  }
}
