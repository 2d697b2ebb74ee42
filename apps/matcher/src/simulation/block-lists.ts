/**
 * Block lists in the simulator (issue 34): synthetic blocks, who each player must not meet, and
 * the count of blocked pairs a rule set's matches put together (0 under the matcher's function).
 */
import type { ProposedMatch } from '@matchplane/domain';
import { mulberry32 } from './seeded-random';
import type { Arrival } from './traffic';

/** How many earlier arrivals of its mode a synthetic block is drawn from: players it could meet. */
const RECENT_ARRIVALS = 50;
/** Its own stream, so adding blocks left every other draw of a seed as it was. */
const BLOCK_STREAM = 0x6b1c_a5e5;

/**
 * `share` of the players block one player who queued for the same mode shortly before them (one
 * of the last 50 arrivals, never a party mate), drawn from a stream of their own off `seed`.
 */
export function withSyntheticBlocks(
  arrivals: readonly Arrival[],
  seed: number,
  share: number,
): Arrival[] {
  if (share <= 0) return [...arrivals];
  const random = mulberry32((seed ^ BLOCK_STREAM) >>> 0);
  const recent = new Map<string, Arrival[]>();
  return arrivals.map((arrival) => {
    const earlier = recent.get(arrival.mode) ?? [];
    recent.set(arrival.mode, [...earlier.slice(1 - RECENT_ARRIVALS), arrival]);
    const others = earlier.filter(
      (other) => !(arrival.party && other.party?.id === arrival.party.id),
    );
    if (others.length === 0 || random() >= share) return arrival;
    const blocked = others[Math.floor(random() * others.length)]!;
    return { ...arrival, blockedPlayerIds: [blocked.playerId] };
  });
}

/** Each player's players not to meet: those it blocked and those who blocked it, sorted. */
export function avoidedPlayers(
  arrivals: readonly Pick<Arrival, 'playerId' | 'blockedPlayerIds'>[],
): Map<string, string[]> {
  const avoided = new Map<string, Set<string>>();
  const add = (playerId: string, other: string) => {
    const set = avoided.get(playerId) ?? new Set<string>();
    avoided.set(playerId, set.add(other));
  };
  for (const arrival of arrivals) {
    for (const blocked of arrival.blockedPlayerIds ?? []) {
      add(arrival.playerId, blocked);
      add(blocked, arrival.playerId);
    }
  }
  return new Map([...avoided].map(([playerId, set]) => [playerId, [...set].sort()]));
}

/** Pairs of `match`'s players where one blocked the other. */
export function blockedPairsIn(
  match: ProposedMatch,
  avoided: ReadonlyMap<string, readonly string[]>,
): number {
  const players = match.participants.map((participant) => participant.playerId);
  let pairs = 0;
  players.forEach((playerId, index) => {
    const avoids = avoided.get(playerId);
    if (!avoids) return;
    for (const other of players.slice(index + 1)) if (avoids.includes(other)) pairs += 1;
  });
  return pairs;
}
