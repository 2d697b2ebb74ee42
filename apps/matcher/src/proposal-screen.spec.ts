import {
  formMatches,
  type MatchCandidate,
  type ModeRules,
  type ProposedMatch,
} from '@matchplane/domain';
import { screenProposals } from './proposal-screen';

const now = new Date('2026-12-01T10:00:00.000Z');
const duel: ModeRules = {
  mode: 'duel',
  teamSize: 1,
  teamCount: 2,
  widening: [{ afterMs: 0, maxRttMs: 100, ratingWindow: 500 }],
};
const uuid = (kind: number, n: number) =>
  `${kind}0000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
const candidate = (n: number, rtt: Record<string, number> = { eu: 10 }): MatchCandidate => ({
  ticketId: uuid(1, n),
  playerId: uuid(2, n),
  mode: 'duel',
  rating: 1500,
  predictedRtt: rtt,
  enqueuedAt: new Date(now.getTime() - n * 1_000),
});

describe(screenProposals.name, () => {
  const pool = [1, 2, 3, 4].map((n) => candidate(n, n === 4 ? { eu: 10, us: 5 } : { eu: 10 }));
  const byId = new Map(pool.map((c) => [c.ticketId, c]));
  const formed = formMatches(pool, [duel], now).matches;
  const [first, second] = formed as [ProposedMatch, ProposedMatch];

  it('accepts what formMatches proposes', () => {
    expect(screenProposals(formed, duel, byId, now)).toEqual({ accepted: formed, rejected: [] });
  });

  it.each<[string, (m: ProposedMatch) => ProposedMatch, RegExp]>([
    ['another mode', (m) => ({ ...m, mode: 'squad' }), /^mode squad in a pass of duel$/],
    [
      'a missing player',
      (m) => ({ ...m, participants: m.participants.slice(1) }),
      /^1 participants, duel needs 2$/,
    ],
    [
      'an unbalanced roster',
      (m) => ({ ...m, participants: m.participants.map((p) => ({ ...p, team: 0 })) }),
      /^teams of 2\/0 players/,
    ],
    [
      'a ticket that is not a candidate',
      (m) => ({
        ...m,
        participants: [m.participants[0]!, { ...m.participants[1]!, ticketId: uuid(1, 99) }],
      }),
      /is not a candidate of this pass$/,
    ],
    [
      "another player's ticket",
      (m) => ({
        ...m,
        participants: [m.participants[0]!, { ...m.participants[1]!, playerId: uuid(2, 99) }],
      }),
      /is not player .*'s$/,
    ],
    [
      'a region not every participant measured',
      (m) => ({ ...m, region: 'us' }),
      /has not measured us$/,
    ],
  ])('rejects %s', (_, corrupt, problem) => {
    const { accepted, rejected } = screenProposals([corrupt(first), second], duel, byId, now);
    expect(accepted).toEqual([second]);
    expect(rejected).toEqual([
      { proposal: expect.anything(), problem: expect.stringMatching(problem) },
    ]);
  });

  it('rejects a proposal reusing a ticket of one accepted before it', () => {
    const reuse = { ...second, participants: [first.participants[0]!, second.participants[1]!] };
    const { accepted, rejected } = screenProposals([first, reuse], duel, byId, now);
    expect(accepted).toEqual([first]);
    expect(rejected[0]?.problem).toMatch(/proposed twice$/);
  });

  it('rejects a match whose participants differ on an equal attribute rule (a custom function cannot mix builds)', () => {
    const versioned: ModeRules = {
      ...duel,
      attributeRules: [{ kind: 'equal', attribute: 'buildVersion' }],
    };
    const builds = new Map(
      [...byId].map(([id, c], index) => [
        id,
        { ...c, attributes: { buildVersion: index % 2 === 0 ? '1.4.0' : '1.5.0' } },
      ]),
    );
    // formMatches without the rule paired across builds; with it, the screen refuses.
    const mixed = formed.filter(
      (m) =>
        m.participants.some((p) => builds.get(p.ticketId)?.attributes.buildVersion === '1.4.0') &&
        m.participants.some((p) => builds.get(p.ticketId)?.attributes.buildVersion === '1.5.0'),
    );
    expect(mixed.length).toBeGreaterThan(0);
    const { rejected } = screenProposals(mixed, versioned, builds, now);
    expect(rejected.map((r) => r.problem)).toEqual(
      mixed.map(() => 'participants differ on buildVersion, which must be equal'),
    );
    const same = new Map(
      [...builds].map(([id, c]) => [id, { ...c, attributes: { buildVersion: '1' } }]),
    );
    expect(screenProposals(formed, versioned, same, now).rejected).toEqual([]);
  });
});

describe(`${screenProposals.name} with intersect and optional rules`, () => {
  const crossplay: ModeRules = {
    ...duel,
    attributeRules: [
      { kind: 'intersect', attribute: 'platforms', optionalAfterMs: 60_000 },
      { kind: 'equal', attribute: 'build', optionalAfterMs: 30_000 },
    ],
  };
  const a = { ...candidate(1), attributes: { platforms: ['pc'], build: '1.4' } };
  const b = { ...candidate(2), attributes: { platforms: ['ps', 'xbox'], build: '1.4' } };
  const c = { ...candidate(3), attributes: { platforms: ['pc', 'ps'], build: '1.5' } };
  const byTicket = new Map([a, b, c].map((x) => [x.ticketId, x]));
  const match = (first: MatchCandidate, second: MatchCandidate): ProposedMatch => ({
    mode: 'duel',
    region: 'eu',
    participants: [first, second].map((x, team) => ({
      ticketId: x.ticketId,
      playerId: x.playerId,
      team,
      rating: x.rating,
      rttMs: 10,
    })),
    worstRttMs: 10,
    sumRttMs: 20,
    anchorTicketId: second.ticketId,
    maxRttMs: 100,
    ratingWindow: 500,
  });

  it('rejects players who share no value of a set, until the oldest has waited past the rule', () => {
    const disjoint = match(a, b);
    expect(screenProposals([disjoint], crossplay, byTicket, now).rejected).toEqual([
      { proposal: disjoint, problem: 'participants share no value of platforms' },
    ]);
    const later = new Date(now.getTime() + 60_000);
    expect(screenProposals([disjoint], crossplay, byTicket, later).accepted).toEqual([disjoint]);
  });

  it('rejects other builds under an optional equal rule only while it is in force', () => {
    const builds = match(b, c);
    expect(
      screenProposals([builds], crossplay, byTicket, now).rejected.map((r) => r.problem),
    ).toEqual(['participants differ on build, which must be equal']);
    const later = new Date(now.getTime() + 30_000);
    expect(screenProposals([builds], crossplay, byTicket, later).accepted).toEqual([builds]);
  });
});

describe(`${screenProposals.name} with parties`, () => {
  const pair: ModeRules = { ...duel, mode: 'pair', teamSize: 2 };
  const party = { id: uuid(3, 1), size: 2 };
  const pool = [1, 2, 3, 4, 5, 6].map((n) => ({
    ...candidate(n),
    mode: 'pair',
    // The oldest two (largest n): the party is in the first match.
    ...(n >= 5 ? { party } : {}),
  }));
  const byId = new Map(pool.map((c) => [c.ticketId, c]));
  const [formed] = formMatches(pool, [pair], now).matches as [ProposedMatch];
  const partyTeam = formed.participants.find((p) => p.partyId === party.id)?.team;

  it('accepts a match that keeps the party whole on one team', () => {
    expect(formed.participants.filter((p) => p.partyId === party.id)).toHaveLength(2);
    expect(screenProposals([formed], pair, byId, now).accepted).toEqual([formed]);
  });

  it('rejects a match that splits the party across teams', () => {
    // A party member and a solo of the other team trade places: still 2 and 2, the party split.
    const solo = formed.participants.find((p) => p.team !== partyTeam);
    const split = formed.participants.map((p) =>
      p.ticketId === uuid(1, 6)
        ? { ...p, team: solo?.team ?? 0 }
        : p.ticketId === solo?.ticketId
          ? { ...p, team: partyTeam ?? 0 }
          : p,
    );
    const { rejected } = screenProposals([{ ...formed, participants: split }], pair, byId, now);
    expect(rejected[0]?.problem).toMatch(/is split over 2 teams$/);
  });

  it('rejects a match holding only part of a party', () => {
    const partial = formed.participants.map((p) =>
      p.ticketId === uuid(1, 5)
        ? { ...p, ticketId: uuid(1, 1), playerId: uuid(2, 1), partyId: undefined }
        : p,
    );
    const { rejected } = screenProposals([{ ...formed, participants: partial }], pair, byId, now);
    expect(rejected[0]?.problem).toMatch(/without 1 of its 2 players$/);
  });
});

describe(`${screenProposals.name} with teams of different sizes`, () => {
  const hunt: ModeRules = { ...duel, mode: 'hunt', teamSize: 2, teamSizes: [2, 1] };
  const pool = [1, 2, 3].map((n) => ({ ...candidate(n), mode: 'hunt' }));
  const byId = new Map(pool.map((c) => [c.ticketId, c]));
  const formed = formMatches(pool, [hunt], now).matches;

  it('accepts each team at its own size and refuses the teams swapped', () => {
    expect(formed).toHaveLength(1);
    expect(screenProposals(formed, hunt, byId, now).accepted).toEqual(formed);
    const swapped = formed.map((m) => ({
      ...m,
      participants: m.participants.map((p) => ({ ...p, team: 1 - p.team })),
    }));
    expect(screenProposals(swapped, hunt, byId, now).rejected[0]?.problem).toBe(
      'teams of 1/2 players, hunt needs 2/1',
    );
  });
});

describe(`${screenProposals.name} with fill steps`, () => {
  const br: ModeRules = {
    ...duel,
    mode: 'br',
    teamCount: 4,
    fill: [{ afterMs: 10_000, minPlayers: 3 }],
  };
  // Candidates n waited n s: the oldest of 1-3 waited 3 s, of 11-13 13 s.
  const pool = [1, 2, 3, 11, 12, 13].map((n) => ({ ...candidate(n), mode: 'br' }));
  const byId = new Map(pool.map((c) => [c.ticketId, c]));
  const shortOf = (ns: number[]): ProposedMatch => ({
    mode: 'br',
    region: 'eu',
    participants: ns.map((n, team) => ({
      ticketId: uuid(1, n),
      playerId: uuid(2, n),
      team,
      rating: 1500,
      rttMs: 10,
    })),
    worstRttMs: 10,
    sumRttMs: 30,
    anchorTicketId: uuid(1, ns[0] ?? 0),
    maxRttMs: 100,
    ratingWindow: 500,
  });

  it('accepts a short match once its oldest participant waited for the step, not before', () => {
    const late = shortOf([13, 12, 11]);
    expect(screenProposals([late], br, byId, now).accepted).toEqual([late]);
    expect(screenProposals([shortOf([3, 2, 1])], br, byId, now).rejected[0]?.problem).toBe(
      '3 participants, br needs 4',
    );
  });
});

describe(`${screenProposals.name} with role slots`, () => {
  const arena: ModeRules = {
    ...duel,
    mode: 'arena',
    teamSize: 2,
    attributeRules: [{ kind: 'roles', attribute: 'roles', perTeam: { healer: 1 } }],
  };
  const pool = [1, 2, 3, 4].map((n) => ({
    ...candidate(n),
    mode: 'arena',
    attributes: { roles: n <= 2 ? ['healer'] : ['dps'] },
  }));
  const byId = new Map(pool.map((c) => [c.ticketId, c]));
  const formed = formMatches(pool, [arena], now).matches;

  it('accepts a healer on each team and refuses both healers on one', () => {
    expect(screenProposals(formed, arena, byId, now).accepted).toEqual(formed);
    const stacked = formed.map((m) => ({
      ...m,
      participants: m.participants.map((p) => ({
        ...p,
        team: p.ticketId === uuid(1, 1) || p.ticketId === uuid(1, 2) ? 0 : 1,
      })),
    }));
    expect(screenProposals(stacked, arena, byId, now).rejected[0]?.problem).toBe(
      'a team lacks the roles of roles every team needs',
    );
  });
});
