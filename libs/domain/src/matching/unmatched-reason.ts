/** Why a ticket left a matching pass without a match; stable, so clients and metrics can switch on it. */
export const UnmatchedCode = {
  /** Some regions are within the ticket's RTT ceiling, but none has enough compatible players. */
  NOT_ENOUGH_PLAYERS: 'NOT_ENOUGH_PLAYERS',
  /** The ticket measured regions, but none within its current RTT ceiling. */
  NO_REGION_WITHIN_LIMIT: 'NO_REGION_WITHIN_LIMIT',
  /** The ticket has no usable RTT measurement at all. */
  NO_REGION: 'NO_REGION',
  /** No rules were given for the ticket's mode. */
  UNKNOWN_MODE: 'UNKNOWN_MODE',
  /** The candidate's data cannot be matched (bad id, rating or enqueue time). */
  INVALID_CANDIDATE: 'INVALID_CANDIDATE',
  /** The player holds an older ticket in the same mode, which is the one considered. */
  DUPLICATE_TICKET: 'DUPLICATE_TICKET',
  /** The player was matched in this pass through another ticket (another mode). */
  PLAYER_MATCHED: 'PLAYER_MATCHED',
  /** Some of the ticket's party are not in the pool (not searching, not heartbeating): a party plays whole or not at all. */
  PARTY_INCOMPLETE: 'PARTY_INCOMPLETE',
  /** The ticket's party has more players than a team of its mode (the API refuses that at enqueue). */
  PARTY_TOO_LARGE: 'PARTY_TOO_LARGE',
  /**
   * Enough players are searching within the ticket's RTT and rating limits, but one of the mode's
   * attribute rules keeps them apart (another build version, a skill too far away).
   */
  ATTRIBUTE_MISMATCH: 'ATTRIBUTE_MISMATCH',
  /**
   * Enough players are searching within the ticket's limits, but block lists (the ticket's
   * player's, or theirs) keep them out of one match with it.
   */
  BLOCKED_PLAYERS: 'BLOCKED_PLAYERS',
  /**
   * A mode with fill steps (match-size.ts): no region has the players the ticket's current
   * minimum needs; the minimum drops as its wait reaches the next step.
   */
  MATCH_TOO_SMALL: 'MATCH_TOO_SMALL',
  /**
   * Enough players are searching within the ticket's limits, but too few of them can play a role
   * every team needs (the mode's role rule), until the rule relaxes.
   */
  ROLE_UNFILLED: 'ROLE_UNFILLED',
} as const;
export type UnmatchedCode = (typeof UnmatchedCode)[keyof typeof UnmatchedCode];

/** One region the ticket could play in, and how far it is from filling a match there. */
export interface RegionShortfall {
  readonly region: string;
  readonly rttMs: number;
  /** Compatible unmatched players there, this ticket included. */
  readonly available: number;
  readonly missing: number;
}

interface ReasonOf<C extends UnmatchedCode, D> {
  readonly code: C;
  /** For people: the API shows it as is. */
  readonly message: string;
  readonly details: Readonly<D>;
}

export type UnmatchedReason =
  | ReasonOf<
      'NOT_ENOUGH_PLAYERS',
      {
        playersPerMatch: number;
        maxRttMs: number;
        ratingWindow: number;
        /** Nearest to filling first (fewest missing, then lowest RTT, then name). */
        regions: readonly RegionShortfall[];
        nextWideningInMs: number | null;
      }
    >
  | ReasonOf<
      'NO_REGION_WITHIN_LIMIT',
      {
        maxRttMs: number;
        nearestRegion: string;
        nearestRttMs: number;
        nextWideningInMs: number | null;
      }
    >
  | ReasonOf<'NO_REGION', Record<string, never>>
  | ReasonOf<'UNKNOWN_MODE', { mode: string }>
  | ReasonOf<'INVALID_CANDIDATE', { problems: readonly string[] }>
  | ReasonOf<'DUPLICATE_TICKET', { playerId: string; olderTicketId: string }>
  | ReasonOf<'PLAYER_MATCHED', { playerId: string; matchedTicketId: string }>
  | ReasonOf<'PARTY_INCOMPLETE', { partyId: string; size: number; present: number }>
  | ReasonOf<'PARTY_TOO_LARGE', { partyId: string; size: number; teamSize: number }>
  | ReasonOf<'ATTRIBUTE_MISMATCH', AttributeMismatchDetails>
  | ReasonOf<'BLOCKED_PLAYERS', { playersPerMatch: number; nextWideningInMs: number | null }>
  | ReasonOf<
      'MATCH_TOO_SMALL',
      {
        minPlayers: number;
        maxPlayers: number;
        /** Nearest to the minimum first; `missing` counts towards it. */
        regions: readonly RegionShortfall[];
        nextFillInMs: number | null;
        nextWideningInMs: number | null;
      }
    >
  | ReasonOf<
      'ROLE_UNFILLED',
      {
        attribute: string;
        perTeam: Readonly<Record<string, number>>;
        /** The roles this ticket's player can play. */
        roles: readonly string[];
        playersPerMatch: number;
        /** When the role rule stops applying to this ticket's search; null: never. */
        optionalInMs: number | null;
      }
    >;

/** Which attribute rule blocks, and this ticket's values of its attributes (null: none). */
export interface AttributeMismatchDetails {
  readonly rule: 'equal' | 'distance' | 'intersect';
  readonly attributes: readonly string[];
  readonly values: Readonly<Record<string, string | number | readonly string[] | null>>;
  /** The distance the ticket's wait accepts now (distance rules; null for equal rules). */
  readonly maxDistance: number | null;
  readonly playersPerMatch: number;
  /** When the limits widen next: the rule's own steps for distance, RTT/rating for the others. */
  readonly nextWideningInMs: number | null;
  /** When the rule stops applying to this ticket's search (optionalAfterSeconds); null: never. */
  readonly optionalInMs: number | null;
}

export interface UnmatchedTicket {
  readonly ticketId: string;
  readonly reason: UnmatchedReason;
}

export function notEnoughPlayers(
  limits: { playersPerMatch: number; maxRttMs: number; ratingWindow: number },
  shortfalls: readonly RegionShortfall[],
  nextWideningMs: number | null,
): UnmatchedReason {
  const regions = [...shortfalls].sort(
    (a, b) => a.missing - b.missing || a.rttMs - b.rttMs || compareText(a.region, b.region),
  );
  const best = regions[0];
  const head =
    regions.length === 1 && best
      ? `waiting for ${playersText(best.missing)} in ${best.region}`
      : `no region in common ${withinText(limits.maxRttMs)}with enough players` +
        (best ? ` (nearest to filling: ${best.region}, ${best.missing} more needed)` : '');
  return freeze({
    code: 'NOT_ENOUGH_PLAYERS',
    message: head + wideningText(nextWideningMs),
    details: {
      ...limits,
      regions: Object.freeze(regions.map((r) => Object.freeze(r))),
      nextWideningInMs: nextWideningMs,
    },
  });
}

export function noRegionWithinLimit(
  maxRttMs: number,
  nearest: { region: string; rttMs: number },
  nextWideningMs: number | null,
): UnmatchedReason {
  return freeze({
    code: 'NO_REGION_WITHIN_LIMIT',
    message:
      `no measured region ${withinText(maxRttMs)}(nearest: ${nearest.region} at ${msText(nearest.rttMs)})` +
      wideningText(nextWideningMs),
    details: {
      maxRttMs,
      nearestRegion: nearest.region,
      nearestRttMs: nearest.rttMs,
      nextWideningInMs: nextWideningMs,
    },
  });
}

export function noRegion(): UnmatchedReason {
  return freeze({
    code: 'NO_REGION',
    message: 'no region measured yet: latency to at least one region is needed',
    details: {},
  });
}

export function unknownMode(mode: string): UnmatchedReason {
  return freeze({
    code: 'UNKNOWN_MODE',
    message: `no matchmaking rules for mode ${JSON.stringify(mode)}`,
    details: { mode },
  });
}

export function invalidCandidate(problems: readonly string[]): UnmatchedReason {
  return freeze({
    code: 'INVALID_CANDIDATE',
    message: `ticket cannot be matched: ${problems.join('; ')}`,
    details: { problems: Object.freeze([...problems]) },
  });
}

export function duplicateTicket(
  playerId: string,
  olderTicketId: string,
  mode: string,
): UnmatchedReason {
  return freeze({
    code: 'DUPLICATE_TICKET',
    message: `player already has an older ticket in mode ${mode}`,
    details: { playerId, olderTicketId },
  });
}

export function playerMatched(playerId: string, matchedTicketId: string): UnmatchedReason {
  return freeze({
    code: 'PLAYER_MATCHED',
    message: 'player was matched through another ticket',
    details: { playerId, matchedTicketId },
  });
}

export function partyIncomplete(partyId: string, size: number, present: number): UnmatchedReason {
  return freeze({
    code: 'PARTY_INCOMPLETE',
    message: `${present} of the party's ${size} players can be matched now: waiting for the rest (searching and heartbeating)`,
    details: { partyId, size, present },
  });
}

export function partyTooLarge(partyId: string, size: number, teamSize: number): UnmatchedReason {
  return freeze({
    code: 'PARTY_TOO_LARGE',
    message: `a party of ${size} cannot fit a team of ${teamSize}`,
    details: { partyId, size, teamSize },
  });
}

export function attributeMismatch(details: AttributeMismatchDetails): UnmatchedReason {
  const valueText = (name: string) => {
    const value = details.values[name];
    if (value === null || value === undefined) return 'none';
    return Array.isArray(value)
      ? value.map((v) => JSON.stringify(v)).join(', ')
      : JSON.stringify(value);
  };
  const first = details.attributes[0] ?? '';
  const head = {
    equal:
      `${details.attributes.join(' and ')} must equal yours (${details.attributes.map(valueText).join(', ')}): ` +
      'players within your limits are searching, but with other values',
    intersect:
      `${first} must share a value with yours (${valueText(first)}): ` +
      'players within your limits are searching, but with no value in common',
    distance:
      `${first} must be within ${String(details.maxDistance)} of yours ` +
      `(${valueText(first)}): players within your other limits are further apart`,
  }[details.rule];
  const message =
    head +
    wideningText(details.nextWideningInMs) +
    (details.optionalInMs === null
      ? ''
      : `; the ${first} rule no longer applies in ${Math.ceil(details.optionalInMs / 1000)} s`);
  return freeze({
    code: 'ATTRIBUTE_MISMATCH',
    message,
    details: {
      ...details,
      attributes: Object.freeze([...details.attributes]),
      values: Object.freeze({ ...details.values }),
    },
  });
}

export function blockedPlayers(
  playersPerMatch: number,
  nextWideningMs: number | null,
): UnmatchedReason {
  return freeze({
    code: 'BLOCKED_PLAYERS',
    message:
      'players within your limits are searching, but block lists keep them out of a match with you' +
      wideningText(nextWideningMs),
    details: { playersPerMatch, nextWideningInMs: nextWideningMs },
  });
}

/** Code-unit order: locale-independent, so a pass orders names the same on every machine. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function freeze(reason: UnmatchedReason): UnmatchedReason {
  Object.freeze(reason.details);
  return Object.freeze(reason);
}

function playersText(count: number): string {
  return `${count} more ${count === 1 ? 'player' : 'players'}`;
}

function msText(ms: number): string {
  return `${Math.round(ms)} ms`;
}

/** "within 100 ms " or nothing for an unlimited ceiling; trailing space included. */
function withinText(maxRttMs: number): string {
  return Number.isFinite(maxRttMs) ? `within ${msText(maxRttMs)} ` : '';
}

function wideningText(nextWideningMs: number | null): string {
  return nextWideningMs === null
    ? ''
    : `; the search widens in ${Math.ceil(nextWideningMs / 1000)} s`;
}
