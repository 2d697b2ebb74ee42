import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { MetricsRegistry } from '@matchplane/observability';

/** What the dispatcher's own statements cost: claim passes, settlements, takeovers. */
@Injectable()
export class DispatcherMetrics {
  readonly wakeUps: Counter;
  readonly claimPasses: Counter;
  readonly settleStatements: Counter;
  readonly settleBatchSize: Histogram;
  readonly takenOver: Counter;
  private rows?: () => Record<RowState, number>;

  constructor(@Inject(MetricsRegistry) registry: MetricsRegistry) {
    const registers = [registry];
    const rows = () => this.rows?.();
    new Gauge({
      name: 'outbox_dispatcher_rows',
      help: 'Claimed rows this dispatcher holds (one per aggregate), by state',
      labelNames: ['state'],
      registers,
      collect() {
        for (const [state, count] of Object.entries(rows() ?? {})) this.set({ state }, count);
      },
    });
    this.wakeUps = new Counter({
      name: 'outbox_relay_wakeups_total',
      help: 'Commit signals and polls that asked the relay for a claim pass',
      registers,
    });
    this.claimPasses = new Counter({
      name: 'outbox_relay_claim_statements_total',
      help: 'Claim statements the relay ran (coalesced wake-ups)',
      registers,
    });
    this.settleStatements = new Counter({
      name: 'outbox_settle_statements_total',
      help: 'Statements that acked or failed delivered rows and claimed their successors',
      registers,
    });
    this.settleBatchSize = new Histogram({
      name: 'outbox_settle_batch_rows',
      help: 'Rows settled per settle statement',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
      registers,
    });
    this.takenOver = new Counter({
      name: 'outbox_claims_taken_over_total',
      help: 'Claims taken from a dispatcher presumed dead (silent heartbeat) or past the claim lease',
      registers,
    });
  }

  /** The pipeline reports its rows when Prometheus scrapes. */
  observeRows(read: () => Record<RowState, number>): void {
    this.rows = read;
  }
}

type RowState = 'held' | 'delivering' | 'settling' | 'parked' | 'retrying';
