import { Inject, Injectable, Logger } from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import { contextFromTraceparent, failSpan, inSpan } from '@matchplane/observability';
import { backoffDelayMs } from '@matchplane/persistence';
import { validateEnvelope } from './envelope.builder';
import type { EventType } from './events';
import { PermanentDeliveryError } from './outbox-subscriber.decorator';
import { OutboxMetrics } from './outbox.metrics';
import type { ClaimedRow, DeliveryResult, Settlement } from './outbox.repository';
import { SubscriberRegistry } from './subscriber.registry';

export const OUTBOX_DELIVERY_OPTIONS = Symbol('OUTBOX_DELIVERY_OPTIONS');

export interface OutboxDeliveryOptions {
  /** After this many failed attempts the row is dead-lettered and its aggregate moves on. */
  maxAttempts: number;
  /** Backoff between attempts: jittered, doubling from base up to cap. */
  retryBaseMs: number;
  retryCapMs: number;
  /**
   * Event types no subscriber of this process needs: their rows are history (read back by
   * catch-ups, kept until retention) and are settled as delivered to nobody. Any other event type
   * without a subscriber stops the start.
   */
  historyOnlyEvents?: readonly EventType[];
}

/**
 * Hands one claimed row to every subscriber of its event type and says how it went; the
 * dispatcher settles many such results in one statement ({@link OutboxRepository.settle}). A
 * failure (invalid envelope, subscriber error) is counted against this row only: its aggregate
 * waits, others go on.
 */
@Injectable()
export class OutboxDelivery {
  private readonly logger = new Logger(OutboxDelivery.name);

  constructor(
    private readonly subscribers: SubscriberRegistry,
    private readonly metrics: OutboxMetrics,
    @Inject(OUTBOX_DELIVERY_OPTIONS) readonly options: OutboxDeliveryOptions,
  ) {}

  /**
   * Traced as a CONSUMER span continuing the row's trace (its `traceparent`, when the writer was
   * traced), with a child span per subscriber; what a subscriber hands on (the allocation job)
   * carries the subscriber's span.
   */
  async deliver(row: ClaimedRow): Promise<DeliveryResult> {
    return inSpan(
      `deliver ${row.event}`,
      {
        kind: SpanKind.CONSUMER,
        parent: contextFromTraceparent(row.traceparent),
        attributes: {
          'messaging.system': 'matchplane.outbox',
          'messaging.operation.type': 'process',
          'messaging.message.id': row.id,
          'matchplane.event': row.event,
          'matchplane.aggregate_id': row.aggregate_id,
          'matchplane.revision': row.revision,
          'matchplane.attempt': row.attempts + 1,
        },
      },
      async (span) => {
        const result = await this.attempt(row);
        if (span && !result.delivered) failSpan(span, result.error);
        return result;
      },
    );
  }

  private async attempt(row: ClaimedRow): Promise<DeliveryResult> {
    try {
      const envelope = validateEnvelope(row);
      for (const { name, subscriber } of this.subscribers.subscribersOf(envelope)) {
        await inSpan(`${name} ${envelope.event}`, {}, () => subscriber.handle(envelope));
      }
      return { id: row.id, token: row.claim_token, delivered: true };
    } catch (error) {
      this.metrics.failed.inc({ event: row.event });
      return {
        id: row.id,
        token: row.claim_token,
        delivered: false,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        permanent: error instanceof PermanentDeliveryError,
        retryDelayMs: backoffDelayMs(row.attempts + 1, {
          baseMs: this.options.retryBaseMs,
          capMs: this.options.retryCapMs,
        }),
      };
    }
  }

  /** Metrics and log lines for what a settlement recorded about `rows` (by id). */
  observe(
    settlement: Settlement,
    rows: ReadonlyMap<string, ClaimedRow>,
    errors: ReadonlyMap<string, string>,
  ): void {
    const now = Date.now();
    for (const id of settlement.published) {
      const row = rows.get(id);
      if (!row) continue;
      this.metrics.delivered.inc({ event: row.event });
      this.metrics.commitToDelivery.observe(
        { event: row.event },
        (now - row.created_at.getTime()) / 1000,
      );
    }
    for (const { id, attempts, deadLettered } of settlement.failed) {
      const row = rows.get(id);
      if (!row) continue;
      const what = `outbox ${row.id} (${row.event} ${row.aggregate_id} r${row.revision})`;
      if (deadLettered) {
        this.metrics.deadLettered.inc({ event: row.event });
        this.logger.warn(
          `${what} dead-lettered after ${attempts} attempt(s): ${errors.get(id) ?? '?'}`,
        );
      } else {
        this.logger.warn(`${what} attempt ${attempts} failed: ${errors.get(id) ?? '?'}`);
      }
    }
    if (settlement.refused.length > 0) {
      this.metrics.refused.inc(settlement.refused.length);
      this.logger.warn(
        `${settlement.refused.length} settlement(s) refused, the claim was no longer ours (taken over): outbox ${settlement.refused.join(', ')}`,
      );
    }
  }
}
