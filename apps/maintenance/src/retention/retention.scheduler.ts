import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { MaintenanceConfig } from '../maintenance.config';
import { OutboxStatsService, type OutboxStats } from '@matchplane/outbox';
import { sqlStateOf } from '@matchplane/persistence';
import { RETENTION_POLICIES } from './retention-policy';
import { RetentionMetrics } from './retention.metrics';
import { RetentionPurger, sleep, type RetentionPassReport } from './retention.purger';

/**
 * Runs a retention pass, then waits RETENTION_PASS_INTERVAL_MS, until shutdown. A failed pass
 * (the database down, say) is one log line and a metric; the next pass simply tries again, so an
 * outage never becomes a crash loop. Shutdown stops the pass before its next batch.
 */
@Injectable()
export class RetentionScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RetentionScheduler.name);
  private readonly stopping = new AbortController();
  private loop?: Promise<void>;

  constructor(
    private readonly purger: RetentionPurger,
    private readonly outboxStats: OutboxStatsService,
    private readonly metrics: RetentionMetrics,
    @Inject(MaintenanceConfig) private readonly config: MaintenanceConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.loop = this.run();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  /** One pass with its metrics and log line; never throws. Undefined when the pass failed. */
  async runPass(): Promise<RetentionPassReport | undefined> {
    const signal = this.stopping.signal;
    let report: RetentionPassReport;
    try {
      report = await this.purger.pass({ signal });
    } catch (error) {
      this.metrics.recordFailure();
      this.logger.warn(
        `retention pass failed, next pass in ${this.config.RETENTION_PASS_INTERVAL_MS / 1_000} s: ${describeError(error)}`,
      );
      return undefined;
    }
    this.metrics.recordPass(report);
    let stats: OutboxStats | undefined;
    if (!signal.aborted) {
      stats = await this.outboxStats.stats().catch((error: unknown) => {
        this.logger.warn(`outbox figures unavailable: ${describeError(error)}`);
        return undefined;
      });
      if (stats) this.metrics.recordOutbox(stats);
    }
    this.logger.log(describePass(report, stats));
    return report;
  }

  private async run(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      await this.runPass();
      await sleep(this.config.RETENTION_PASS_INTERVAL_MS, this.stopping.signal);
    }
  }
}

/** The pass's one log line: rows purged and deletion lag per policy, dead letters and backlog. */
export function describePass(report: RetentionPassReport, stats?: OutboxStats): string {
  const figures = (values: Record<string, number>, unit = '') =>
    RETENTION_POLICIES.map(
      (policy) => `${policy.name}=${round(values[policy.name] ?? 0)}${unit}`,
    ).join(' ');
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

function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0)
    return describeError(error.errors[0]);
  const message = error instanceof Error ? error.message || error.name : String(error);
  const sqlState = sqlStateOf(error);
  return sqlState ? `${message} (SQLSTATE ${sqlState})` : message;
}
