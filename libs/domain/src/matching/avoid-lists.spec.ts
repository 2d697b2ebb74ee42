import { mulberry32 } from '../../../../test/support/seeded-random';
import {
  newCandidate,
  numberedUuid,
  ticketsOfMatches,
} from '../../../../test/support/match-candidates';
import { selectBackfill, type BackfillNeed } from './backfill-selection';
import { formMatches, type MatchCandidate } from './match-formation';
import type { ModeRules } from './mode-rules';

/*
 * Issue 34 item 2, avoid lists: an avoided pair shares a match only when the anchor's search fills
 * none without it (docs/decisions/2026-12-07-avoid-lists.md); block lists still hold always.
 */

const now = new Date('2026-12-01T10:00:00.000Z');
const uuid = numberedUuid;
const widening = [{ afterMs: 0, maxRttMs: 100, ratingWindow: 500 }];
const duel: ModeRules = { mode: 'duel', teamSize: 1, teamCount: 2, widening };
const squad: ModeRules = { mode: 'duel', teamSize: 2, teamCount: 2, widening };

interface Lists {
  avoids?: number[];
  blocks?: number[];
}

function candidate(n: number, lists: Lists = {}, waitedMs = 10_000 - n): MatchCandidate {
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
        candidate(1, { avoids: [2] }),
        candidate(2),
        candidate(3),
        candidate(4),
        candidate(5),
        candidate(6, { avoids: [5] }),
        candidate(7),
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
    const avoided = formMatches([candidate(1, { avoids: [2] }), candidate(2)], [duel], now);
    expect(ticketsOfMatches(avoided)).toEqual([[uuid(1, 1), uuid(1, 2)]]);
    const blocked = formMatches([candidate(1, { blocks: [2] }), candidate(2)], [duel], now);
    expect(blocked.matches).toEqual([]);
  });

  it('checks a partner against everyone already taken, and falls back only when it must', () => {
    // 2 avoids 3: the 2v2 takes 1, 2, 4, 5 over 3. With 5 gone, only 1-4 fill it: 3 comes in.
    const five = [1, 2, 3, 4, 5].map((n) => candidate(n, n === 2 ? { avoids: [3] } : {}));
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
      [candidate(1, { avoids: [2], blocks: [3] }), candidate(2), candidate(3)],
      [duel],
      now,
    );
    expect(ticketsOfMatches(formation)).toEqual([[uuid(1, 1), uuid(1, 2)]]);
  });

  it('refuses a candidate whose avoid list is not a list of player ids', () => {
    const bad = { ...candidate(1), avoidedPlayerIds: ['nope'] };
    const formation = formMatches([bad, candidate(2)], [duel], now);
    expect(formation.unmatched.find((u) => u.ticketId === uuid(1, 1))?.reason.code).toBe(
      'INVALID_CANDIDATE',
    );
  });

  it('backfills an avoided player only when no other candidate fills the places', () => {
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
    const avoiding = candidate(1, { avoids: [9] });
    const both = selectBackfill([need], [avoiding, candidate(2)], duel, now);
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
        candidate(
          i + 1,
          { avoids: lists(i + 1), blocks: lists(i + 1) },
          Math.floor(random() * 60_000),
        ),
      );
      const byPlayer = new Map(candidates.map((c) => [c.playerId, c]));
      const listed = (a: string, b: string, list: 'avoidedPlayerIds' | 'blockedPlayerIds') =>
        (byPlayer.get(a)?.[list] ?? []).includes(b) || (byPlayer.get(b)?.[list] ?? []).includes(a);
      const formation = formMatches(candidates, [duel], now);
      const available = new Set(candidates.map((c) => c.playerId));
      for (const match of formation.matches) {
        const [a, b] = match.participants.map((p) => p.playerId) as [string, string];
        expect(listed(a, b, 'blockedPlayerIds')).toBe(false);
        available.delete(a);
        available.delete(b);
        if (!listed(a, b, 'avoidedPlayerIds')) {
          cleanMatches += 1;
          continue;
        }
        avoidedMatches += 1;
        const anchor = candidates.find((c) => c.ticketId === match.anchorTicketId)!.playerId;
        for (const other of available) {
          expect(
            listed(anchor, other, 'avoidedPlayerIds') || listed(anchor, other, 'blockedPlayerIds'),
          ).toBe(true);
        }
      }
    }
    expect(avoidedMatches).toBeGreaterThan(50);
    expect(cleanMatches).toBeGreaterThan(500);
  });
});
