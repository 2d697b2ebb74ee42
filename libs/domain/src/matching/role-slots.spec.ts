/** Role slots (issue 34 item 1): every team holds the roles its mode's role rule asks for. */
import { newCandidate, numberedUuid } from '../../../../test/support/match-candidates';
import { forEachSeed } from '../../../../test/support/seeded-random';
import type { RoleRule } from './attribute-types';
import { formMatches, type MatchCandidate, type ProposedMatch } from './match-formation';
import type { ModeRules } from './mode-rules';
import { partiesSplit } from './party-integrity';
import { RegionBucket } from './region-bucket';
import { RolePacking, unfilledSlots } from './role-slots';

const now = new Date('2026-12-01T10:00:00.000Z');
const healerRule: RoleRule = {
  kind: 'roles',
  attribute: 'roles',
  perTeam: { healer: 1 },
  optionalAfterMs: 60_000,
};
const arena: ModeRules = {
  mode: 'arena',
  teamSize: 2,
  teamCount: 2,
  widening: [{ afterMs: 0, maxRttMs: 100, ratingWindow: Number.POSITIVE_INFINITY }],
  attributeRules: [healerRule],
};

/** Arena player `n` who can play `roles`, the lower `n` the older. */
const player = (n: number, roles: string[], extra: Partial<MatchCandidate> = {}) =>
  newCandidate(n, now, (100 - n) * 100, { mode: 'arena', attributes: { roles }, ...extra });

function healersByTeam(match: ProposedMatch, pool: readonly MatchCandidate[]): number[] {
  const healers = new Array<number>(2).fill(0);
  for (const p of match.participants) {
    const roles = pool.find((c) => c.ticketId === p.ticketId)?.attributes?.['roles'];
    if (Array.isArray(roles) && roles.includes('healer'))
      healers[p.team] = (healers[p.team] ?? 0) + 1;
  }
  return healers;
}

describe('role slots', () => {
  it('fills slots by augmenting paths, one slot a player', () => {
    expect(unfilledSlots([['healer', 'tank'], ['healer']], ['healer', 'tank'])).toBe(0);
    expect(unfilledSlots([['healer'], ['healer']], ['healer', 'tank'])).toBe(1);
    expect(unfilledSlots([], ['healer'])).toBe(1);
  });

  it('keeps room in each team for its empty slots', () => {
    const packing = new RolePacking([2, 2], ['healer']);
    expect(packing.add([['dps']])).toBe(0);
    expect(packing.add([['dps']])).toBe(1);
    expect(packing.fits([['dps']])).toBe(false);
    expect(packing.add([['healer']])).toBe(0);
  });

  it('passes over players of no missing role for younger healers, one healer a team', () => {
    const pool = [
      ...[1, 2, 3, 4].map((n) => player(n, ['dps'])),
      player(5, ['healer', 'dps']),
      player(6, ['healer']),
    ];
    const { matches, unmatched } = formMatches(pool, [arena], now);
    const [match] = matches as [ProposedMatch];
    expect(match.participants.map((p) => p.ticketId).sort()).toEqual(
      [1, 2, 5, 6].map((n) => numberedUuid(1, n)).sort(),
    );
    expect(healersByTeam(match, pool)).toEqual([1, 1]);
    expect(unmatched.map((u) => u.ticketId)).toEqual([3, 4].map((n) => numberedUuid(1, n)));
  });

  it('gives way to the packing when the balanced split would put both healers on one team', () => {
    const pool = [
      player(1, ['healer'], { rating: 1500 }),
      player(2, ['healer'], { rating: 1500 }),
      player(3, ['dps'], { rating: 2000 }),
      player(4, ['dps'], { rating: 1000 }),
    ];
    const [match] = formMatches(pool, [arena], now).matches as [ProposedMatch];
    expect(healersByTeam(match, pool)).toEqual([1, 1]);
  });

  it('explains ROLE_UNFILLED while nobody can heal, then matches once the rule relaxes', () => {
    const pool = [1, 2, 3, 4].map((n) => player(n, ['dps']));
    const { matches, unmatched } = formMatches(pool, [arena], now);
    expect(matches).toEqual([]);
    const reason = unmatched[0]?.reason;
    expect(reason?.code).toBe('ROLE_UNFILLED');
    expect(reason?.message).toBe(
      "waiting for players who can fill every team's roles (1 healer a team); the role rule no longer applies in 51 s",
    );
    expect(reason?.details).toMatchObject({ roles: ['dps'], optionalInMs: 50_100 });
    const later = new Date(now.getTime() + 51_000);
    expect(formMatches(pool, [arena], later).matches).toHaveLength(1);
  });

  it('holds every slot or relaxes only after the wait, parties whole (property)', () => {
    const ROLES = ['healer', 'tank', 'dps'];
    const rules: ModeRules = {
      ...arena,
      teamSize: 3,
      attributeRules: [{ ...healerRule, perTeam: { healer: 1, tank: 1 } }],
    };
    let held = 0;
    forEachSeed(
      300,
      (random) => {
        const pool: MatchCandidate[] = [];
        let n = 0;
        for (let group = Math.floor(random() * 30); group > 0; group--) {
          const size = random() < 0.25 ? 2 : 1;
          const party = size > 1 ? { id: numberedUuid(2, 1000 + group), size } : undefined;
          const waitedMs = Math.floor(random() * 90) * 1000;
          for (let m = 0; m < size; m++) {
            n += 1;
            const roles = ROLES.filter(() => random() < 0.4);
            pool.push(
              newCandidate(n, now, waitedMs, {
                mode: 'arena',
                rating: 1000 + Math.floor(random() * 1000),
                attributes: { roles: roles.length > 0 ? roles : ['dps'] },
                ...(party ? { party } : {}),
              }),
            );
          }
        }
        return pool;
      },
      (pool) => {
        const formation = formMatches(pool, [rules], now);
        expect(partiesSplit(formation.matches, pool)).toEqual([]);
        for (const match of formation.matches) {
          const anchor = pool.find((c) => c.ticketId === match.anchorTicketId) as MatchCandidate;
          if (now.getTime() - anchor.enqueuedAt.getTime() >= 60_000) continue;
          held += 1;
          for (const team of [0, 1]) {
            const roles = match.participants
              .filter((p) => p.team === team)
              .map((p) => pool.find((c) => c.ticketId === p.ticketId)?.attributes?.['roles']);
            expect(unfilledSlots(roles as string[][], ['healer', 'tank'])).toBe(0);
          }
        }
      },
    );
    expect(held).toBeGreaterThan(50);
  });

  it('grows each team as solving the team whole again would (property)', () => {
    const ROLES = ['healer', 'tank', 'dps'];
    const slots = ['healer', 'tank', 'healer'];
    forEachSeed(
      300,
      (random) =>
        Array.from({ length: 12 }, () =>
          Array.from({ length: random() < 0.3 ? 2 : 1 }, () => ROLES.filter(() => random() < 0.35)),
        ),
      (groups) => {
        const sizes = [4, 4, 3];
        const packing = new RolePacking(sizes, slots);
        // The packing's rules over teams solved whole each time (unfilledSlots).
        const free = [...sizes];
        const teams = sizes.map((): (readonly string[])[] => []);
        const teamFor = (group: readonly (readonly string[])[]) => {
          let best = -1;
          let bestGain = -1;
          free.forEach((room, team) => {
            const members = teams[team] ?? [];
            const after = unfilledSlots([...members, ...group], slots);
            if (room - group.length < after) return;
            const gain = unfilledSlots(members, slots) - after;
            if (best < 0 || gain > bestGain || (gain === bestGain && room < (free[best] ?? 0))) {
              best = team;
              bestGain = gain;
            }
          });
          return best;
        };
        for (const group of groups) {
          const team = teamFor(group);
          expect(packing.fits(group)).toBe(team >= 0);
          if (packing.onlySlotRolesFit) expect(packing.fits([['dps']])).toBe(false);
          expect(packing.add(group)).toBe(team);
          if (team < 0) continue;
          free[team] = (free[team] ?? 0) - group.length;
          teams[team]?.push(...group);
          const open = teams.reduce((total, members) => total + unfilledSlots(members, slots), 0);
          expect(packing.openSlots).toBe(open);
        }
      },
    );
  });

  it('stops a search once too few players of a missing role are left, and skips the rest', () => {
    // 400 players of no slot role, then 300 healers: each match is two of the first and two
    // healers, so a search that walked everyone would pass over hundreds each time.
    const pool = [
      ...Array.from({ length: 400 }, (_, n) => player(n + 1, ['dps'], { rating: 1500 })),
      ...Array.from({ length: 300 }, (_, n) => player(401 + n, ['healer'], { rating: 1500 })),
    ].map((candidate, index) => ({
      ...candidate,
      enqueuedAt: new Date(now.getTime() - 50_000 + index),
    }));
    const setActive = jest.spyOn(RegionBucket.prototype, 'setActive');
    try {
      const { matches, unmatched } = formMatches(pool, [arena], now);
      expect(matches).toHaveLength(150);
      for (const match of matches) expect(healersByTeam(match, pool)).toEqual([1, 1]);
      expect(new Set(unmatched.map((u) => u.reason.code))).toEqual(new Set(['ROLE_UNFILLED']));
      expect(setActive.mock.calls.length).toBeLessThan(20 * pool.length);
    } finally {
      setActive.mockRestore();
    }
  });

  it('gives up a search at once while too few players of the missing roles are in reach', () => {
    const pool = [
      ...Array.from({ length: 200 }, (_, n) => player(n + 1, ['dps'])),
      player(201, ['healer']),
    ];
    const fits = jest.spyOn(RolePacking.prototype, 'fits');
    try {
      const { matches, unmatched } = formMatches(pool, [arena], now);
      expect(matches).toEqual([]);
      expect(unmatched.map((u) => u.reason.code)).toEqual(pool.map(() => 'ROLE_UNFILLED'));
      // One healer for two teams' slots: not a single partner is looked at.
      expect(fits).not.toHaveBeenCalled();
    } finally {
      fits.mockRestore();
    }
  });
});
