import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { MetricsRegistry } from '@matchplane/observability';
import type { DropReason } from './match-committer';

/** One shard's last pass, which the mode's depth gauges add up over the shards this replica holds. */
interface ShardDepth {
  readonly depth: number;
  readonly byRegion: ReadonlyMap<string, number>;
}

/**
 * The matcher's figures, by mode. Queue depth is the sum over the shards this replica holds, set
 * at each pass and removed when it holds none of the mode, so a sum over replicas counts each
 * candidate once (a region-group shard counts a candidate in each group it measured).
 */
@Injectable()
export class MatcherMetrics {
  private readonly passDuration: Histogram<'mode'>;
  private readonly formed: Counter<'mode'>;
  private readonly backfills: Counter<'mode'>;
  private readonly dropped: Counter<'mode' | 'reason'>;
  private readonly timeToMatch: Histogram<'mode'>;
  private readonly depth: Gauge<'mode'>;
  private readonly depthByRegion: Gauge<'mode' | 'region'>;
  private readonly leaseHeld: Gauge<'mode'>;
  private readonly leaseLosses: Counter<'mode'>;
  private readonly shardHeld: Gauge<'mode' | 'shard'>;
  private readonly read: Counter<'mode' | 'shard'>;
  /** mode -> shard -> its last pass, for the shards held. */
  private readonly depths = new Map<string, Map<string, ShardDepth>>();
  /** mode -> the shards held. */
  private readonly shardsHeld = new Map<string, Set<string>>();
  private readonly regionsSeen = new Map<string, Set<string>>();

  constructor(@Inject(MetricsRegistry) registry: MetricsRegistry) {
    const registers = [registry];
    this.passDuration = new Histogram({
      name: 'matcher_pass_duration_seconds',
      help: 'One matching pass of a mode: read, match, commit, explain',
      labelNames: ['mode'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.formed = new Counter({
      name: 'matcher_matches_formed_total',
      help: 'Matches committed',
      labelNames: ['mode'],
      registers,
    });
    this.dropped = new Counter({
      name: 'matcher_matches_dropped_total',
      help: 'Proposed matches not committed (a member left or changed, a bad proposal, a failed write)',
      labelNames: ['mode', 'reason'],
      registers,
    });
    this.timeToMatch = new Histogram({
      name: 'matcher_time_to_match_seconds',
      help: 'From enqueue to the commit of the match, per matched ticket',
      labelNames: ['mode'],
      buckets: [0.5, 1, 2, 5, 10, 20, 30, 45, 60, 90, 120, 180, 300, 600],
      registers,
    });
    this.backfills = new Counter({
      name: 'matcher_backfills_filled_total',
      help: 'Backfill requests the matcher filled (players added to a running match)',
      labelNames: ['mode'],
      registers,
    });
    this.depth = new Gauge({
      name: 'matcher_queue_depth',
      help: 'Matchable candidates of a mode at the last pass',
      labelNames: ['mode'],
      registers,
    });
    this.depthByRegion = new Gauge({
      name: 'matcher_queue_depth_by_region',
      help: 'Matchable candidates of a mode that measured the region, at the last pass (a candidate counts in every region it measured)',
      labelNames: ['mode', 'region'],
      registers,
    });
    this.leaseHeld = new Gauge({
      name: 'matcher_lease_held',
      help: '1 while this replica holds the lease of the mode (of one of its shards at least)',
      labelNames: ['mode'],
      registers,
    });
    this.shardHeld = new Gauge({
      name: 'matcher_shard_held',
      help: '1 while this replica holds the lease of the shard of the mode (MATCHER_SHARDS; an unsharded mode is shard "all")',
      labelNames: ['mode', 'shard'],
      registers,
    });
    this.read = new Counter({
      name: 'matcher_candidates_read_total',
      help: "Candidates the shard's passes read from Redis (a split mode's shard reads its own set, not the whole mode)",
      labelNames: ['mode', 'shard'],
      registers,
    });
    this.leaseLosses = new Counter({
      name: 'matcher_lease_losses_total',
      help: 'Times this replica held a lease of the mode (one of its shards) and then found it gone (its session ended or the fence failed)',
      labelNames: ['mode'],
      registers,
    });
  }

  pass(
    mode: string,
    shard: string,
    seconds: number,
    depth: number,
    byRegion: ReadonlyMap<string, number>,
  ): void {
    this.passDuration.observe({ mode }, seconds);
    const shards = this.depths.get(mode) ?? new Map<string, ShardDepth>();
    shards.set(shard, { depth, byRegion });
    this.depths.set(mode, shards);
    this.setDepth(mode);
  }

  candidatesRead(mode: string, shard: string, count: number): void {
    this.read.inc({ mode, shard }, count);
  }

  committed(mode: string, waitedSeconds: readonly number[]): void {
    this.formed.inc({ mode });
    for (const seconds of waitedSeconds) this.timeToMatch.observe({ mode }, seconds);
  }

  backfilled(mode: string): void {
    this.backfills.inc({ mode });
  }

  droppedMatch(mode: string, reason: DropReason | 'invalid_proposal'): void {
    this.dropped.inc({ mode, reason });
  }

  /** `givenUp`: released on purpose (another replica's fair share), which is no loss. */
  lease(mode: string, shard: string, held: boolean, { givenUp = false } = {}): void {
    const shards = this.shardsHeld.get(mode) ?? new Set<string>();
    this.shardsHeld.set(mode, shards);
    this.shardHeld.set({ mode, shard }, held ? 1 : 0);
    if (held) {
      // Zero from the first hold on, so an increase() alert sees the first loss too.
      if (!shards.has(shard)) this.leaseLosses.inc({ mode }, 0);
      shards.add(shard);
    } else {
      if (shards.delete(shard) && !givenUp) this.leaseLosses.inc({ mode });
      this.depths.get(mode)?.delete(shard);
    }
    this.leaseHeld.set({ mode }, shards.size > 0 ? 1 : 0);
    this.setDepth(mode);
  }

  private setDepth(mode: string): void {
    const shards = [...(this.depths.get(mode)?.values() ?? [])];
    const seen = this.regionsSeen.get(mode) ?? new Set<string>();
    if (shards.length === 0) {
      this.depth.remove({ mode });
      for (const region of seen) this.depthByRegion.remove({ mode, region });
      this.regionsSeen.delete(mode);
      return;
    }
    this.depth.set(
      { mode },
      shards.reduce((sum, shard) => sum + shard.depth, 0),
    );
    const byRegion = new Map<string, number>();
    for (const shard of shards)
      for (const [region, count] of shard.byRegion)
        byRegion.set(region, (byRegion.get(region) ?? 0) + count);
    for (const region of seen)
      if (!byRegion.has(region)) this.depthByRegion.set({ mode, region }, 0);
    for (const [region, count] of byRegion) {
      this.depthByRegion.set({ mode, region }, count);
      seen.add(region);
    }
    this.regionsSeen.set(mode, seen);
  }
}
