import { Inject, Injectable } from '@nestjs/common';
import { MaintenanceConfig } from '../maintenance.config';
import { PassScheduler } from '../pass-scheduler';
import { LifecycleReconciler, type ReconciliationPassReport } from './lifecycle.reconciler';
import { ReconciliationMetrics } from './reconciliation.metrics';

/**
 * Reconciliation passes every RECONCILE_INTERVAL_MS: the retention loop's shape, on its own
 * cadence (expiring a silent player's ticket cannot wait a retention interval).
 */
@Injectable()
export class ReconciliationScheduler extends PassScheduler<ReconciliationPassReport> {
  protected readonly passName = 'reconciliation pass';

  constructor(
    private readonly reconciler: LifecycleReconciler,
    private readonly metrics: ReconciliationMetrics,
    @Inject(MaintenanceConfig) private readonly config: MaintenanceConfig,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.config.RECONCILE_INTERVAL_MS;
  }

  protected pass(signal: AbortSignal): Promise<ReconciliationPassReport> {
    return this.reconciler.pass({ signal });
  }

  protected recordFailure(): void {
    this.metrics.recordFailure();
  }

  protected recordPass(report: ReconciliationPassReport): void {
    this.metrics.recordPass(report);
    const line = describeReconciliationPass(report);
    // Every few seconds: an idle pass is a debug line, one that did something is always shown.
    const eventful =
      Object.values(report.reconciled).some((count) => count > 0) ||
      report.itemFailures.length > 0 ||
      report.stageErrors.length > 0 ||
      report.outcome !== 'complete';
    if (report.stageErrors.length > 0) this.logger.warn(line);
    else if (eventful) this.logger.log(line);
    else this.logger.debug(line);
  }
}

/** The pass's one log line: what was ended, by case, and what could not be. */
export function describeReconciliationPass(report: ReconciliationPassReport): string {
  const parts = [
    `reconciliation pass ${report.outcome.replace('_', ' ')} in ${report.durationMs} ms (${report.batches} batches)`,
    `reconciled ${Object.entries(report.reconciled)
      .map(([name, count]) => `${name}=${count}`)
      .join(' ')}`,
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
