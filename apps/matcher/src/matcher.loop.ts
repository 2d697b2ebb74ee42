import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MatcherConfig } from './matcher.config';
import { CandidateProjection } from '@matchplane/tickets';
import { MatcherMetrics } from './matcher.metrics';
import { MatchingPass, type PassReport } from './matching.pass';
import { ModeLease } from './mode-lease';

/** `scheduled` runs passes and rebuilds on their intervals; `manual` leaves them to passNow (tests, benches). */
export const MATCHER_SCHEDULE = Symbol('MATCHER_SCHEDULE');
export type MatcherSchedule = 'scheduled' | 'manual';

/** How long shutdown waits for a pass in flight (one stuck on an outage is abandoned, uncommitted). */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * Runs every mode's passes: each mode has its own loop and lease, and a replica passes a mode only
 * while it holds that mode's lease (the others keep trying, so one takes over when the holder
 * goes). The projection is rebuilt from PostgreSQL before the first pass and then every
 * MATCHER_REBUILD_INTERVAL_MS, repairing anything a missed post-commit update left behind.
 */
@Injectable()
export class MatcherLoop implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(MatcherLoop.name);
  private readonly stopping = new AbortController();
  private readonly leases: ReadonlyMap<string, ModeLease>;
  private running?: Promise<unknown>;

  constructor(
    private readonly pass: MatchingPass,
    private readonly projection: CandidateProjection,
    private readonly metrics: MatcherMetrics,
    private readonly dataSource: DataSource,
    @Inject(MatcherConfig) private readonly config: MatcherConfig,
    @Inject(MATCHER_SCHEDULE) private readonly schedule: MatcherSchedule,
  ) {
    this.leases = new Map(pass.modes.map((mode) => [mode, new ModeLease(dataSource, mode)]));
  }

  onApplicationBootstrap(): void {
    if (this.schedule === 'manual') return;
    // Not awaited: boot (and the health listener) must not wait on PostgreSQL or Redis.
    this.running = this.run();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise((resolve) => (timer = setTimeout(resolve, SHUTDOWN_GRACE_MS)));
    await Promise.race([this.running, grace]);
    clearTimeout(timer);
    for (const lease of this.leases.values()) {
      await lease
        .release()
        .catch((error: Error) => this.logger.warn(`lease release: ${error.message}`));
    }
  }

  /** The lease of `mode` (tests look at its holder). */
  lease(mode: string): ModeLease {
    const lease = this.leases.get(mode);
    if (!lease) throw new Error(`mode ${mode} is not configured`);
    return lease;
  }

  /** One pass of `mode` if this replica holds (or can take) its lease; undefined otherwise. */
  async passNow(mode: string): Promise<PassReport | undefined> {
    const lease = this.lease(mode);
    const held = await lease.tryAcquire();
    this.metrics.lease(mode, held);
    if (!held) return undefined;
    const report = await this.pass.run(lease, this.stopping.signal);
    this.metrics.lease(mode, lease.held);
    return report;
  }

  async rebuild(): Promise<void> {
    const { applied, removed } = await this.projection.rebuild(this.dataSource, this.pass.modes);
    this.logger.log(`candidate projection rebuilt: ${applied} searching, ${removed} stale removed`);
  }

  private async run(): Promise<void> {
    await this.rebuildUntilDone();
    const rebuilds = this.rebuildLoop();
    await Promise.all([rebuilds, ...this.pass.modes.map((mode) => this.modeLoop(mode))]);
  }

  private async modeLoop(mode: string): Promise<void> {
    while (!this.stopping.signal.aborted) {
      try {
        const report = await this.passNow(mode);
        if (report) this.log(report);
      } catch (error) {
        this.logger.warn(`${mode} pass failed: ${(error as Error).message}`);
      }
      await sleep(this.config.MATCHER_PASS_INTERVAL_MS, this.stopping.signal);
    }
  }

  /** The start-up rebuild, retried each pass interval until it succeeds (or shutdown). */
  private async rebuildUntilDone(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      try {
        await this.rebuild();
        return;
      } catch (error) {
        this.logger.warn(
          `candidate projection rebuild failed, retrying: ${(error as Error).message}`,
        );
        await sleep(this.config.MATCHER_PASS_INTERVAL_MS, this.stopping.signal);
      }
    }
  }

  private async rebuildLoop(): Promise<void> {
    for (;;) {
      await sleep(this.config.MATCHER_REBUILD_INTERVAL_MS, this.stopping.signal);
      if (this.stopping.signal.aborted) return;
      await this.rebuild().catch((error: Error) =>
        this.logger.warn(`candidate projection rebuild failed: ${error.message}`),
      );
    }
  }

  private log(report: PassReport): void {
    const line =
      `${report.mode} pass: ${report.matchable}/${report.candidates} matchable, ${report.proposed} proposed, ` +
      `${report.committed.length} committed, ${report.dropped.length} dropped` +
      (report.rejected > 0 ? `, ${report.rejected} invalid proposals` : '') +
      ` in ${Math.round(report.durationMs)} ms` +
      (report.aborted ? `; aborted: ${report.aborted}` : '');
    if (report.aborted) this.logger.warn(line);
    else if (report.committed.length > 0 || report.dropped.length > 0) this.logger.log(line);
    else this.logger.debug(line);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
