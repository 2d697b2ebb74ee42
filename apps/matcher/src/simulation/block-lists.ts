/**
 * Block and avoid lists in the simulator (issue 34): synthetic entries, who each player must not
 * (or would rather not) meet, and the count of listed pairs a rule set's matches put together
 * (blocked: 0 under the matcher's function; avoided: only where nothing else fitted).
 */
import type { ProposedMatch } from '@matchplane/domain';
import { mulberry32 } from './seeded-random';
import type { Arrival } from './traffic';

/** How many earlier arrivals of its mode a synthetic entry is drawn from: players it could meet. */
const RECENT_ARRIVALS = 50;
/**
 * Each list's own stream, so adding one left every other draw of a seed as it was (the block
 * stream predates avoid lists, so a seed's blocks are what they were).
 */
const STREAMS = { blockedPlayerIds: 0x6b1c_a5e5, avoidedPlayerIds: 0x0a71_d5e5 } as const;

/** Which list of an arrival. */
export type ListField = keyof typeof STREAMS;

/**
 * `share` of the players put on their list `field` one player who queued for the same mode shortly
 * before them (one of the last 50 arrivals, never a party mate), drawn from a stream of the list's
 * own off `seed`.
 */
export function withSyntheticEntries(
  arrivals: readonly Arrival[],
  seed: number,
  share: number,
  field: ListField,
): Arrival[] {
  if (share <= 0) return [...arrivals];
  const random = mulberry32((seed ^ STREAMS[field]) >>> 0);
  const recent = new Map<string, Arrival[]>();
  return arrivals.map((arrival) => {
    const earlier = recent.get(arrival.mode) ?? [];
    recent.set(arrival.mode, [...earlier.slice(1 - RECENT_ARRIVALS), arrival]);
    const others = earlier.filter(
      (other) => !(arrival.party && other.party?.id === arrival.party.id),
    );
    if (others.length === 0 || random() >= share) return arrival;
    const listed = others[Math.floor(random() * others.length)]!;
    return { ...arrival, [field]: [listed.playerId] };
  });
}

/** Each player's list `field` both ways: those it listed and those who listed it, sorted. */
export function bothWays(
  arrivals: readonly Pick<Arrival, 'playerId' | ListField>[],
  field: ListField = 'blockedPlayerIds',
): Map<string, string[]> {
  const lists = new Map<string, Set<string>>();
  const add = (playerId: string, other: string) => {
    const set = lists.get(playerId) ?? new Set<string>();
    lists.set(playerId, set.add(other));
  };
  for (const arrival of arrivals) {
    for (const listed of arrival[field] ?? []) {
      add(arrival.playerId, listed);
      add(listed, arrival.playerId);
    }
  }
  return new Map([...lists].map(([playerId, set]) => [playerId, [...set].sort()]));
}

/** Pairs of `match`'s players where one listed the other (`lists`: both ways). */
export function listedPairsIn(
  match: ProposedMatch,
  lists: ReadonlyMap<string, readonly string[]>,
): number {
  const players = match.participants.map((participant) => participant.playerId);
  let pairs = 0;
  players.forEach((playerId, index) => {
    const listed = lists.get(playerId);
    if (!listed) return;
    for (const other of players.slice(index + 1)) if (listed.includes(other)) pairs += 1;
  });
  return pairs;
}
