import { Inject, Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { MetricsRegistry } from '@matchplane/observability';

@Injectable()
export class OutboxMetrics {
  readonly delivered: Counter<'event'>;
  readonly failed: Counter<'event'>;
  readonly deadLettered: Counter<'event'>;
  readonly refused: Counter;
  readonly commitToDelivery: Histogram<'event'>;

  constructor(@Inject(MetricsRegistry) registry: MetricsRegistry) {
    const registers = [registry];
    this.delivered = new Counter({
      name: 'outbox_delivered_total',
      help: 'Events delivered to every subscriber and acked',
      labelNames: ['event'],
      registers,
    });
    this.failed = new Counter({
      name: 'outbox_delivery_failures_total',
      help: 'Failed delivery attempts',
      labelNames: ['event'],
      registers,
    });
    this.deadLettered = new Counter({
      name: 'outbox_dead_lettered_total',
      help: 'Events moved to the dead letters',
      labelNames: ['event'],
      registers,
    });
    this.refused = new Counter({
      name: 'outbox_settlements_refused_total',
      help: "Acks and failure records refused because the claim they named was no longer the row's (taken over)",
      registers,
    });
    this.commitToDelivery = new Histogram({
      name: 'outbox_commit_to_delivery_seconds',
      help: 'From the writing transaction to the ack of the delivery',
      labelNames: ['event'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
  }
}
