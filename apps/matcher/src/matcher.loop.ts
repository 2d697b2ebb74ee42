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
import { MATCHER_SHARD_PLAN, type MatcherShardPlan } from '@matchplane/config';
import { ModeLease, shardName } from './mode-lease';
import { ShardBalance } from './shard-balance';

/** `scheduled` runs passes and rebuilds on their intervals; `manual` leaves them to passNow (tests, benches). */
export const MATCHER_SCHEDULE = Symbol('MATCHER_SCHEDULE');
export type MatcherSchedule = 'scheduled' | 'manual';

/** How long shutdown waits for a pass in flight (one stuck on an outage is abandoned, uncommitted). */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * Runs every shard's passes (a mode MATCHER_SHARDS does not split is one shard): each shard has
 * its own loop and lease, and a replica passes a shard only while it holds that shard's lease.
 * Each replica holds a fair share of a mode's shards (ShardBalance) and keeps trying the free ones
 * below its share, so the survivors take over a dead replica's shards. The projection is rebuilt
 * from PostgreSQL before the first pass and then every MATCHER_REBUILD_INTERVAL_MS, repairing
 * anything a missed post-commit update left behind.
 */
@Injectable()
export class MatcherLoop implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(MatcherLoop.name);
  private readonly stopping = new AbortController();
  private readonly leases: ReadonlyMap<string, readonly ModeLease[]>;
  private readonly balance: ShardBalance;
  private running?: Promise<unknown>;

  constructor(
    private readonly pass: MatchingPass,
    private readonly projection: CandidateProjection,
    private readonly metrics: MatcherMetrics,
    private readonly dataSource: DataSource,
    @Inject(MatcherConfig) private readonly config: MatcherConfig,
    @Inject(MATCHER_SCHEDULE) private readonly schedule: MatcherSchedule,
    @Inject(MATCHER_SHARD_PLAN) shards: MatcherShardPlan,
  ) {
    this.leases = new Map(
      pass.modes.map((mode) => [
        mode,
        (shards.get(mode) ?? [mode]).map((shard) => new ModeLease(dataSource, shard)),
      ]),
    );
    this.balance = new ShardBalance(dataSource, this.leases, config.DATABASE_POOL_SIZE);
    const leases = [...this.leases.values()].flat().length;
    if (leases > config.DATABASE_POOL_SIZE - 2) {
      this.logger.warn(
        `DATABASE_POOL_SIZE ${config.DATABASE_POOL_SIZE} lets this matcher hold ${config.DATABASE_POOL_SIZE - 2} of the ${leases} mode leases (two connections stay for its presence and its passes): alone, it leaves the others unmatched`,
      );
    }
    for (const lease of [...this.leases.values()].flat())
      this.metrics.lease(lease.mode, lease.shard.name, false);
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
    for (const lease of [...this.leases.values()].flat()) {
      await lease
        .release()
        .catch((error: Error) => this.logger.warn(`lease release: ${error.message}`));
    }
    await this.balance.close();
  }

  /** The lease of a shard of `mode` (tests look at its holder); `shard` only for a sharded mode. */
  lease(mode: string, shard?: string): ModeLease {
    const leases = this.leases.get(mode);
    if (!leases) throw new Error(`mode ${mode} is not configured`);
    if (shard === undefined && leases.length > 1)
      throw new Error(`mode ${mode} is sharded: name the shard`);
    const lease = shard === undefined ? leases[0] : leases.find((l) => l.shard.name === shard);
    if (!lease) throw new Error(`mode ${mode} has no shard ${shard}`);
    return lease;
  }

  /** The shards of `mode` this replica holds, as far as it can tell without a round trip. */
  heldShards(mode: string): string[] {
    return (this.leases.get(mode) ?? []).filter((l) => l.held).map((l) => l.shard.name);
  }

  /** One pass of a shard of `mode` if this replica holds (or can take) its lease, else undefined. */
  async passNow(mode: string, shard?: string): Promise<PassReport | undefined> {
    const lease = this.lease(mode, shard);
    const held = await lease.tryAcquire();
    this.metrics.lease(mode, lease.shard.name, held);
    if (!held) return undefined;
    const report = await this.pass.run(lease, this.stopping.signal);
    this.metrics.lease(mode, lease.shard.name, lease.held);
    return report;
  }

  async rebuild(): Promise<void> {
    const { applied, removed } = await this.projection.rebuild(this.dataSource, this.pass.modes);
    this.logger.log(`candidate projection rebuilt: ${applied} searching, ${removed} stale removed`);
  }

  private async run(): Promise<void> {
    await this.rebuildUntilDone();
    const rebuilds = this.rebuildLoop();
    const shards = [...this.leases.values()].flat().map((lease) => this.shardLoop(lease));
    await Promise.all([rebuilds, this.balanceLoop(), ...shards]);
  }

  private async shardLoop(lease: ModeLease): Promise<void> {
    const { mode, shard } = lease;
    while (!this.stopping.signal.aborted) {
      try {
        const next = this.balance.decide(lease);
        if (next === 'release') {
          // Between this shard's passes, so no commit of it is in flight.
          await lease.release();
          this.metrics.lease(mode, shard.name, false, { givenUp: true });
        } else if (next === 'take' && !(await this.balance.take(lease))) {
          this.metrics.lease(mode, shard.name, false);
        } else if (next !== 'idle') {
          const report = await this.passNow(mode, shard.name);
          if (report) this.log(report, lease);
        }
      } catch (error) {
        this.logger.warn(`${shardName(mode, shard.name)} pass failed: ${(error as Error).message}`);
      }
      await sleep(this.config.MATCHER_PASS_INTERVAL_MS, this.stopping.signal);
    }
  }

  /** Recounts the live matchers every pass interval, so the shares follow joins and deaths. */
  private async balanceLoop(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      await this.balance
        .refresh()
        .catch((error: Error) => this.logger.warn(`matcher count failed: ${error.message}`));
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

  private log(report: PassReport, lease: ModeLease): void {
    const line =
      `${shardName(report.mode, lease.shard.name)} pass: ${report.matchable}/${report.candidates} matchable, ${report.proposed} proposed, ` +
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
