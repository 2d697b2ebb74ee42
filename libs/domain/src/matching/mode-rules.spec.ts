import { DomainError } from '../shared/domain.error';
import {
  assertModeRules,
  MAX_PLAYERS_PER_MATCH,
  nextWideningInMs,
  playersPerMatch,
  wideningStepAt,
  type ModeRules,
} from './mode-rules';

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

function problemsOf(rules: unknown): string[] {
  try {
    assertModeRules(rules as ModeRules[]);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('INVALID_ARGUMENT');
    return (error as DomainError).details['problems'] as string[];
  }
  throw new Error('expected the rules to be rejected');
}

describe(assertModeRules.name, () => {
  it('accepts widening steps that start at 0 and only widen, with Infinity as "no limit"', () => {
    expect(() => assertModeRules([duel, { ...duel, mode: 'squad', teamSize: 4 }])).not.toThrow();
  });

  it('rejects an empty or non-list rule set', () => {
    expect(() => assertModeRules([])).toThrow(DomainError);
    expect(() => assertModeRules(null as unknown as ModeRules[])).toThrow(DomainError);
  });

  it.each([
    ['a mode twice', [duel, duel], 'rules[1].mode duel has rules twice'],
    ['a blank mode', [{ ...duel, mode: ' duel' }], 'rules[0].mode must be a 1-64 character name'],
    ['a team size of 0', [{ ...duel, teamSize: 0 }], 'rules[0].teamSize must be an integer >= 1'],
    [
      'a fractional team count',
      [{ ...duel, teamCount: 1.5 }],
      'rules[0].teamCount must be an integer >= 1',
    ],
    [
      'a match larger than the bound',
      [{ ...duel, teamSize: MAX_PLAYERS_PER_MATCH, teamCount: 2 }],
      `rules[0]: teamSize * teamCount must be at most ${MAX_PLAYERS_PER_MATCH}`,
    ],
    [
      'no steps',
      [{ ...duel, widening: [] }],
      'rules[0].widening must be a non-empty list of steps',
    ],
    [
      'a first step after 0',
      [{ ...duel, widening: [{ afterMs: 5, maxRttMs: 50, ratingWindow: 100 }] }],
      'rules[0].widening[0].afterMs must be 0',
    ],
    [
      'steps out of order',
      [
        {
          ...duel,
          widening: [
            { afterMs: 0, maxRttMs: 50, ratingWindow: 100 },
            { afterMs: 0, maxRttMs: 60, ratingWindow: 100 },
          ],
        },
      ],
      'rules[0].widening[1].afterMs must be greater than the step before',
    ],
    [
      'a narrowing RTT ceiling',
      [
        {
          ...duel,
          widening: [
            { afterMs: 0, maxRttMs: 50, ratingWindow: 100 },
            { afterMs: 10, maxRttMs: 40, ratingWindow: 100 },
          ],
        },
      ],
      'rules[0].widening[1].maxRttMs must not narrow the step before',
    ],
    [
      'a narrowing rating window',
      [
        {
          ...duel,
          widening: [
            { afterMs: 0, maxRttMs: 50, ratingWindow: 100 },
            { afterMs: 10, maxRttMs: 50, ratingWindow: 99 },
          ],
        },
      ],
      'rules[0].widening[1].ratingWindow must not narrow the step before',
    ],
    [
      'a NaN ceiling',
      [{ ...duel, widening: [{ afterMs: 0, maxRttMs: Number.NaN, ratingWindow: 1 }] }],
      'rules[0].widening[0].maxRttMs must be a number >= 0',
    ],
    [
      'a negative window',
      [{ ...duel, widening: [{ afterMs: 0, maxRttMs: 50, ratingWindow: -1 }] }],
      'rules[0].widening[0].ratingWindow must be a number >= 0',
    ],
    [
      'an infinite step time',
      [
        {
          ...duel,
          widening: [
            { afterMs: 0, maxRttMs: 50, ratingWindow: 1 },
            { afterMs: Number.POSITIVE_INFINITY, maxRttMs: 50, ratingWindow: 1 },
          ],
        },
      ],
      'rules[0].widening[1].afterMs must be a finite number >= 0',
    ],
  ])('rejects %s', (_, rules, problem) => {
    expect(problemsOf(rules)).toContain(problem);
  });

  it('lists every problem at once', () => {
    expect(problemsOf([{ ...duel, teamSize: 0, teamCount: 0, widening: [] }])).toHaveLength(3);
  });
});

describe(wideningStepAt.name, () => {
  it.each([
    [0, 50],
    [19_999, 50],
    [20_000, 100],
    [59_999, 100],
    [60_000, 200],
    [3_600_000, 200],
  ])('after %i ms the ceiling is %i ms', (waitedMs, maxRttMs) => {
    expect(wideningStepAt(duel, waitedMs).maxRttMs).toBe(maxRttMs);
  });
});

describe(nextWideningInMs.name, () => {
  it('counts down to the next step and is null once the widest applies', () => {
    expect(nextWideningInMs(duel, 0)).toBe(20_000);
    expect(nextWideningInMs(duel, 25_000)).toBe(35_000);
    expect(nextWideningInMs(duel, 60_000)).toBeNull();
  });
});

describe(playersPerMatch.name, () => {
  it('is team size times team count', () => {
    expect(playersPerMatch({ ...duel, teamSize: 4, teamCount: 3 })).toBe(12);
  });
});
