import { decideResult, MatchRunner } from './match.runner';
import { parseJoinMessage } from './join.protocol';
import { newVerifiedRoster } from './game-server.factories';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const C = '33333333-3333-4333-8333-333333333333';

const roster = newVerifiedRoster;

describe(MatchRunner.name, () => {
  describe(decideResult.name, () => {
    it('gives the win to the team with the most points, with every rostered player scored', () => {
      const result = decideResult(
        roster([
          [A, 0],
          [B, 1],
          [C, 1],
        ]),
        new Map([
          [A, 3],
          [B, 2],
          [C, 2],
        ]),
      );
      expect(result).toEqual({
        outcome: 'COMPLETED',
        winningTeam: 1,
        scores: { [A]: 3, [B]: 2, [C]: 2 },
      });
    });

    it('breaks a tie deterministically in favour of the lowest team index', () => {
      const tied = roster([
        [A, 1],
        [B, 0],
      ]);
      expect(
        decideResult(
          tied,
          new Map([
            [A, 4],
            [B, 4],
          ]),
        ).winningTeam,
      ).toBe(0);
      expect(decideResult(tied, new Map()).winningTeam).toBe(0);
    });
  });
});

describe('parseJoinMessage', () => {
  it('accepts only {"type":"join","token":"<non-empty>"}', () => {
    expect(parseJoinMessage('{"type":"join","token":"abc.def"}')).toEqual({
      type: 'join',
      token: 'abc.def',
    });
    for (const bad of [
      'hello',
      'null',
      '[]',
      '{"type":"join"}',
      '{"type":"join","token":""}',
      '{"type":"hi","token":"x"}',
    ]) {
      expect(parseJoinMessage(bad)).toBeUndefined();
    }
  });
});
