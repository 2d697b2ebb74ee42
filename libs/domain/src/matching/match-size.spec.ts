/** Mode shapes (issue 34 item 1): per-match minimum with fill steps, in whole teams. */
import { formMatches, type MatchCandidate, type ProposedMatch } from './match-formation';
import { assertModeRules, type ModeRules } from './mode-rules';
import { newCandidate, numberedUuid } from '../../../../test/support/match-candidates';
import { matchShapesAt, minPlayersAt, nextFillInMs, teamSizesFor } from './match-size';

const now = new Date('2026-12-01T10:00:00.000Z');

const ffa: ModeRules = {
  mode: 'ffa',
  teamSize: 1,
  teamCount: 6,
  fill: [
    { afterMs: 10_000, minPlayers: 4 },
    { afterMs: 20_000, minPlayers: 3 },
  ],
  widening: [{ afterMs: 0, maxRttMs: 100, ratingWindow: Number.POSITIVE_INFINITY }],
};
const squads: ModeRules = {
  ...ffa,
  mode: 'squads',
  teamSize: 2,
  teamCount: 4,
  fill: [{ afterMs: 10_000, minPlayers: 4 }],
};

const uuid = numberedUuid;

/** Player `n` (rated 1500 + n), who has waited `waitedMs` less n - 1 ms (player 1 the oldest). */
const candidate = (n: number, waitedMs: number, mode = 'ffa'): MatchCandidate =>
  newCandidate(n, now, waitedMs - n + 1, { mode, rating: 1500 + n });

const pool = (count: number, waitedMs: number, mode = 'ffa') =>
  Array.from({ length: count }, (_, i) => candidate(i + 1, waitedMs, mode));

describe('fill steps', () => {
  it('reads the minimum of a wait, when it drops next, and the shapes a search tries', () => {
    expect([0, 9_999, 10_000, 25_000].map((ms) => minPlayersAt(ffa, ms))).toEqual([6, 6, 4, 3]);
    expect([0, 10_000, 25_000].map((ms) => nextFillInMs(ffa, ms))).toEqual([10_000, 10_000, null]);
    expect(matchShapesAt(squads, 12_000)).toEqual([
      [2, 2, 2, 2],
      [2, 2, 2],
      [2, 2],
    ]);
    expect(teamSizesFor(squads, 0, 6)).toBeNull();
    expect(teamSizesFor(squads, 12_000, 6)).toEqual([2, 2, 2]);
  });

  it('forms a full match at once', () => {
    const { matches } = formMatches(pool(6, 1_000), [ffa], now);
    expect(matches.map((m) => m.participants.length)).toEqual([6]);
  });

  it('keeps a short pool waiting, MATCH_TOO_SMALL naming the minimum and when it drops', () => {
    const { matches, unmatched } = formMatches(pool(4, 5_000), [ffa], now);
    expect(matches).toEqual([]);
    const reason = unmatched[0]?.reason;
    expect(reason?.code).toBe('MATCH_TOO_SMALL');
    expect(reason?.message).toBe(
      'a match of ffa needs 6 players now; 4 within your limits in eu-west; the minimum drops in 5 s',
    );
    expect(reason?.details).toMatchObject({ minPlayers: 6, maxPlayers: 6, nextFillInMs: 5_000 });
  });

  it('forms the largest match the pool holds once the anchor has waited for a step', () => {
    const { matches } = formMatches(pool(5, 12_000), [ffa], now);
    const [match] = matches as [ProposedMatch];
    expect(match.participants.map((p) => p.team).sort()).toEqual([0, 1, 2, 3, 4]);
  });

  it('never forms under the current minimum, saying so', () => {
    const { matches, unmatched } = formMatches(pool(3, 12_000), [ffa], now);
    expect(matches).toEqual([]);
    expect(unmatched[0]?.reason.details).toMatchObject({ minPlayers: 4, nextFillInMs: 8_000 });
    expect(formMatches(pool(3, 21_000), [ffa], now).matches).toHaveLength(1);
  });

  it('forms whole teams only: five players of teams of two make a match of four', () => {
    const { matches, unmatched } = formMatches(pool(5, 12_000, 'squads'), [squads], now);
    const [match] = matches as [ProposedMatch];
    expect(match.participants.map((p) => p.team)).toEqual([0, 0, 1, 1]);
    // The youngest waits for the next match.
    expect(unmatched.map((u) => u.ticketId)).toEqual([uuid(1, 5)]);
  });

  it('refuses fill steps that raise the minimum, break teams or go with unequal teams', () => {
    const bad =
      (fill: ModeRules['fill'], extra: Partial<ModeRules> = {}) =>
      () =>
        assertModeRules([{ ...squads, fill, ...extra }]);
    expect(bad([{ afterMs: 10, minPlayers: 5 }])).toThrow(/minPlayers must be whole teams of 2/);
    expect(bad([{ afterMs: 10, minPlayers: 8 }])).toThrow(/fewer than 8 players/);
    expect(
      bad([
        { afterMs: 10, minPlayers: 4 },
        { afterMs: 20, minPlayers: 6 },
      ]),
    ).toThrow(/minPlayers must be lower than the step before/);
    expect(bad([{ afterMs: 0, minPlayers: 4 }])).toThrow(/afterMs must be a finite number > 0/);
    expect(bad([{ afterMs: 10, minPlayers: 4 }], { teamSizes: [2, 2, 2, 1] })).toThrow(
      /fill needs teams of one size/,
    );
  });
});
