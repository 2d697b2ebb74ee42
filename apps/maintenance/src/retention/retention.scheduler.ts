import { Inject, Injectable } from '@nestjs/common';
import { MaintenanceConfig } from '../maintenance.config';
import { OutboxStatsService, type OutboxStats } from '@matchplane/outbox';
import { describeError, PassScheduler } from '../pass-scheduler';
import { RetentionMetrics } from './retention.metrics';
import { RetentionPurger, type RetentionPassReport } from './retention.purger';

/** Retention passes every RETENTION_PASS_INTERVAL_MS, each logged with the outbox's figures. */
@Injectable()
export class RetentionScheduler extends PassScheduler<RetentionPassReport> {
  protected readonly passName = 'retention pass';

  constructor(
    private readonly purger: RetentionPurger,
    private readonly outboxStats: OutboxStatsService,
    private readonly metrics: RetentionMetrics,
    @Inject(MaintenanceConfig) private readonly config: MaintenanceConfig,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.config.RETENTION_PASS_INTERVAL_MS;
  }

  protected pass(signal: AbortSignal): Promise<RetentionPassReport> {
    return this.purger.pass({ signal });
  }

  protected recordFailure(): void {
    this.metrics.recordFailure();
  }

  protected async recordPass(report: RetentionPassReport): Promise<void> {
    this.metrics.recordPass(report);
    let stats: OutboxStats | undefined;
    if (!this.stopping.signal.aborted) {
      stats = await this.outboxStats.stats().catch((error: unknown) => {
        this.logger.warn(`outbox figures unavailable: ${describeError(error)}`);
        return undefined;
      });
      if (stats) this.metrics.recordOutbox(stats);
    }
    this.logger.log(describePass(report, stats));
  }
}

/** The pass's one log line: rows purged and deletion lag per policy, dead letters and backlog. */
export function describePass(report: RetentionPassReport, stats?: OutboxStats): string {
  // The report lists every policy, in round order.
  const figures = (values: Record<string, number>, unit = '') =>
    Object.keys(report.purged)
      .map((name) => `${name}=${round(values[name] ?? 0)}${unit}`)
      .join(' ');
  const parts = [
    `retention pass ${report.outcome.replace('_', ' ')} in ${report.durationMs} ms` +
      ` (${report.batches} batches, ${report.pressuredBatches} under database pressure)`,
    `purged ${figures(report.purged)}`,
  ];
  if (report.lagSeconds) parts.push(`deletion lag ${figures(report.lagSeconds, 's')}`);
  if (report.idempotencyHoldSeconds > 0) {
    parts.push(
      `idempotency keys held back ${round(report.idempotencyHoldSeconds)}s by the oldest dead letter`,
    );
  }
  parts.push(
    stats
      ? `dead letters ${stats.deadLetters.count}; outbox backlog ${stats.pending.count}` +
          ` (oldest ${round(stats.pending.oldestAgeSeconds ?? 0)}s)`
      : 'dead letters and outbox backlog not read',
  );
  if (report.errors.length > 0) {
    parts.push(
      `stopped early: ${report.errors.map((error) => `${error.policy} (${error.sqlState ?? '?'})`).join(', ')}`,
    );
  }
  return parts.join('; ');
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
