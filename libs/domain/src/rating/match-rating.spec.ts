import { rateMatch, type RatedParticipant } from './match-rating';
import {
  DEFAULT_SKILL,
  displayRating,
  DISPLAY_RATING_BASE,
  skillAtDisplayRating,
  skillProblem,
} from './skill-rating';

const ids = ['a', 'b', 'c', 'd'].map((letter) => `00000000-0000-4000-8000-00000000000${letter}`);

function fourPlayers(overrides: Partial<RatedParticipant>[] = []): RatedParticipant[] {
  return ids.map((playerId, index) => ({
    playerId,
    team: index % 2,
    skill: DEFAULT_SKILL,
    connected: true,
    ...overrides[index],
  }));
}

function changeOf(changes: ReturnType<typeof rateMatch>, playerId: string) {
  const change = changes.find((c) => c.playerId === playerId);
  if (!change) throw new Error(`no change for ${playerId}`);
  return change;
}

describe(rateMatch.name, () => {
  describe('an abandoner', () => {
    const [a, b, c, d] = ids as [string, string, string, string];

    it('loses, even when its team wins, and its team mates are rated as if it never played', () => {
      // a (team 0) abandoned; team 0 (with c) wins.
      const changes = rateMatch(fourPlayers([{ abandoned: true }]), {
        outcome: 'COMPLETED',
        winningTeam: 0,
      });
      expect(changeOf(changes, a).after.mu).toBeLessThan(changeOf(changes, a).before.mu);
      expect(changeOf(changes, c).after.mu).toBeGreaterThan(DEFAULT_SKILL.mu);
      const withoutA = rateMatch(fourPlayers().slice(1), { outcome: 'COMPLETED', winningTeam: 0 });
      for (const playerId of [b, c, d])
        expect(changeOf(changes, playerId)).toEqual(changeOf(withoutA, playerId));
    });

    it('loses in a draw too, and in a duel its opponent, alone on the field, is not rated', () => {
      const draw = rateMatch(fourPlayers([{}, { abandoned: true }]), { outcome: 'COMPLETED' });
      expect(changeOf(draw, b).after.mu).toBeLessThan(DEFAULT_SKILL.mu);
      const duel = fourPlayers([{ abandoned: true }]).slice(0, 2);
      const changes = rateMatch(duel, { outcome: 'COMPLETED', winningTeam: 1 });
      expect(changes.map((change) => change.playerId)).toEqual([a]);
      expect(changeOf(changes, a).after.mu).toBeLessThan(DEFAULT_SKILL.mu);
    });

    it('is not rated on a FAILED result, like everyone else', () => {
      expect(rateMatch(fourPlayers([{ abandoned: true }]), { outcome: 'FAILED' })).toEqual([]);
    });
  });

  it('moves winners up and losers down, and narrows everyone’s uncertainty', () => {
    const changes = rateMatch(fourPlayers(), { outcome: 'COMPLETED', winningTeam: 1 });
    expect(changes).toHaveLength(4);
    for (const [index, playerId] of ids.entries()) {
      const { before, after } = changeOf(changes, playerId);
      if (index % 2 === 1) expect(after.mu).toBeGreaterThan(before.mu);
      else expect(after.mu).toBeLessThan(before.mu);
      expect(after.sigma).toBeLessThan(before.sigma);
      if (index % 2 === 1) expect(displayRating(after)).toBeGreaterThan(DISPLAY_RATING_BASE);
      else expect(displayRating(after)).toBeLessThan(DISPLAY_RATING_BASE);
    }
  });

  it('rates an upset more than an expected win', () => {
    const strong = { mu: 35, sigma: 3 };
    const weak = { mu: 20, sigma: 3 };
    const duel = (winner: 0 | 1) =>
      rateMatch(
        [
          { playerId: ids[0]!, team: 0, skill: strong, connected: true },
          { playerId: ids[1]!, team: 1, skill: weak, connected: true },
        ],
        { outcome: 'COMPLETED', winningTeam: winner },
      );
    const expected = changeOf(duel(0), ids[0]!);
    const upset = changeOf(duel(1), ids[1]!);
    expect(upset.after.mu - upset.before.mu).toBeGreaterThan(
      expected.after.mu - expected.before.mu,
    );
  });

  it('moves nobody’s mean on a draw between equals', () => {
    const changes = rateMatch(fourPlayers(), { outcome: 'COMPLETED' });
    expect(changes).toHaveLength(4);
    for (const { before, after } of changes) expect(after.mu).toBeCloseTo(before.mu, 10);
  });

  it('changes nobody for a FAILED result', () => {
    expect(rateMatch(fourPlayers(), { outcome: 'FAILED' })).toEqual([]);
  });

  it('leaves no-shows out, rating the others against the teams that played', () => {
    const changes = rateMatch(fourPlayers([{ connected: false }]), {
      outcome: 'COMPLETED',
      winningTeam: 1,
    });
    expect(changes.map((c) => c.playerId).sort()).toEqual([ids[1], ids[2], ids[3]].sort());
    expect(changeOf(changes, ids[2]!).after.mu).toBeLessThan(DEFAULT_SKILL.mu);
  });

  it('rates nobody when a team is left without a connected player, or the winners all stayed away', () => {
    const teamZeroAbsent = fourPlayers([{ connected: false }, {}, { connected: false }]);
    expect(rateMatch(teamZeroAbsent, { outcome: 'COMPLETED', winningTeam: 1 })).toEqual([]);
    expect(rateMatch(teamZeroAbsent, { outcome: 'COMPLETED', winningTeam: 0 })).toEqual([]);
  });

  it('refuses a skill openskill cannot rate', () => {
    expect(() =>
      rateMatch(fourPlayers([{ skill: { mu: Number.NaN, sigma: 1 } }]), {
        outcome: 'COMPLETED',
        winningTeam: 0,
      }),
    ).toThrow(/mu must be a finite number/);
  });
});

describe(displayRating.name, () => {
  it('puts a new player at 1500 and inverts skillAtDisplayRating', () => {
    expect(displayRating(DEFAULT_SKILL)).toBe(DISPLAY_RATING_BASE);
    expect(DEFAULT_SKILL).toEqual({ mu: 25, sigma: 25 / 3 });
    const skill = skillAtDisplayRating(1740, 4);
    expect(skill.sigma).toBe(4);
    expect(displayRating(skill)).toBeCloseTo(1740, 9);
    expect(skillAtDisplayRating(1500, DEFAULT_SKILL.sigma).mu).toBeCloseTo(25, 12);
  });

  it('names what is wrong with a skill', () => {
    expect(skillProblem({ mu: 25, sigma: 0 })).toBe('sigma must be a finite number > 0');
    expect(skillProblem({ mu: Infinity, sigma: 1 })).toBe('mu must be a finite number');
    expect(skillProblem({ mu: 25, sigma: 1 })).toBeUndefined();
  });
});
