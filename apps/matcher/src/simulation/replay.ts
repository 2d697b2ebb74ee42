import type {
  MatchCandidate,
  MatchingFunction,
  ModeRules,
  ProposedMatch,
} from '@matchplane/domain';
import { bothWays, listedPairsIn } from './block-lists';
import { teamRatingGap } from './match-figures';
import type { Arrival } from './traffic';

/** What one mode's players went through under one rule set. */
export interface ModeOutcome {
  readonly players: number;
  readonly matched_players: number;
  readonly cancelled_players: number;
  /** Still waiting when the traffic (and its drain time) ended. */
  readonly waiting_players: number;
  readonly matched_share: number;
  readonly matches: number;
  /** From arrival to the pass that matched the player. */
  readonly wait_ms: { readonly p50: number; readonly p95: number; readonly p99: number };
  /** Per match, its worst participant's RTT to its region. */
  readonly worst_rtt_ms: { readonly mean: number; readonly p95: number };
  /** Per match, the highest team's mean rating minus the lowest's, averaged over matches. */
  readonly mean_team_rating_gap: number;
  /** Pairs of players matched together where one blocked the other (0 under the block rule). */
  readonly blocked_pairs_matched: number;
  /** Pairs matched together where one avoided the other (only where nothing else fitted). */
  readonly avoided_pairs_matched: number;
}

export interface ReplayOptions {
  /** Virtual time between two passes (the matcher's MATCHER_PASS_INTERVAL_MS). */
  readonly passIntervalMs: number;
  /** Passes go on this long after the last arrival, so late arrivals get their chance. */
  readonly drainMs: number;
  /** The virtual clock's origin (any fixed instant: the figures are all relative to it). */
  readonly startAt: Date;
}

interface Waiting {
  readonly arrival: Arrival;
  readonly candidate: MatchCandidate;
}

/**
 * Replays `arrivals` in virtual time through `matching` (the matcher's own function) under
 * `rules`: every pass interval, the tickets that arrived join the pool, the ones whose patience
 * ran out leave it (a party as one), one pass runs over the pool at the virtual now and its
 * matches leave with them. Nothing is committed anywhere: the pass is pure.
 */
export function replay(
  arrivals: readonly Arrival[],
  rules: readonly ModeRules[],
  matching: MatchingFunction,
  options: ReplayOptions,
): Record<string, ModeOutcome> {
  const modes = new Set(rules.map((rule) => rule.mode));
  const tally = new Map<string, Tally>();
  const tallyOf = (mode: string) => {
    let found = tally.get(mode);
    if (!found) tally.set(mode, (found = new Tally()));
    return found;
  };
  for (const arrival of arrivals) tallyOf(arrival.mode).players += 1;

  const blocked = bothWays(arrivals, 'blockedPlayerIds');
  const avoided = bothWays(arrivals, 'avoidedPlayerIds');
  const pool = new Map<string, Waiting>();
  const lastArrivalMs = arrivals.length > 0 ? arrivals[arrivals.length - 1]!.atMs : 0;
  const endMs = lastArrivalMs + options.drainMs;
  let next = 0;
  for (let nowMs = 0; nowMs <= endMs; nowMs += options.passIntervalMs) {
    while (next < arrivals.length && arrivals[next]!.atMs <= nowMs) {
      const arrival = arrivals[next++]!;
      // A mode the rule set does not know waits for ever (counted as waiting at the end).
      if (modes.has(arrival.mode))
        pool.set(arrival.ticketId, {
          arrival,
          candidate: toCandidate(arrival, options.startAt, {
            blockedPlayerIds: blocked.get(arrival.playerId),
            avoidedPlayerIds: avoided.get(arrival.playerId),
          }),
        });
    }
    const leavingParties = new Set<string>();
    for (const [ticketId, { arrival }] of pool) {
      if (arrival.cancelAfterMs !== undefined && nowMs - arrival.atMs >= arrival.cancelAfterMs) {
        pool.delete(ticketId);
        tallyOf(arrival.mode).cancelled += 1;
        if (arrival.party) leavingParties.add(arrival.party.id);
      }
    }
    // One member's cancel ends the party's tickets together, as the API does.
    if (leavingParties.size > 0) {
      for (const [ticketId, { arrival }] of pool) {
        if (arrival.party && leavingParties.has(arrival.party.id)) {
          pool.delete(ticketId);
          tallyOf(arrival.mode).cancelled += 1;
        }
      }
    }
    if (pool.size === 0) continue;
    const formation = matching(
      [...pool.values()].map((waiting) => waiting.candidate),
      rules,
      new Date(options.startAt.getTime() + nowMs),
    );
    for (const match of formation.matches) {
      const outcome = tallyOf(match.mode);
      outcome.record(match, (ticketId) => {
        const waiting = pool.get(ticketId);
        pool.delete(ticketId);
        return waiting ? nowMs - waiting.arrival.atMs : undefined;
      });
      outcome.blockedPairs += listedPairsIn(match, blocked);
      outcome.avoidedPairs += listedPairsIn(match, avoided);
    }
  }
  const outcomes: Record<string, ModeOutcome> = {};
  for (const mode of [...tally.keys()].sort()) {
    const waitingPlayers = [...pool.values()].filter((w) => w.arrival.mode === mode).length;
    outcomes[mode] = tallyOf(mode).outcome(
      waitingPlayers + unknownModeWaiting(arrivals, modes, mode),
    );
  }
  return outcomes;
}

function unknownModeWaiting(
  arrivals: readonly Arrival[],
  modes: ReadonlySet<string>,
  mode: string,
): number {
  return modes.has(mode) ? 0 : arrivals.filter((arrival) => arrival.mode === mode).length;
}

function toCandidate(
  arrival: Arrival,
  startAt: Date,
  lists: {
    blockedPlayerIds: readonly string[] | undefined;
    avoidedPlayerIds: readonly string[] | undefined;
  },
): MatchCandidate {
  return {
    ticketId: arrival.ticketId,
    playerId: arrival.playerId,
    mode: arrival.mode,
    rating: arrival.rating,
    predictedRtt: arrival.rtt,
    enqueuedAt: new Date(startAt.getTime() + arrival.atMs),
    attributes: arrival.attributes,
    ...(arrival.party ? { party: arrival.party } : {}),
    // Both directions, as the matcher reads them (PlayerBlocks.listsAround).
    ...(lists.blockedPlayerIds ? { blockedPlayerIds: lists.blockedPlayerIds } : {}),
    ...(lists.avoidedPlayerIds ? { avoidedPlayerIds: lists.avoidedPlayerIds } : {}),
  };
}

class Tally {
  players = 0;
  cancelled = 0;
  blockedPairs = 0;
  avoidedPairs = 0;
  private readonly waits: number[] = [];
  private readonly worstRtts: number[] = [];
  private ratingGapSum = 0;

  record(match: ProposedMatch, takeWait: (ticketId: string) => number | undefined): void {
    this.worstRtts.push(match.worstRttMs);
    for (const participant of match.participants) {
      const wait = takeWait(participant.ticketId);
      if (wait !== undefined) this.waits.push(wait);
    }
    this.ratingGapSum += teamRatingGap(match);
  }

  outcome(waitingPlayers: number): ModeOutcome {
    const matches = this.worstRtts.length;
    return {
      players: this.players,
      matched_players: this.waits.length,
      cancelled_players: this.cancelled,
      waiting_players: waitingPlayers,
      matched_share: this.players > 0 ? round(this.waits.length / this.players, 4) : 0,
      matches,
      wait_ms: {
        p50: percentile(this.waits, 0.5),
        p95: percentile(this.waits, 0.95),
        p99: percentile(this.waits, 0.99),
      },
      worst_rtt_ms: {
        mean: matches > 0 ? round(this.worstRtts.reduce((a, b) => a + b, 0) / matches, 1) : 0,
        p95: percentile(this.worstRtts, 0.95),
      },
      mean_team_rating_gap: matches > 0 ? round(this.ratingGapSum / matches, 1) : 0,
      blocked_pairs_matched: this.blockedPairs,
      avoided_pairs_matched: this.avoidedPairs,
    };
  }
}

/** Nearest-rank percentile (0 when empty). */
function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
