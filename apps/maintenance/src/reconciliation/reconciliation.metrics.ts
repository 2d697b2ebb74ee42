import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsRegistry } from '@matchplane/observability';
import {
  LifecycleReconciler,
  type ReconciliationPassOutcome,
  type ReconciliationPassReport,
} from './lifecycle.reconciler';

const PASS_RESULTS = ['complete', 'budget_exhausted', 'interrupted', 'failed'] as const;
type PassResult = ReconciliationPassOutcome | 'failed';

/** The reconciliation figures, recorded once per pass. */
@Injectable()
export class ReconciliationMetrics implements OnApplicationBootstrap {
  private readonly reconciled: Counter<'case'>;
  private readonly failures: Counter<'stage'>;
  private readonly passes: Counter<'outcome'>;
  private readonly passDuration: Gauge;

  constructor(
    @Inject(MetricsRegistry) registry: MetricsRegistry,
    private readonly reconciler: LifecycleReconciler,
  ) {
    const registers = [registry];
    this.reconciled = new Counter({
      name: 'reconciliation_reconciled_total',
      help: 'Tickets, matches and allocations ended by lifecycle reconciliation, by case',
      labelNames: ['case'],
      registers,
    });
    this.failures = new Counter({
      name: 'reconciliation_failures_total',
      help: 'Items or whole batches reconciliation could not end (retried at the next pass), by stage',
      labelNames: ['stage'],
      registers,
    });
    this.passes = new Counter({
      name: 'reconciliation_passes_total',
      help: 'Reconciliation passes by outcome (complete, budget_exhausted, interrupted, failed)',
      labelNames: ['outcome'],
      registers,
    });
    this.passDuration = new Gauge({
      name: 'reconciliation_last_pass_duration_seconds',
      help: 'Duration of the last reconciliation pass',
      registers,
    });
    for (const outcome of PASS_RESULTS) this.passes.inc({ outcome }, 0);
  }

  /** Every series exists from the start, so rate() and absent() alerts work before the first pass. */
  onApplicationBootstrap(): void {
    for (const name of this.reconciler.cases) this.reconciled.inc({ case: name }, 0);
    for (const stage of this.reconciler.stages) this.failures.inc({ stage: stage.name }, 0);
  }

  recordPass(report: ReconciliationPassReport): void {
    this.count(report.outcome);
    this.passDuration.set(report.durationMs / 1_000);
    for (const [name, count] of Object.entries(report.reconciled)) {
      if (count > 0) this.reconciled.inc({ case: name }, count);
    }
    for (const failure of [...report.itemFailures, ...report.stageErrors]) {
      this.failures.inc({ stage: failure.stage });
    }
  }

  recordFailure(): void {
    this.count('failed');
  }

  private count(outcome: PassResult): void {
    this.passes.inc({ outcome });
  }
}
