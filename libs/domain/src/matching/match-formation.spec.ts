import { createMatch } from '../match/match.aggregate';
import { DomainError } from '../shared/domain.error';
import { formMatches, type MatchCandidate, type MatchFormation } from './match-formation';
import type { ModeRules } from './mode-rules';

const now = new Date('2026-12-01T10:00:00.000Z');

const duel: ModeRules = {
  mode: 'duel',
  teamSize: 1,
  teamCount: 2,
  widening: [
    { afterMs: 0, maxRttMs: 50, ratingWindow: 100 },
    { afterMs: 20_000, maxRttMs: 100, ratingWindow: 200 },
    { afterMs: 60_000, maxRttMs: 200, ratingWindow: Number.POSITIVE_INFINITY },
  ],
};
const squad: ModeRules = {
  mode: 'squad',
  teamSize: 2,
  teamCount: 2,
  widening: [{ afterMs: 0, maxRttMs: 100, ratingWindow: 500 }],
};
const ffa: ModeRules = {
  mode: 'ffa',
  teamSize: 1,
  teamCount: 3,
  widening: [{ afterMs: 0, maxRttMs: 100, ratingWindow: 100 }],
};
const allRules = [duel, squad, ffa];

function uuid(kind: 1 | 2, n: number): string {
  return `${kind}0000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

/** Candidate `n` (ticket and player ids derived from it), `waitedMs` before `now`. */
function newCandidate(
  n: number,
  predictedRtt: Record<string, number>,
  overrides: Partial<MatchCandidate> & { waitedMs?: number } = {},
): MatchCandidate {
  const { waitedMs = 1_000, ...rest } = overrides;
  return {
    ticketId: uuid(1, n),
    playerId: uuid(2, n),
    mode: 'duel',
    rating: 1500,
    predictedRtt,
    enqueuedAt: new Date(now.getTime() - waitedMs),
    ...rest,
  };
}

function roster(formation: MatchFormation): string[][] {
  return formation.matches.map((match) =>
    match.participants.map((participant) => participant.ticketId).sort(),
  );
}

function reasonOf(formation: MatchFormation, n: number) {
  return formation.unmatched.find((ticket) => ticket.ticketId === uuid(1, n))?.reason;
}

describe(formMatches.name, () => {
  it('pairs two duel players in their common region, one per team, under the anchor limits', () => {
    const formation = formMatches(
      [
        newCandidate(1, { 'eu-west': 30, 'us-east': 90 }, { waitedMs: 5_000 }),
        newCandidate(2, { 'eu-west': 40 }, { rating: 1550 }),
      ],
      allRules,
      now,
    );
    expect(formation.unmatched).toEqual([]);
    expect(formation.matches).toEqual([
      {
        mode: 'duel',
        region: 'eu-west',
        participants: [
          { ticketId: uuid(1, 2), playerId: uuid(2, 2), team: 0, rating: 1550, rttMs: 40 },
          { ticketId: uuid(1, 1), playerId: uuid(2, 1), team: 1, rating: 1500, rttMs: 30 },
        ],
        worstRttMs: 40,
        sumRttMs: 70,
        anchorTicketId: uuid(1, 1),
        maxRttMs: 50,
        ratingWindow: 100,
      },
    ]);
  });

  it('chooses the region with the lowest worst RTT, not the lowest sum', () => {
    const formation = formMatches(
      [
        newCandidate(1, { eu: 10, us: 45 }, { waitedMs: 2_000 }),
        newCandidate(2, { eu: 50, us: 45 }),
      ],
      [duel],
      now,
    );
    expect(formation.matches[0]).toMatchObject({ region: 'us', worstRttMs: 45, sumRttMs: 90 });
  });

  it('breaks a tie on worst RTT by the sum, then by region name', () => {
    const bySum = formMatches(
      [
        newCandidate(1, { eu: 40, us: 40 }, { waitedMs: 2_000 }),
        newCandidate(2, { eu: 40, us: 10 }),
      ],
      [duel],
      now,
    );
    expect(bySum.matches[0]?.region).toBe('us');
    const byName = formMatches(
      [
        newCandidate(1, { us: 40, eu: 40 }, { waitedMs: 2_000 }),
        newCandidate(2, { us: 40, eu: 40 }),
      ],
      [duel],
      now,
    );
    expect(byName.matches[0]?.region).toBe('eu');
  });

  it('pairs the anchor with the oldest compatible ticket even when a younger one is closer', () => {
    const formation = formMatches(
      [
        newCandidate(1, { eu: 30 }, { waitedMs: 9_000 }),
        newCandidate(2, { eu: 45 }, { waitedMs: 8_000 }),
        newCandidate(3, { eu: 5 }, { waitedMs: 1_000 }),
      ],
      [duel],
      now,
    );
    expect(roster(formation)).toEqual([[uuid(1, 1), uuid(1, 2)]]);
    expect(reasonOf(formation, 3)?.message).toBe(
      'waiting for 1 more player in eu; the search widens in 19 s',
    );
  });

  it('never moves a set to a better region where it would pass over an older ticket', () => {
    // eu offers {1, 3} (worst 25), but {1, 3} is better off in us (worst 20), where ticket 2
    // is older than 3; us itself offers {1, 2} (worst 30). Only {1, 2} in us is both fair and
    // in the best region for its players.
    const formation = formMatches(
      [
        newCandidate(1, { eu: 20, us: 20 }, { waitedMs: 9_000 }),
        newCandidate(2, { us: 30 }, { waitedMs: 8_000 }),
        newCandidate(3, { eu: 25, us: 10 }, { waitedMs: 1_000 }),
      ],
      [duel],
      now,
    );
    expect(formation.matches).toHaveLength(1);
    expect(formation.matches[0]).toMatchObject({ region: 'us', worstRttMs: 30 });
    expect(roster(formation)).toEqual([[uuid(1, 1), uuid(1, 2)]]);
  });

  it('lets an older ticket whose own search found nothing join a younger anchor', () => {
    // 1 (1000) sees only 2 within its window of 100; 2 (1090) sees both 1 and 3.
    const formation = formMatches(
      [
        newCandidate(1, { eu: 20 }, { mode: 'ffa', rating: 1000, waitedMs: 3_000 }),
        newCandidate(2, { eu: 20 }, { mode: 'ffa', rating: 1090, waitedMs: 2_000 }),
        newCandidate(3, { eu: 20 }, { mode: 'ffa', rating: 1180, waitedMs: 1_000 }),
      ],
      [ffa],
      now,
    );
    expect(formation.matches).toHaveLength(1);
    expect(formation.matches[0]?.anchorTicketId).toBe(uuid(1, 2));
    expect(roster(formation)).toEqual([[uuid(1, 1), uuid(1, 2), uuid(1, 3)]]);
    expect(formation.matches[0]?.participants.map((p) => p.team).sort()).toEqual([0, 1, 2]);
  });

  it('balances a 2v2 by rating', () => {
    const ratings = [1800, 1500, 1400, 1100];
    const formation = formMatches(
      ratings.map((rating, i) => newCandidate(i + 1, { eu: 20 }, { mode: 'squad', rating })),
      [squad],
      now,
    );
    const sums = [0, 1].map((team) =>
      formation.matches[0]?.participants
        .filter((p) => p.team === team)
        .reduce((sum, p) => sum + p.rating, 0),
    );
    expect(sums).toEqual([2900, 2900]);
  });

  it('balances on the mean behind each rating, so equal ratings with different uncertainty split', () => {
    // The same display rating (a conservative estimate) hides a higher mean where sigma is
    // larger: two newcomers (openskill's prior sigma) and two settled players must not pair up.
    const sigmas = [1, 1, 25 / 3, 25 / 3];
    const formation = formMatches(
      sigmas.map((ratingSigma, i) =>
        newCandidate(i + 1, { eu: 20 }, { mode: 'squad', rating: 1500, ratingSigma }),
      ),
      [squad],
      now,
    );
    const teamOf = (n: number) =>
      formation.matches[0]?.participants.find((p) => p.ticketId === uuid(1, n))?.team;
    expect(teamOf(3)).not.toBe(teamOf(4));
    expect(teamOf(1)).not.toBe(teamOf(2));
  });

  describe('widening', () => {
    it('matches a pair whose only common region is 80 ms once both waited past the 100 ms step', () => {
      const pair = (waitedMs: number) => [
        newCandidate(1, { eu: 80, us: 20 }, { waitedMs }),
        newCandidate(2, { eu: 30, ap: 10 }, { waitedMs }),
      ];
      const fresh = formMatches(pair(0), [duel], now);
      expect(fresh.matches).toEqual([]);
      expect(reasonOf(fresh, 1)).toMatchObject({
        code: 'NOT_ENOUGH_PLAYERS',
        message: 'waiting for 1 more player in us; the search widens in 20 s',
      });
      const waited = formMatches(pair(20_000), [duel], now);
      expect(waited.matches[0]).toMatchObject({ region: 'eu', worstRttMs: 80, maxRttMs: 100 });
    });

    it('matches ratings 150 apart once the window has widened from 100 to 200', () => {
      const pair = (waitedMs: number) => [
        newCandidate(1, { eu: 20 }, { rating: 1500, waitedMs }),
        newCandidate(2, { eu: 20 }, { rating: 1650, waitedMs }),
      ];
      expect(formMatches(pair(19_999), [duel], now).matches).toEqual([]);
      expect(formMatches(pair(20_001), [duel], now).matches).toHaveLength(1);
    });

    it("applies the anchor's widened limits to a fresh partner", () => {
      const formation = formMatches(
        [
          newCandidate(1, { ap: 150 }, { rating: 2400, waitedMs: 61_000 }),
          newCandidate(2, { eu: 10, ap: 140 }, { rating: 1200, waitedMs: 0 }),
        ],
        [duel],
        now,
      );
      expect(formation.matches[0]).toMatchObject({
        region: 'ap',
        maxRttMs: 200,
        ratingWindow: Number.POSITIVE_INFINITY,
      });
    });

    it('treats a ticket enqueued after now (another clock) as not having waited', () => {
      const formation = formMatches(
        [newCandidate(1, { eu: 80 }, { waitedMs: -5_000 })],
        [duel],
        now,
      );
      expect(reasonOf(formation, 1)).toMatchObject({
        code: 'NO_REGION_WITHIN_LIMIT',
        details: { maxRttMs: 50, nextWideningInMs: 20_000 },
      });
    });
  });

  describe('explanations', () => {
    it('says how many players a single usable region still needs', () => {
      const formation = formMatches(
        [newCandidate(1, { 'eu-west': 20 }, { mode: 'squad' })],
        [squad],
        now,
      );
      expect(formation.unmatched).toEqual([
        {
          ticketId: uuid(1, 1),
          reason: {
            code: 'NOT_ENOUGH_PLAYERS',
            message: 'waiting for 3 more players in eu-west',
            details: {
              playersPerMatch: 4,
              maxRttMs: 100,
              ratingWindow: 500,
              regions: [{ region: 'eu-west', rttMs: 20, available: 1, missing: 3 }],
              nextWideningInMs: null,
            },
          },
        },
      ]);
    });

    it('says no region in common has enough players when several are usable', () => {
      const formation = formMatches(
        [
          newCandidate(1, { 'eu-west': 20, 'us-east': 90 }, { mode: 'squad' }),
          newCandidate(2, { 'us-east': 30 }, { mode: 'squad' }),
          newCandidate(3, { 'eu-west': 20, 'us-east': 200 }, { mode: 'squad', rating: 2100 }),
        ],
        [squad],
        now,
      );
      const reason = reasonOf(formation, 1);
      expect(reason?.message).toBe(
        'no region in common within 100 ms with enough players (nearest to filling: us-east, 2 more needed)',
      );
      expect(reason?.details).toMatchObject({
        regions: [
          { region: 'us-east', rttMs: 90, available: 2, missing: 2 },
          { region: 'eu-west', rttMs: 20, available: 1, missing: 3 },
        ],
      });
    });

    it('names the nearest region when none is within the ceiling', () => {
      const formation = formMatches(
        [newCandidate(1, { 'ap-southeast': 180, 'us-west': 220 })],
        [duel],
        now,
      );
      expect(reasonOf(formation, 1)).toEqual({
        code: 'NO_REGION_WITHIN_LIMIT',
        message:
          'no measured region within 50 ms (nearest: ap-southeast at 180 ms); the search widens in 19 s',
        details: {
          maxRttMs: 50,
          nearestRegion: 'ap-southeast',
          nearestRttMs: 180,
          nextWideningInMs: 19_000,
        },
      });
    });

    it('explains tickets that cannot enter the pool at all, without failing the pass', () => {
      const formation = formMatches(
        [
          newCandidate(1, { eu: 10 }, { rating: Number.NaN }),
          newCandidate(2, { eu: 10 }, { mode: 'chess' }),
          newCandidate(3, {}),
          newCandidate(4, null as unknown as Record<string, number>),
          newCandidate(5, { 'eu ': 10, '': 5, eu: -1 }),
          newCandidate(6, { eu: 10 }, { playerId: 'not-a-uuid', enqueuedAt: new Date('nope') }),
          newCandidate(7, { eu: 10 }),
          newCandidate(8, { eu: 10 }),
        ],
        [duel],
        now,
      );
      expect(roster(formation)).toEqual([[uuid(1, 7), uuid(1, 8)]]);
      expect(formation.unmatched.map((t) => [t.ticketId, t.reason.code])).toEqual([
        [uuid(1, 1), 'INVALID_CANDIDATE'],
        [uuid(1, 2), 'UNKNOWN_MODE'],
        [uuid(1, 3), 'NO_REGION'],
        [uuid(1, 4), 'NO_REGION'],
        [uuid(1, 5), 'NO_REGION'],
        [uuid(1, 6), 'INVALID_CANDIDATE'],
      ]);
      expect(reasonOf(formation, 1)?.message).toBe(
        'ticket cannot be matched: rating must be a finite number',
      );
      expect(reasonOf(formation, 2)?.message).toBe('no matchmaking rules for mode "chess"');
      expect(reasonOf(formation, 6)?.details).toEqual({
        problems: [
          'playerId must be a canonical lowercase uuid',
          'enqueuedAt must be a valid Date',
        ],
      });
    });

    it("considers only a player's oldest ticket in a mode", () => {
      const formation = formMatches(
        [
          newCandidate(1, { eu: 10 }, { waitedMs: 5_000 }),
          newCandidate(2, { eu: 10 }, { playerId: uuid(2, 1), waitedMs: 1_000 }),
        ],
        [duel],
        now,
      );
      expect(formation.matches).toEqual([]);
      expect(reasonOf(formation, 2)).toEqual({
        code: 'DUPLICATE_TICKET',
        message: 'player already has an older ticket in mode duel',
        details: { playerId: uuid(2, 1), olderTicketId: uuid(1, 1) },
      });
      expect(reasonOf(formation, 1)?.code).toBe('NOT_ENOUGH_PLAYERS');
    });

    it('matches a player queued in two modes once, through the older ticket', () => {
      const formation = formMatches(
        [
          newCandidate(1, { eu: 10 }, { mode: 'duel', waitedMs: 5_000 }),
          newCandidate(2, { eu: 10 }, { mode: 'squad', playerId: uuid(2, 1), waitedMs: 9_000 }),
          newCandidate(3, { eu: 10 }, { mode: 'duel' }),
          ...[4, 5, 6].map((n) => newCandidate(n, { eu: 10 }, { mode: 'squad' })),
        ],
        [duel, squad],
        now,
      );
      expect(roster(formation)).toEqual([[uuid(1, 2), uuid(1, 4), uuid(1, 5), uuid(1, 6)]]);
      expect(reasonOf(formation, 1)).toEqual({
        code: 'PLAYER_MATCHED',
        message: 'player was matched through another ticket',
        details: { playerId: uuid(2, 1), matchedTicketId: uuid(1, 2) },
      });
      expect(reasonOf(formation, 3)?.message).toBe(
        'waiting for 1 more player in eu; the search widens in 19 s',
      );
    });

    it("takes no one matched as a partner in one mode into another mode's match", () => {
      // Player 2 is the older duel anchor's partner; their younger squad ticket (3) would complete
      // the squad of 4, 5 and 6, whose anchor (4) searches after the duel matched.
      const formation = formMatches(
        [
          newCandidate(1, { eu: 10 }, { mode: 'duel', waitedMs: 9_000 }),
          newCandidate(2, { eu: 10 }, { mode: 'duel', waitedMs: 1_000 }),
          newCandidate(3, { eu: 10 }, { mode: 'squad', playerId: uuid(2, 2), waitedMs: 2_000 }),
          ...[4, 5, 6].map((n) =>
            newCandidate(n, { eu: 10 }, { mode: 'squad', waitedMs: 8_000 - n }),
          ),
        ],
        [duel, squad],
        now,
      );
      expect(roster(formation)).toEqual([[uuid(1, 1), uuid(1, 2)]]);
      expect(reasonOf(formation, 3)).toEqual({
        code: 'PLAYER_MATCHED',
        message: 'player was matched through another ticket',
        details: { playerId: uuid(2, 2), matchedTicketId: uuid(1, 2) },
      });
      expect(reasonOf(formation, 4)?.code).toBe('NOT_ENOUGH_PLAYERS');
    });
  });

  it('proposes matches createMatch accepts, and returns frozen results', () => {
    const formation = formMatches(
      [1, 2, 3, 4].map((n) => newCandidate(n, { eu: 10 + n }, { mode: 'squad' })),
      [squad],
      now,
    );
    const [match] = formation.matches;
    expect(match).toBeDefined();
    if (!match) return;
    expect(() =>
      createMatch(
        {
          id: uuid(1, 99),
          mode: match.mode,
          region: match.region,
          participants: match.participants,
        },
        now,
      ),
    ).not.toThrow();
    expect(Object.isFrozen(formation)).toBe(true);
    expect(Object.isFrozen(match.participants[0])).toBe(true);
  });

  it('rejects a repeated ticket id, an invalid now and invalid rules', () => {
    const one = newCandidate(1, { eu: 10 });
    expect(() => formMatches([one, { ...one }], [duel], now)).toThrow(DomainError);
    expect(() => formMatches([one], [duel], new Date('nope'))).toThrow(DomainError);
    expect(() => formMatches([one], [{ ...duel, teamSize: 0 }], now)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });

  it('returns nothing for an empty pool', () => {
    expect(formMatches([], [duel], now)).toEqual({ matches: [], unmatched: [] });
  });
});
