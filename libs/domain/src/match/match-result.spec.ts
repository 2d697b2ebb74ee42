import { resultConflict } from './match-result';

describe(resultConflict.name, () => {
  it('finds no conflict in an exact repeat, whatever the order of the scores', () => {
    expect(
      resultConflict(
        { outcome: 'COMPLETED', winningTeam: 1, scores: { a: 3, b: 1 } },
        { outcome: 'COMPLETED', winningTeam: 1, scores: { b: 1, a: 3 } },
      ),
    ).toBeUndefined();
    expect(resultConflict({ outcome: 'FAILED' }, { outcome: 'FAILED' })).toBeUndefined();
  });

  it('names both results when the outcome, the winning team or a score differs', () => {
    expect(resultConflict({ outcome: 'COMPLETED', winningTeam: 0 }, { outcome: 'FAILED' })).toBe(
      'the match has a recorded COMPLETED, winning team 0; this report says FAILED',
    );
    expect(
      resultConflict({ outcome: 'COMPLETED', winningTeam: 0 }, { outcome: 'COMPLETED' }),
    ).toContain('this report says COMPLETED');
    expect(
      resultConflict(
        { outcome: 'COMPLETED', scores: { a: 3 } },
        { outcome: 'COMPLETED', scores: { a: 4 } },
      ),
    ).toContain('scores [["a",4]]');
    expect(
      resultConflict({ outcome: 'COMPLETED' }, { outcome: 'COMPLETED', scores: {} }),
    ).toBeDefined();
  });
});
