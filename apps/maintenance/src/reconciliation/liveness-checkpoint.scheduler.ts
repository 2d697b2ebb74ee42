import { Inject, Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { MetricsRegistry } from '@matchplane/observability';
import { TicketLivenessCheckpoint, type LivenessCheckpointReport } from '@matchplane/tickets';
import { MaintenanceConfig } from '../maintenance.config';
import { PassScheduler } from '../pass-scheduler';

/**
 * Checkpoints the tickets' liveness (TicketLivenessCheckpoint) every
 * TICKET_LIVENESS_CHECKPOINT_INTERVAL_MS, on its own loop: a reconciliation pass may run long, and
 * the interval bounds what a Redis flush loses. Replicas may overlap harmlessly (a beat never
 * moves a row back).
 */
@Injectable()
export class LivenessCheckpointScheduler extends PassScheduler<LivenessCheckpointReport> {
  protected readonly passName = 'liveness checkpoint';
  private readonly written: Counter;
  private readonly failures: Counter;

  constructor(
    private readonly checkpoint: TicketLivenessCheckpoint,
    @Inject(MaintenanceConfig) private readonly config: MaintenanceConfig,
    @Inject(MetricsRegistry) registry: MetricsRegistry,
  ) {
    super();
    this.written = new Counter({
      name: 'ticket_liveness_checkpointed_total',
      help: "Tickets whose heartbeats answered from Redis were written into PostgreSQL's last_heartbeat_at",
      registers: [registry],
    });
    this.failures = new Counter({
      name: 'ticket_liveness_checkpoint_failures_total',
      help: 'Liveness checkpoints that failed (their tickets are written by the next one)',
      registers: [registry],
    });
  }

  protected intervalMs(): number {
    return this.config.TICKET_LIVENESS_CHECKPOINT_INTERVAL_MS;
  }

  protected pass(): Promise<LivenessCheckpointReport> {
    return this.checkpoint.checkpoint();
  }

  protected recordFailure(): void {
    this.failures.inc();
  }

  protected recordPass(report: LivenessCheckpointReport): void {
    this.written.inc(report.written);
    const line = `liveness checkpoint: ${report.beaten} tickets beaten, ${report.written} rows written, ${report.repaired} candidates repaired`;
    if (report.repaired > 0) this.logger.log(line);
    else this.logger.debug(line);
  }
}
