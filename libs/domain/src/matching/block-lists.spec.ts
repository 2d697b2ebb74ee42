import { mulberry32 } from '../../../../test/support/seeded-random';
import {
  newCandidate,
  numberedUuid,
  ticketsOfMatches,
  newBackfillNeed,
} from '../../../../test/support/match-candidates';
import { selectBackfill } from './backfill-selection';
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

  it.each(['blockedPlayerIds', 'avoidedPlayerIds'])(
    'refuses a candidate whose %s is not a list of player ids',
    (list) => {
      const bad = { ...candidate(1), [list]: ['nope'] };
      const formation = formMatches([bad, candidate(2)], [duel], now);
      expect(formation.unmatched.find((u) => u.ticketId === uuid(1, 1))?.reason.code).toBe(
        'INVALID_CANDIDATE',
      );
    },
  );

  it('never backfills a player into a match with one it blocked or that blocked it', () => {
    const need = newBackfillNeed(now, { excludedPlayerIds: [uuid(2, 9)] });
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

/*
 * Avoid lists: an avoided pair shares a match only when the anchor's search fills none without it
 * (docs/decisions/2026-12-07-avoid-lists.md); block lists still hold always.
 */

interface Lists {
  avoids?: number[];
  blocks?: number[];
}

function listed(n: number, lists: Lists = {}, waitedMs = 10_000 - n): MatchCandidate {
  const extra: Partial<MatchCandidate> = {};
  const { avoids = [], blocks = [] } = lists;
  if (avoids.length > 0) Object.assign(extra, { avoidedPlayerIds: avoids.map((a) => uuid(2, a)) });
  if (blocks.length > 0) Object.assign(extra, { blockedPlayerIds: blocks.map((b) => uuid(2, b)) });
  return newCandidate(n, now, waitedMs, extra);
}

describe('avoid lists in a pass', () => {
  it('passes over an avoided player for the next oldest when one fits, in either direction', () => {
    // 1 avoids 2: 1 meets 3, 2 meets 4. 5 is avoided by 6 (only 6's list names it): 5 meets 7.
    const formation = formMatches(
      [
        listed(1, { avoids: [2] }),
        listed(2),
        listed(3),
        listed(4),
        listed(5),
        listed(6, { avoids: [5] }),
        listed(7),
      ],
      [duel],
      now,
    );
    expect(ticketsOfMatches(formation)).toEqual([
      [uuid(1, 1), uuid(1, 3)],
      [uuid(1, 2), uuid(1, 4)],
      [uuid(1, 5), uuid(1, 7)],
    ]);
  });

  it('matches an avoided pair when nothing else fits, where a blocked pair stays apart', () => {
    const avoided = formMatches([listed(1, { avoids: [2] }), listed(2)], [duel], now);
    expect(ticketsOfMatches(avoided)).toEqual([[uuid(1, 1), uuid(1, 2)]]);
    const blocked = formMatches([listed(1, { blocks: [2] }), listed(2)], [duel], now);
    expect(blocked.matches).toEqual([]);
  });

  it('checks a partner against everyone already taken, and falls back only when it must', () => {
    // 2 avoids 3: the 2v2 takes 1, 2, 4, 5 over 3. With 5 gone, only 1-4 fill it: 3 comes in.
    const five = [1, 2, 3, 4, 5].map((n) => listed(n, n === 2 ? { avoids: [3] } : {}));
    expect(ticketsOfMatches(formMatches(five, [squad], now))).toEqual([
      [uuid(1, 1), uuid(1, 2), uuid(1, 4), uuid(1, 5)],
    ]);
    expect(ticketsOfMatches(formMatches(five.slice(0, 4), [squad], now))).toEqual([
      [uuid(1, 1), uuid(1, 2), uuid(1, 3), uuid(1, 4)],
    ]);
  });

  it('keeps a blocked pair apart in the fallback that lets an avoided pair in', () => {
    // 1 avoids 2 and blocks 3: only 2 is left to meet.
    const formation = formMatches(
      [listed(1, { avoids: [2], blocks: [3] }), listed(2), listed(3)],
      [duel],
      now,
    );
    expect(ticketsOfMatches(formation)).toEqual([[uuid(1, 1), uuid(1, 2)]]);
  });

  it('backfills an avoided player only when no other candidate fills the places', () => {
    const need = newBackfillNeed(now, { excludedPlayerIds: [uuid(2, 9)] });
    const avoiding = listed(1, { avoids: [9] });
    const both = selectBackfill([need], [avoiding, listed(2)], duel, now);
    expect(both.picks.map((pick) => pick.candidates.map((c) => c.ticketId))).toEqual([
      [uuid(1, 2)],
    ]);
    const alone = selectBackfill([need], [avoiding], duel, now);
    expect(alone.picks.map((pick) => pick.candidates.map((c) => c.ticketId))).toEqual([
      [uuid(1, 1)],
    ]);
  });

  it('on random duel pools matches an avoided pair only when the anchor had no other partner', () => {
    // In a duel where everyone is within everyone's limits, "nothing else fits" is checkable from
    // outside: every ticket still unmatched when the match formed is avoided by, or blocked with, the anchor.
    const random = mulberry32(3434);
    let avoidedMatches = 0;
    let cleanMatches = 0;
    for (let iteration = 0; iteration < 300; iteration++) {
      const count = 2 + Math.floor(random() * 20);
      const lists = (n: number) =>
        Array.from({ length: count }, (_, i) => i + 1).filter((o) => o !== n && random() < 0.15);
      const candidates = Array.from({ length: count }, (_, i) =>
        listed(
          i + 1,
          { avoids: lists(i + 1), blocks: lists(i + 1) },
          Math.floor(random() * 60_000),
        ),
      );
      const byPlayer = new Map(candidates.map((c) => [c.playerId, c]));
      const inList = (a: string, b: string, list: 'avoidedPlayerIds' | 'blockedPlayerIds') =>
        (byPlayer.get(a)?.[list] ?? []).includes(b) || (byPlayer.get(b)?.[list] ?? []).includes(a);
      const formation = formMatches(candidates, [duel], now);
      const available = new Set(candidates.map((c) => c.playerId));
      for (const match of formation.matches) {
        const [a, b] = match.participants.map((p) => p.playerId) as [string, string];
        expect(inList(a, b, 'blockedPlayerIds')).toBe(false);
        available.delete(a);
        available.delete(b);
        if (!inList(a, b, 'avoidedPlayerIds')) {
          cleanMatches += 1;
          continue;
        }
        avoidedMatches += 1;
        const anchor = candidates.find((c) => c.ticketId === match.anchorTicketId)!.playerId;
        for (const other of available) {
          expect(
            inList(anchor, other, 'avoidedPlayerIds') || inList(anchor, other, 'blockedPlayerIds'),
          ).toBe(true);
        }
      }
    }
    expect(avoidedMatches).toBeGreaterThan(50);
    expect(cleanMatches).toBeGreaterThan(500);
  });
});
