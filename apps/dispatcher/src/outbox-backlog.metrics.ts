import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { MetricsRegistry } from '@matchplane/observability';
import { OutboxStatsService, type OutboxStats } from '@matchplane/outbox';

/**
 * Backlog gauges, read from PostgreSQL when Prometheus scrapes (one stats query per scrape,
 * shared by every gauge of that scrape).
 */
@Injectable()
export class OutboxBacklogMetrics implements OnModuleInit {
  private readonly logger = new Logger(OutboxBacklogMetrics.name);
  private pendingScrape?: Promise<OutboxStats | undefined>;

  constructor(
    private readonly stats: OutboxStatsService,
    @Inject(MetricsRegistry) private readonly registry: MetricsRegistry,
  ) {}

  onModuleInit(): void {
    const gauge = (
      name: string,
      help: string,
      read: (
        stats: OutboxStats,
        set: (value: number, labels?: Record<string, string>) => void,
      ) => void,
      labelNames: string[] = [],
    ) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [this.registry],
        collect: async function (this: Gauge) {
          const stats = await scrape();
          this.reset();
          if (stats)
            read(stats, (value, labels) => (labels ? this.set(labels, value) : this.set(value)));
        },
      });
    const scrape = () => {
      this.pendingScrape ??= this.stats
        .stats()
        .catch((error: Error) => {
          this.logger.warn(`outbox stats unavailable: ${error.message}`);
          return undefined;
        })
        .finally(() => setImmediate(() => (this.pendingScrape = undefined)));
      return this.pendingScrape;
    };
    gauge('outbox_pending_events', 'Outbox rows waiting for delivery', (s, set) =>
      set(s.pending.count),
    );
    gauge('outbox_oldest_pending_age_seconds', 'Age of the oldest pending outbox row', (s, set) =>
      set(s.pending.oldestAgeSeconds ?? 0),
    );
    gauge(
      'outbox_dead_letters',
      'Dead-lettered outbox rows by event type',
      (s, set) => s.deadLetters.byEvent.forEach(({ event, count }) => set(count, { event })),
      ['event'],
    );
    gauge(
      'outbox_blocked_aggregates',
      'Aggregates whose oldest pending event is failing',
      (s, set) => set(s.blockedAggregates.count),
    );
    gauge(
      'outbox_events_behind_blocked',
      'Events waiting behind a failing event of their aggregate',
      (s, set) => set(s.blockedAggregates.waitingBehind),
    );
  }
}
