import { mulberry32 } from '../../../../test/support/seeded-random';
import {
  newCandidate,
  numberedUuid,
  ticketsOfMatches,
} from '../../../../test/support/match-candidates';
import { selectBackfill, type BackfillNeed } from './backfill-selection';
import { formMatches, type MatchCandidate } from './match-formation';
import type { ModeRules } from './mode-rules';

/* Issue 34 item 2: a player is never matched with one it blocked, or that blocked it. */

const now = new Date('2026-12-01T10:00:00.000Z');
const uuid = numberedUuid;
const widening = [{ afterMs: 0, maxRttMs: 100, ratingWindow: 500 }];
const duel: ModeRules = { mode: 'duel', teamSize: 1, teamCount: 2, widening };
const squad: ModeRules = { mode: 'duel', teamSize: 2, teamCount: 2, widening };

function candidate(n: number, blocks: number[] = [], waitedMs = 10_000 - n): MatchCandidate {
  const blockedPlayerIds = blocks.map((b) => uuid(2, b));
  return newCandidate(n, now, waitedMs, blocks.length > 0 ? { blockedPlayerIds } : {});
}

describe('block lists in a pass', () => {
  it('passes over a blocked player for the next oldest, in either direction', () => {
    // 1 blocked 2: 1 meets 3. 4 is blocked by 5 (only 5's list names it): 4 meets 6.
    const formation = formMatches(
      [
        candidate(1, [2]),
        candidate(2),
        candidate(3),
        candidate(4),
        candidate(5, [4]),
        candidate(6),
      ],
      [duel],
      now,
    );
    expect(ticketsOfMatches(formation)).toEqual([
      [uuid(1, 1), uuid(1, 3)],
      [uuid(1, 2), uuid(1, 4)],
      [uuid(1, 5), uuid(1, 6)],
    ]);
  });

  it('checks a partner against everyone already taken, not only the anchor', () => {
    // 2 and 3 block each other: the 2v2 takes 1, 2, then passes over 3 for 4 and 5.
    const formation = formMatches(
      [candidate(1), candidate(2, [3]), candidate(3), candidate(4), candidate(5)],
      [squad],
      now,
    );
    expect(ticketsOfMatches(formation)).toEqual([[uuid(1, 1), uuid(1, 2), uuid(1, 4), uuid(1, 5)]]);
  });

  it('leaves a pair unmatched rather than together, and says block lists are why', () => {
    const formation = formMatches([candidate(1, [2]), candidate(2)], [duel], now);
    expect(formation.matches).toEqual([]);
    expect(formation.unmatched.map((u) => u.reason.code)).toEqual([
      'BLOCKED_PLAYERS',
      'BLOCKED_PLAYERS',
    ]);
    expect(formation.unmatched[0]?.reason.message).toBe(
      'players within your limits are searching, but block lists keep them out of a match with you',
    );
  });

  it('says block lists keep a ticket waiting when the players it could meet blocked each other', () => {
    // 1 could play 2 or 3, but the trio needs all three and 2 blocked 3.
    const trio: ModeRules = { ...duel, teamCount: 3 };
    const formation = formMatches([candidate(1), candidate(2, [3]), candidate(3)], [trio], now);
    expect(formation.unmatched.map((u) => u.reason.code)).toEqual([
      'BLOCKED_PLAYERS',
      'BLOCKED_PLAYERS',
      'BLOCKED_PLAYERS',
    ]);
    // Without the block: one more player short, as ever.
    const short = formMatches([candidate(1), candidate(2)], [trio], now);
    expect(short.unmatched.map((u) => u.reason.code)).toEqual([
      'NOT_ENOUGH_PLAYERS',
      'NOT_ENOUGH_PLAYERS',
    ]);
  });

  it('refuses a candidate whose block list is not a list of player ids', () => {
    const bad = { ...candidate(1), blockedPlayerIds: ['nope'] };
    const formation = formMatches([bad, candidate(2)], [duel], now);
    expect(formation.unmatched.find((u) => u.ticketId === uuid(1, 1))?.reason.code).toBe(
      'INVALID_CANDIDATE',
    );
  });

  it('never backfills a player into a match with one it blocked or that blocked it', () => {
    const need: BackfillNeed = {
      requestId: 'r',
      matchId: 'm',
      team: 0,
      slots: 1,
      serverRegion: 'eu-west',
      teamRating: 1500,
      attributes: {},
      excludedPlayerIds: [uuid(2, 9)],
      createdAt: now,
    };
    const { picks } = selectBackfill([need], [candidate(1, [9]), candidate(2)], duel, now);
    expect(picks.map((pick) => pick.candidates.map((c) => c.ticketId))).toEqual([[uuid(1, 2)]]);
  });

  it('on random pools of several team shapes never matches a blocked pair', () => {
    const random = mulberry32(3535);
    let matches = 0;
    let blockedPairsInPool = 0;
    for (let iteration = 0; iteration < 300; iteration++) {
      const count = Math.floor(random() * 40);
      const rules: ModeRules = {
        ...duel,
        teamSize: 1 + Math.floor(random() * 3),
        teamCount: 2,
      };
      const candidates = Array.from({ length: count }, (_, index) => {
        const blocks = Array.from({ length: count }, (__, other) => other + 1).filter(
          (other) => other !== index + 1 && random() < 0.08,
        );
        blockedPairsInPool += blocks.length;
        return candidate(index + 1, blocks, Math.floor(random() * 60_000));
      });
      const byPlayer = new Map(candidates.map((c) => [c.playerId, c]));
      const formation = formMatches(candidates, [rules], now);
      for (const match of formation.matches) {
        const players = match.participants.map((p) => p.playerId);
        for (const player of players) {
          for (const other of players) {
            expect(byPlayer.get(player)?.blockedPlayerIds ?? []).not.toContain(other);
          }
        }
      }
      matches += formation.matches.length;
    }
    expect(blockedPairsInPool).toBeGreaterThan(1_000);
    expect(matches).toBeGreaterThan(300);
  });
});
