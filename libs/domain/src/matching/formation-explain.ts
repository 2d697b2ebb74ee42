/** Why a ticket is still unmatched after a pass, in the matcher's own terms. */
import {
  attributeValueOf,
  nextDistanceWideningInMs,
  optionalInMs,
  setAttributeOf,
} from './attribute-rules';
import { partitioningEqualRules } from './pair-rules';
import { nextWideningInMs } from './mode-rules';
import { matchTooSmall, minPlayersAt } from './match-size';
import { roleRuleAt, roleUnfilled } from './role-slots';
import {
  attributeMismatch,
  blockedPlayers,
  noRegionWithinLimit,
  notEnoughPlayers,
  type RegionShortfall,
  type UnmatchedReason,
} from './unmatched-reason';
import { rttOf, type Entry } from './formation-pool';
import { fillsIgnoring, partnerFilter, playersAccepted, type Refusals } from './formation-options';

/** Why `entry` is still unmatched, read from the pool as the pass leaves it. */
export function explain(entry: Entry): UnmatchedReason {
  const { pool, step, waitedMs } = entry;
  const next = nextWideningInMs(pool.rules, waitedMs);
  const ceiling = pool.ceilings.indexOf(step.maxRttMs);
  // With fill steps, what the ticket's wait allows now: a match that small would form.
  const needed = minPlayersAt(pool.rules, waitedMs);
  const refused: Refusals = { distance: new Set(), pair: new Set() };
  const filters = entry.pairChoices.map((choice) => partnerFilter(entry, choice, refused));
  const shortfalls: RegionShortfall[] = [];
  let nearest: { region: string; rttMs: number } | null = null;
  // Whether an attribute rule is what keeps enough players apart in some region.
  let equalBlocks = false;
  let searchRulesBlock = false;
  for (let region = 0; region < pool.regions.length; region++) {
    const name = pool.regions[region] ?? '';
    const rttMs = rttOf(entry, region);
    if (Number.isNaN(rttMs)) continue;
    if (!nearest || rttMs < nearest.rttMs) nearest = { region: name, rttMs };
    const bucket = pool.buckets[region]?.[ceiling];
    if (rttMs > step.maxRttMs || !bucket) continue;
    const [lo, hi] = bucket.ratingRange(entry.rating, step.ratingWindow);
    const inRange = bucket.count(lo, hi);
    // With distance or pair rules, only those within them count (this ticket is always within
    // its own), under the choice that admits the most.
    let available = 0;
    for (const accept of filters) {
      const admitted = accept ? playersAccepted(bucket, lo, hi, needed, accept, pool) : inRange;
      available = Math.max(available, admitted);
    }
    shortfalls.push({ region: name, rttMs, available, missing: Math.max(1, needed - available) });
    if (inRange >= needed && available < needed) searchRulesBlock = true;
    if (inRange < needed && inRange + inOtherPartitions(entry, name, ceiling) >= needed) {
      equalBlocks = true;
    }
  }
  if (shortfalls.length === 0 && nearest) return noRegionWithinLimit(step.maxRttMs, nearest, next);
  if (!shortfalls.some((shortfall) => shortfall.available >= needed)) {
    const blocking = attributeBlock(entry, equalBlocks, searchRulesBlock, refused, needed, next);
    if (blocking) return blocking;
  } else if (pool.hasBlocks && fillsIgnoring(entry, { blocks: true })) {
    return blockedPlayers(needed, next);
  } else {
    const roles = roleRuleAt(pool.rules, waitedMs);
    if (roles && fillsIgnoring(entry, { roles: true })) {
      return roleUnfilled(roles, entry.candidate, waitedMs, needed);
    }
  }
  if (pool.rules.fill) return matchTooSmall(pool.rules, waitedMs, shortfalls, next);
  return notEnoughPlayers(
    { playersPerMatch: needed, maxRttMs: step.maxRttMs, ratingWindow: step.ratingWindow },
    shortfalls,
    next,
  );
}

/**
 * The attribute rule that keeps `entry` from a match its RTT and rating limits would allow: the
 * partitioning equal rules when other pools of the mode would fill it, else the first distance
 * rule that refused a partner, else the first pair rule that did. Null when none is the cause.
 */
function attributeBlock(
  entry: Entry,
  equalBlocks: boolean,
  searchRulesBlock: boolean,
  refused: Refusals,
  needed: number,
  nextWidening: number | null,
): UnmatchedReason | null {
  const { pool, candidate } = entry;
  if (equalBlocks) {
    const names = partitioningEqualRules(pool.rules.attributeRules).map((rule) => rule.attribute);
    return attributeMismatch({
      rule: 'equal',
      attributes: names,
      values: Object.fromEntries(
        names.map((name) => [name, attributeValueOf(candidate.attributes, name) ?? null]),
      ),
      maxDistance: null,
      playersPerMatch: needed,
      nextWideningInMs: nextWidening,
      optionalInMs: null,
    });
  }
  if (!searchRulesBlock) return null;
  const distanceIndex = [...refused.distance].sort((a, b) => a - b)[0];
  const distance = distanceIndex === undefined ? undefined : pool.distanceRules[distanceIndex];
  if (distanceIndex !== undefined && distance) {
    const value = entry.distanceValues[distanceIndex] ?? Number.NaN;
    return attributeMismatch({
      rule: 'distance',
      attributes: [distance.attribute],
      values: { [distance.attribute]: Number.isNaN(value) ? null : value },
      maxDistance: entry.maxDistances[distanceIndex] ?? 0,
      playersPerMatch: needed,
      nextWideningInMs: nextDistanceWideningInMs(distance, entry.waitedMs),
      optionalInMs: null,
    });
  }
  const pairIndex = [...refused.pair].sort((a, b) => a - b)[0];
  const rule = pairIndex === undefined ? undefined : pool.pairRules[pairIndex];
  if (!rule) return null;
  const value =
    rule.kind === 'equal'
      ? attributeValueOf(candidate.attributes, rule.attribute)
      : setAttributeOf(candidate.attributes, rule.attribute);
  return attributeMismatch({
    rule: rule.kind,
    attributes: [rule.attribute],
    values: { [rule.attribute]: value ?? null },
    maxDistance: null,
    playersPerMatch: needed,
    nextWideningInMs: nextWidening,
    optionalInMs: optionalInMs(rule, entry.waitedMs),
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
