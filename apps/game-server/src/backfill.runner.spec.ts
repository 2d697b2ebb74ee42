import { BackfillRunner, shortTeams } from './backfill.runner';
import { newVerifiedRoster } from './game-server.factories';
import type { VerifiedRoster } from './roster.gate';

const [A, B, C, D] = [1, 2, 3, 4].map((n) => `${n}`.repeat(8) + '-1111-4111-8111-111111111111');

function twoVersusTwo(): VerifiedRoster {
  return newVerifiedRoster([
    [A!, 0],
    [B!, 0],
    [C!, 1],
    [D!, 1],
  ]);
}

describe(BackfillRunner.name, () => {
  describe(shortTeams.name, () => {
    it('names each team with fewer players connected than rostered, and how many it lacks', () => {
      expect(shortTeams(twoVersusTwo(), [A!, C!, D!])).toEqual([{ team: 0, slots: 1 }]);
      expect(shortTeams(twoVersusTwo(), [C!])).toEqual([
        { team: 0, slots: 2 },
        { team: 1, slots: 1 },
      ]);
    });

    it('finds none when everyone connected', () => {
      expect(shortTeams(twoVersusTwo(), [A!, B!, C!, D!])).toEqual([]);
    });
  });
});
