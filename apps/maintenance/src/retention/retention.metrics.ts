import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsRegistry } from '@matchplane/observability';
import type { OutboxStats } from '@matchplane/outbox';
import type { RetentionPolicy } from './retention-policy';
import { RetentionPolicyRegistry } from './retention-policy.registry';
import type { RetentionPassOutcome, RetentionPassReport } from './retention.purger';

type PassResult = RetentionPassOutcome | 'failed';

/**
 * The retention figures, set once per pass (a scrape reads the last pass's values rather than
 * querying). The outbox figures carry a `maintenance_` prefix so that they do not add up with the
 * dispatchers' own backlog gauges in a sum over apps.
 */
@Injectable()
export class RetentionMetrics {
  private readonly purged: Counter<'table' | 'policy'>;
  private readonly lag: Gauge<'table' | 'policy'>;
  private readonly idempotencyHold: Gauge;
  private readonly passes: Counter<'outcome'>;
  private readonly passDuration: Gauge;
  private readonly deadLetters: Gauge;
  private readonly pending: Gauge;
  private readonly oldestPendingAge: Gauge;

  private readonly policies: readonly RetentionPolicy[];

  constructor(
    @Inject(MetricsRegistry) registry: MetricsRegistry,
    policies: RetentionPolicyRegistry,
  ) {
    this.policies = policies.policies;
    const registers = [registry];
    const labelNames = ['table', 'policy'] as const;
    this.purged = new Counter({
      name: 'retention_rows_purged_total',
      help: 'Rows deleted by retention, by table and policy',
      labelNames,
      registers,
    });
    this.lag = new Gauge({
      name: 'retention_deletion_lag_seconds',
      help: 'How long ago the oldest row retention may delete passed its window (0: none left)',
      labelNames,
      registers,
    });
    this.idempotencyHold = new Gauge({
      name: 'retention_idempotency_hold_seconds',
      help: 'How far the oldest dead letter holds idempotency keys back beyond their window',
      registers,
    });
    this.passes = new Counter({
      name: 'retention_passes_total',
      help: 'Retention passes by outcome (complete, budget_exhausted, interrupted, failed)',
      labelNames: ['outcome'],
      registers,
    });
    this.passDuration = new Gauge({
      name: 'retention_last_pass_duration_seconds',
      help: 'Duration of the last retention pass',
      registers,
    });
    this.deadLetters = new Gauge({
      name: 'maintenance_outbox_dead_letters',
      help: 'Dead-lettered outbox rows, at the last retention pass',
      registers,
    });
    this.pending = new Gauge({
      name: 'maintenance_outbox_pending_events',
      help: 'Outbox rows waiting for delivery, at the last retention pass',
      registers,
    });
    this.oldestPendingAge = new Gauge({
      name: 'maintenance_outbox_oldest_pending_age_seconds',
      help: 'Age of the oldest pending outbox row, at the last retention pass',
      registers,
    });
    // Every series exists from the start, so a rate() or an absent() alert works before the first pass.
    for (const policy of this.policies) {
      this.purged.inc({ table: policy.table, policy: policy.name }, 0);
    }
    for (const outcome of ['complete', 'budget_exhausted', 'interrupted', 'failed'] as const) {
      this.passes.inc({ outcome }, 0);
    }
  }

  recordPass(report: RetentionPassReport): void {
    this.count(report.outcome);
    this.passDuration.set(report.durationMs / 1_000);
    for (const policy of this.policies) {
      const labels = { table: policy.table, policy: policy.name };
      this.purged.inc(labels, report.purged[policy.name] ?? 0);
      if (report.lagSeconds) this.lag.set(labels, report.lagSeconds[policy.name] ?? 0);
    }
    if (report.lagSeconds) this.idempotencyHold.set(report.idempotencyHoldSeconds);
  }

  recordOutbox(stats: OutboxStats): void {
    this.deadLetters.set(stats.deadLetters.count);
    this.pending.set(stats.pending.count);
    this.oldestPendingAge.set(stats.pending.oldestAgeSeconds ?? 0);
  }

  recordFailure(): void {
    this.count('failed');
  }

  private count(outcome: PassResult): void {
    this.passes.inc({ outcome });
  }
}
