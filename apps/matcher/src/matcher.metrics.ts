import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { MetricsRegistry } from '@matchplane/observability';
import type { DropReason } from './match-committer';

/**
 * The matcher's figures, by mode. Queue depth is set by the lease holder at each pass and removed
 * by a replica that does not hold the mode, so a sum over replicas counts each candidate once.
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
  private readonly modesHeld = new Set<string>();
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
      help: '1 while this replica holds the mode lease',
      labelNames: ['mode'],
      registers,
    });
    this.leaseLosses = new Counter({
      name: 'matcher_lease_losses_total',
      help: 'Times this replica held a mode lease and then found it gone (its session ended or the fence failed)',
      labelNames: ['mode'],
      registers,
    });
  }

  pass(mode: string, seconds: number, depth: number, byRegion: ReadonlyMap<string, number>): void {
    this.passDuration.observe({ mode }, seconds);
    this.depth.set({ mode }, depth);
    const seen = this.regionsSeen.get(mode) ?? new Set<string>();
    for (const region of seen)
      if (!byRegion.has(region)) this.depthByRegion.set({ mode, region }, 0);
    for (const [region, count] of byRegion) {
      this.depthByRegion.set({ mode, region }, count);
      seen.add(region);
    }
    this.regionsSeen.set(mode, seen);
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

  lease(mode: string, held: boolean): void {
    this.leaseHeld.set({ mode }, held ? 1 : 0);
    if (held) {
      // Zero from the first hold on, so an increase() alert sees the first loss too.
      if (!this.modesHeld.has(mode)) this.leaseLosses.inc({ mode }, 0);
      this.modesHeld.add(mode);
      return;
    }
    if (this.modesHeld.delete(mode)) this.leaseLosses.inc({ mode });
    this.depth.remove({ mode });
    for (const region of this.regionsSeen.get(mode) ?? [])
      this.depthByRegion.remove({ mode, region });
    this.regionsSeen.delete(mode);
  }
}
