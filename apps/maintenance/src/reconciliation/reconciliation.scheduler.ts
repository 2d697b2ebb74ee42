import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { MaintenanceConfig } from '../maintenance.config';
import { sqlStateOf } from '@matchplane/persistence';
import { sleep } from '../retention/retention.purger';
import { RECONCILIATION_CASES } from './reconciliation-case';
import { LifecycleReconciler, type ReconciliationPassReport } from './lifecycle.reconciler';
import { ReconciliationMetrics } from './reconciliation.metrics';

/**
 * Runs a reconciliation pass, then waits RECONCILE_INTERVAL_MS, until shutdown: the retention
 * loop's shape, on its own cadence (expiring a silent player's ticket cannot wait a retention
 * interval). A failed pass is one log line and a metric, never a crash; shutdown stops the pass
 * before its next batch.
 */
@Injectable()
export class ReconciliationScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ReconciliationScheduler.name);
  private readonly stopping = new AbortController();
  private loop?: Promise<void>;

  constructor(
    private readonly reconciler: LifecycleReconciler,
    private readonly metrics: ReconciliationMetrics,
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
  async runPass(): Promise<ReconciliationPassReport | undefined> {
    let report: ReconciliationPassReport;
    try {
      report = await this.reconciler.pass({ signal: this.stopping.signal });
    } catch (error) {
      this.metrics.recordFailure();
      this.logger.warn(
        `reconciliation pass failed, next pass in ${this.config.RECONCILE_INTERVAL_MS / 1_000} s: ${describeError(error)}`,
      );
      return undefined;
    }
    this.metrics.recordPass(report);
    const line = describeReconciliationPass(report);
    // Every few seconds: an idle pass is a debug line, one that did something is always shown.
    const eventful =
      RECONCILIATION_CASES.some((name) => report.reconciled[name] > 0) ||
      report.itemFailures.length > 0 ||
      report.stageErrors.length > 0 ||
      report.outcome !== 'complete';
    if (report.stageErrors.length > 0) this.logger.warn(line);
    else if (eventful) this.logger.log(line);
    else this.logger.debug(line);
    return report;
  }

  private async run(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      await this.runPass();
      await sleep(this.config.RECONCILE_INTERVAL_MS, this.stopping.signal);
    }
  }
}

/** The pass's one log line: what was ended, by case, and what could not be. */
export function describeReconciliationPass(report: ReconciliationPassReport): string {
  const parts = [
    `reconciliation pass ${report.outcome.replace('_', ' ')} in ${report.durationMs} ms (${report.batches} batches)`,
    `reconciled ${RECONCILIATION_CASES.map((name) => `${name}=${report.reconciled[name]}`).join(' ')}`,
  ];
  if (report.itemFailures.length > 0) {
    parts.push(`${report.itemFailures.length} left for the next pass`);
  }
  if (report.stageErrors.length > 0) {
    parts.push(
      `stopped early: ${report.stageErrors
        .map((error) => `${error.stage} (${error.sqlState ?? '?'}: ${error.message})`)
        .join(', ')}`,
    );
  }
  return parts.join('; ');
}

function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0)
    return describeError(error.errors[0]);
  const message = error instanceof Error ? error.message || error.name : String(error);
  const sqlState = sqlStateOf(error);
  return sqlState ? `${message} (SQLSTATE ${sqlState})` : message;
}
