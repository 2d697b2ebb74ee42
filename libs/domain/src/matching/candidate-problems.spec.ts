import { isUuid } from '../shared/value.guards';
import { candidateProblems, isUuidByChars } from './candidate-problems';
import type { MatchCandidate } from './match-candidate';

describe('isUuidByChars', () => {
  const valid = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
  const cases: unknown[] = [
    valid,
    '00000000-0000-0000-0000-000000000001',
    '10000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    '00000000-0000-0000-0000-000000000000',
    valid.toUpperCase(),
    valid.replace('a', 'g'),
    valid.replace('-', '0'),
    valid.replace('4a7b', '4a7b-'),
    valid.slice(1),
    `${valid}0`,
    valid.replace('e5f6', 'e5f6'.slice(0, 3) + '/'),
    valid.replace('8c9d', '8c9:'),
    valid.replace('0e1f', '0e1`'),
    ` ${valid.slice(1)}`,
    '',
    undefined,
    null,
    42,
    { toString: () => valid },
  ];

  it.each(cases.map((value) => [value]))('agrees with isUuid on %p', (value) => {
    expect(isUuidByChars(value)).toBe(isUuid(value));
  });

  it('agrees with isUuid on every single-character change of a valid id', () => {
    const characters = '0123456789abcdefABCDEF-g/:`@ ';
    for (let index = 0; index < valid.length; index++) {
      for (const character of characters) {
        const changed = valid.slice(0, index) + character + valid.slice(index + 1);
        expect([changed, isUuidByChars(changed)]).toEqual([changed, isUuid(changed)]);
      }
    }
  });
});

describe('candidateProblems', () => {
  const candidate: MatchCandidate = {
    ticketId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
    playerId: 'b1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
    mode: 'duel',
    rating: 1500,
    predictedRtt: { 'eu-west': 20 },
    enqueuedAt: new Date('2026-12-01T10:00:00.000Z'),
  };

  it('finds nothing wrong with a valid candidate', () => {
    expect(candidateProblems(candidate)).toEqual([]);
  });

  it('names every field that is wrong, in field order', () => {
    const broken = {
      ...candidate,
      ticketId: 'nope',
      rating: Number.NaN,
      blockedPlayerIds: ['nope'],
      avoidedPlayerIds: 'nope',
      party: { id: 'nope', size: 0 },
    } as unknown as MatchCandidate;
    expect(candidateProblems(broken)).toEqual([
      'ticketId must be a canonical lowercase uuid',
      'rating must be a finite number',
      'blockedPlayerIds must be a list of canonical lowercase uuids when present',
      'avoidedPlayerIds must be a list of canonical lowercase uuids when present',
      'party.id must be a canonical lowercase uuid',
      'party.size must be an integer >= 1',
    ]);
  });
});
