import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ErrorCode } from '@matchplane/contracts';
import { admissionRefusal, measuredRegions } from '@matchplane/domain';
import { CodedError } from '@matchplane/errors';
import { QueueControls } from '@matchplane/tickets';

/**
 * The operator holds at the queue's door: a ticket of a paused mode (or one whose every measured
 * region is paused) is 409 QUEUE_PAUSED, of a draining one 409 QUEUE_DRAINING, with the
 * operator's expected duration as Retry-After. Read in the enqueue's own transaction.
 */
@Injectable()
export class QueueAdmission {
  constructor(private readonly controls: QueueControls) {}

  async check(
    manager: EntityManager,
    mode: string,
    predictedRtt: Readonly<Record<string, number>>,
  ): Promise<void> {
    const controls = await this.controls.list(manager);
    if (controls.length === 0) return;
    const refused = admissionRefusal(controls, mode, measuredRegions(predictedRtt));
    if (!refused) return;
    throw new CodedError(
      refused.state === 'PAUSED' ? ErrorCode.QUEUE_PAUSED : ErrorCode.QUEUE_DRAINING,
      refused.detail,
      refused.retryAfterSeconds === undefined
        ? {}
        : { retryAfterSeconds: refused.retryAfterSeconds },
    );
  }
}
