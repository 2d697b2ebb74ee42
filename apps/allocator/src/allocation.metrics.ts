import { Inject, Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { MetricsRegistry } from '@matchplane/observability';

/** What one allocation run spends its time on (the `step` label of allocation_step_seconds). */
export type AllocationTimedStep =
  'load' | 'allocate' | 'persist' | 'credential' | 'publish' | 'hand-off' | 'mark';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The allocator's figures: how long a job waited for a worker slot, how long each step of a run
 * took (so a slow burst shows whether the provider, PostgreSQL or the queue is the bottleneck),
 * and each run's total.
 */
@Injectable()
export class AllocationMetrics {
  private readonly wait: Histogram;
  private readonly step: Histogram<'step'>;
  private readonly run: Histogram<'outcome'>;
  private readonly fallbacks: Counter<'from' | 'to'>;

  constructor(@Inject(MetricsRegistry) registry: MetricsRegistry) {
    const registers = [registry];
    this.wait = new Histogram({
      name: 'allocation_job_wait_seconds',
      help: 'From the allocation job being queued (or due again) to a worker starting it',
      buckets: BUCKETS,
      registers,
    });
    this.step = new Histogram({
      name: 'allocation_step_seconds',
      help: 'One step of an allocation run',
      labelNames: ['step'],
      buckets: BUCKETS,
      registers,
    });
    this.run = new Histogram({
      name: 'allocation_run_seconds',
      help: 'One allocation run (one job attempt), by outcome',
      labelNames: ['outcome'],
      buckets: BUCKETS,
      registers,
    });
    this.fallbacks = new Counter({
      name: 'allocation_region_fallbacks_total',
      help: "Allocations whose match's region had no free server, by that region (from) and the region allocated in instead (to; none: no fallback region had one)",
      labelNames: ['from', 'to'],
      registers,
    });
  }

  fellBack(from: string, to: string): void {
    this.fallbacks.inc({ from, to });
  }

  waited(seconds: number): void {
    this.wait.observe(Math.max(0, seconds));
  }

  /** Runs `work` as `step`, timing it whether it succeeds or throws. */
  async timed<T>(step: AllocationTimedStep, work: () => Promise<T>): Promise<T> {
    const end = this.step.startTimer({ step });
    try {
      return await work();
    } finally {
      end();
    }
  }

  ran(outcome: string, seconds: number): void {
    this.run.observe({ outcome }, seconds);
  }
}
