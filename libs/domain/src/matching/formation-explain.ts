/** Why a ticket is still unmatched after a pass, in the matcher's own terms. */
import { attributeValueOf, equalRules, nextDistanceWideningInMs } from './attribute-rules';
import { nextWideningInMs, playersPerMatch } from './mode-rules';
import {
  attributeMismatch,
  noRegionWithinLimit,
  notEnoughPlayers,
  type RegionShortfall,
  type UnmatchedReason,
} from './unmatched-reason';
import { rttOf, type Entry } from './formation-pool';
import { distanceFilter, playersAccepted } from './formation-options';

/** Why `entry` is still unmatched, read from the pool as the pass leaves it. */
export function explain(entry: Entry): UnmatchedReason {
  const { pool, step, waitedMs } = entry;
  const next = nextWideningInMs(pool.rules, waitedMs);
  const ceiling = pool.ceilings.indexOf(step.maxRttMs);
  const needed = playersPerMatch(pool.rules);
  const refusedBy = new Set<number>();
  const accept = distanceFilter(entry, refusedBy);
  const shortfalls: RegionShortfall[] = [];
  let nearest: { region: string; rttMs: number } | null = null;
  // Whether an attribute rule is what keeps enough players apart in some region.
  let equalBlocks = false;
  let distanceBlocks = false;
  for (let region = 0; region < pool.regions.length; region++) {
    const name = pool.regions[region] ?? '';
    const rttMs = rttOf(entry, region);
    if (Number.isNaN(rttMs)) continue;
    if (!nearest || rttMs < nearest.rttMs) nearest = { region: name, rttMs };
    const bucket = pool.buckets[region]?.[ceiling];
    if (rttMs > step.maxRttMs || !bucket) continue;
    const [lo, hi] = bucket.ratingRange(entry.rating, step.ratingWindow);
    const inRange = bucket.count(lo, hi);
    // With distance rules, only those within them count (this ticket is always within its own).
    const available = accept ? playersAccepted(bucket, lo, hi, needed, accept, pool) : inRange;
    shortfalls.push({ region: name, rttMs, available, missing: Math.max(1, needed - available) });
    if (inRange >= needed && available < needed) distanceBlocks = true;
    if (inRange < needed && inRange + inOtherPartitions(entry, name, ceiling) >= needed) {
      equalBlocks = true;
    }
  }
  if (shortfalls.length === 0 && nearest) return noRegionWithinLimit(step.maxRttMs, nearest, next);
  if (!shortfalls.some((shortfall) => shortfall.available >= needed)) {
    const blocking = attributeBlock(entry, equalBlocks, distanceBlocks, refusedBy, needed, next);
    if (blocking) return blocking;
  }
  return notEnoughPlayers(
    { playersPerMatch: needed, maxRttMs: step.maxRttMs, ratingWindow: step.ratingWindow },
    shortfalls,
    next,
  );
}

/**
 * The attribute rule that keeps `entry` from a match its RTT and rating limits would allow: the
 * equal rules when other pools of the mode would fill it, else the first distance rule that
 * refused a partner. Null when neither is the cause.
 */
function attributeBlock(
  entry: Entry,
  equalBlocks: boolean,
  distanceBlocks: boolean,
  refusedBy: ReadonlySet<number>,
  needed: number,
  nextWidening: number | null,
): UnmatchedReason | null {
  const { pool, candidate } = entry;
  if (equalBlocks) {
    const names = equalRules(pool.rules.attributeRules).map((rule) => rule.attribute);
    return attributeMismatch({
      rule: 'equal',
      attributes: names,
      values: Object.fromEntries(
        names.map((name) => [name, attributeValueOf(candidate.attributes, name) ?? null]),
      ),
      maxDistance: null,
      playersPerMatch: needed,
      nextWideningInMs: nextWidening,
    });
  }
  const index = [...refusedBy].sort((a, b) => a - b)[0];
  const rule = index === undefined ? undefined : pool.distanceRules[index];
  if (!distanceBlocks || index === undefined || !rule) return null;
  const value = entry.distanceValues[index] ?? Number.NaN;
  return attributeMismatch({
    rule: 'distance',
    attributes: [rule.attribute],
    values: { [rule.attribute]: Number.isNaN(value) ? null : value },
    maxDistance: entry.maxDistances[index] ?? 0,
    playersPerMatch: needed,
    nextWideningInMs: nextDistanceWideningInMs(rule, entry.waitedMs),
  });
}

/**
 * Unmatched tickets of the mode's other pools (other values of its equal rules) that `entry`'s
 * RTT ceiling and rating window would admit in `region`.
 */
function inOtherPartitions(entry: Entry, region: string, ceiling: number): number {
  let total = 0;
  for (const sibling of entry.pool.siblings) {
    if (sibling === entry.pool) continue;
    const bucket = sibling.buckets[sibling.regions.indexOf(region)]?.[ceiling];
    if (!bucket) continue;
    const [lo, hi] = bucket.ratingRange(entry.rating, entry.step.ratingWindow);
    total += bucket.count(lo, hi);
  }
  return total;
}
