import { randomUUID } from 'node:crypto';
import { selectBackfill, type BackfillNeed } from './backfill-selection';
import type { MatchCandidate } from './match-formation';
import type { ModeRules } from './mode-rules';

const now = new Date('2026-12-03T18:00:00.000Z');
const rules: ModeRules = {
  mode: 'squad',
  teamSize: 2,
  teamCount: 2,
  widening: [
    { afterMs: 0, maxRttMs: 80, ratingWindow: 100 },
    { afterMs: 10_000, maxRttMs: 150, ratingWindow: 400 },
  ],
  attributeRules: [{ kind: 'equal', attribute: 'build' }],
};

function need(overrides: Partial<BackfillNeed> = {}): BackfillNeed {
  return {
    requestId: randomUUID(),
    matchId: randomUUID(),
    team: 1,
    slots: 1,
    serverRegion: 'eu-west',
    teamRating: 1500,
    attributes: { build: '1.2' },
    excludedPlayerIds: [],
    createdAt: now,
    ...overrides,
  };
}

let clock = 0;
function candidate(overrides: Partial<MatchCandidate> = {}): MatchCandidate {
  clock += 1;
  return {
    ticketId: randomUUID(),
    playerId: randomUUID(),
    mode: 'squad',
    rating: 1500,
    predictedRtt: { 'eu-west': 40 },
    enqueuedAt: new Date(now.getTime() - 60_000 + clock),
    attributes: { build: '1.2' },
    ...overrides,
  };
}

describe(selectBackfill.name, () => {
  it('fills a request with the oldest candidates that fit, and leaves the rest to matching', () => {
    const far = candidate({ predictedRtt: { 'eu-west': 120 } });
    const otherBuild = candidate({ attributes: { build: '1.1' } });
    const weaker = candidate({ rating: 1000 });
    const fits = candidate();
    const later = candidate();
    const { picks, remaining } = selectBackfill(
      [need()],
      [later, far, otherBuild, weaker, fits],
      rules,
      now,
    );
    expect(picks).toHaveLength(1);
    expect(picks[0]!.candidates.map((c) => c.ticketId)).toEqual([fits.ticketId]);
    expect(remaining.map((c) => c.ticketId)).not.toContain(fits.ticketId);
    expect(remaining).toHaveLength(4);
  });

  it("widens with the request's age, as a waiting ticket's limits do", () => {
    const far = candidate({ predictedRtt: { 'eu-west': 120 } });
    const old = need({ createdAt: new Date(now.getTime() - 15_000) });
    expect(selectBackfill([need()], [far], rules, now).picks).toHaveLength(0);
    expect(selectBackfill([old], [far], rules, now).picks[0]!.candidates).toEqual([far]);
  });

  it('fills whole or not at all, takes a party only whole and when it fits, never a player twice', () => {
    const partyId = randomUUID();
    const pair = [1, 2].map(() => candidate({ party: { id: partyId, size: 2 } }));
    const solo = candidate();
    expect(
      selectBackfill([need({ slots: 3 })], [solo, ...pair.slice(0, 1)], rules, now).picks,
    ).toEqual([]);
    const two = selectBackfill([need({ slots: 2 })], [...pair, solo], rules, now);
    expect(two.picks[0]!.candidates.map((c) => c.ticketId).sort()).toEqual(
      pair.map((c) => c.ticketId).sort(),
    );
    const one = selectBackfill([need({ slots: 1 })], [...pair, solo], rules, now);
    expect(one.picks[0]!.candidates).toEqual([solo]);
    const first = need({ createdAt: new Date(now.getTime() - 1) });
    const both = selectBackfill([need(), first], [solo], rules, now);
    expect(both.picks.map((p) => p.need.requestId)).toEqual([first.requestId]);
    const excluded = selectBackfill(
      [need({ excludedPlayerIds: [solo.playerId] })],
      [solo],
      rules,
      now,
    );
    expect(excluded.picks).toEqual([]);
  });

  it("covers the team's open roles: a younger healer over an older dps, until the rule relaxes", () => {
    const arena: ModeRules = {
      ...rules,
      attributeRules: [
        { kind: 'roles', attribute: 'roles', perTeam: { healer: 1 }, optionalAfterMs: 30_000 },
      ],
    };
    const dps = candidate({ attributes: { roles: ['dps'] } });
    const healer = candidate({ attributes: { roles: ['healer', 'dps'] } });
    const request = need({ attributes: {}, openRoles: ['healer'] });
    const { picks } = selectBackfill([request], [dps, healer], arena, now);
    expect(picks[0]?.candidates).toEqual([healer]);
    // Nobody open: the oldest fits; nobody who heals: the request waits.
    expect(
      selectBackfill([need({ attributes: {}, openRoles: [] })], [dps, healer], arena, now).picks[0]
        ?.candidates,
    ).toEqual([dps]);
    expect(selectBackfill([request], [dps], arena, now).picks).toEqual([]);
    // Past the rule's wait for the request, the oldest fits again.
    const later = new Date(now.getTime() + 30_000);
    expect(selectBackfill([request], [dps, healer], arena, later).picks[0]?.candidates).toEqual([
      dps,
    ]);
  });
});
