import { Inject, Injectable, Logger } from '@nestjs/common';
import { backoffDelayMs } from '@matchplane/persistence';
import { validateEnvelope } from './envelope.builder';
import { PermanentDeliveryError } from './outbox-subscriber.decorator';
import { OutboxMetrics } from './outbox.metrics';
import { OutboxRepository } from './outbox.repository';
import { SubscriberRegistry } from './subscriber.registry';
import type { OutboxRow } from './outbox.row';

export const OUTBOX_DELIVERY_OPTIONS = Symbol('OUTBOX_DELIVERY_OPTIONS');

export interface OutboxDeliveryOptions {
  /** After this many failed attempts the row is dead-lettered and its aggregate moves on. */
  maxAttempts: number;
  /** Backoff between attempts: jittered, doubling from base up to cap. */
  retryBaseMs: number;
  retryCapMs: number;
}

export type DeliveryOutcome = 'published' | 'retry-scheduled' | 'dead-lettered' | 'not-pending';

/**
 * Delivers one claimed row: validate, hand to every subscriber of its event type, ack. A
 * failure is counted against this row only (its aggregate waits; others go on). An ack failure
 * is a database failure and propagates, stopping the run.
 */
@Injectable()
export class OutboxDelivery {
  private readonly logger = new Logger(OutboxDelivery.name);

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly subscribers: SubscriberRegistry,
    private readonly metrics: OutboxMetrics,
    @Inject(OUTBOX_DELIVERY_OPTIONS) private readonly options: OutboxDeliveryOptions,
  ) {}

  async deliver(outboxId: string): Promise<{ outcome: DeliveryOutcome; row?: OutboxRow }> {
    const row = await this.outbox.findPending(outboxId);
    if (!row) return { outcome: 'not-pending' };
    try {
      const envelope = validateEnvelope(row);
      for (const { subscriber } of this.subscribers.subscribersOf(envelope)) {
        await subscriber.handle(envelope);
      }
    } catch (error) {
      return { outcome: await this.fail(row, error), row };
    }
    await this.outbox.markPublished(row.id);
    this.metrics.delivered.inc({ event: row.event });
    this.metrics.commitToDelivery.observe({ event: row.event }, (Date.now() - row.created_at.getTime()) / 1000);
    return { outcome: 'published', row };
  }

  private async fail(row: OutboxRow, error: unknown): Promise<DeliveryOutcome> {
    const permanent = error instanceof PermanentDeliveryError;
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const result = await this.outbox.recordFailure(row.id, message, {
      permanent,
      maxAttempts: this.options.maxAttempts,
      retryDelayMs: backoffDelayMs(row.attempts + 1, { baseMs: this.options.retryBaseMs, capMs: this.options.retryCapMs }),
    });
    this.metrics.failed.inc({ event: row.event });
    if (!result) return 'not-pending';
    if (result.deadLettered) {
      this.metrics.deadLettered.inc({ event: row.event });
      this.logger.warn(
        `outbox ${row.id} (${row.event} ${row.aggregate_id} r${row.revision}) dead-lettered after ${result.attempts} attempt(s): ${message}`,
      );
      return 'dead-lettered';
    }
    this.logger.warn(`outbox ${row.id} (${row.event} ${row.aggregate_id} r${row.revision}) attempt ${result.attempts} failed: ${message}`);
    return 'retry-scheduled';
  }
}
