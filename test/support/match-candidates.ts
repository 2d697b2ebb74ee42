/** Candidates and readings of a pass's result for the pure matching specs (libs/domain). */
import type {
  BackfillNeed,
  MatchCandidate,
  MatchFormation,
  UnmatchedReason,
} from '@matchplane/domain';

/** A canonical uuid numbered `n`: kind 1 for tickets, 2 for players. */
export function numberedUuid(kind: 1 | 2, n: number): string {
  return `${kind}0000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

/** A solo duel candidate numbered `n` in eu-west (20 ms), rated 1500, queued `waitedMs` before `now`. */
export function newCandidate(
  n: number,
  now: Date,
  waitedMs: number,
  extra: Partial<MatchCandidate> = {},
): MatchCandidate {
  return {
    ticketId: numberedUuid(1, n),
    playerId: numberedUuid(2, n),
    mode: 'duel',
    rating: 1500,
    predictedRtt: { 'eu-west': 20 },
    enqueuedAt: new Date(now.getTime() - waitedMs),
    ...extra,
  };
}

/** A one-slot backfill request on team 0 of a match in eu-west, rated 1500, made at `now`. */
export function newBackfillNeed(now: Date, extra: Partial<BackfillNeed> = {}): BackfillNeed {
  return {
    requestId: 'r',
    matchId: 'm',
    team: 0,
    slots: 1,
    serverRegion: 'eu-west',
    teamRating: 1500,
    attributes: {},
    excludedPlayerIds: [],
    createdAt: now,
    ...extra,
  };
}

/** Each match's ticket ids, sorted, in the order the matches were formed. */
export function ticketsOfMatches(formation: MatchFormation): string[][] {
  return formation.matches.map((match) => match.participants.map((p) => p.ticketId).sort());
}

/** Why candidate `n` is unmatched, if it is. */
export function reasonOf(formation: MatchFormation, n: number): UnmatchedReason | undefined {
  return formation.unmatched.find((ticket) => ticket.ticketId === numberedUuid(1, n))?.reason;
}
