import { createHash } from 'node:crypto';
import { formMatches } from '@matchplane/domain';
import { BENCH_RULES, buildPool } from '../bench/matcher-pure.bench';

/**
 * The exact output of one pass over a seeded bench pool, held to what it was before the pass was
 * made faster (issue 33): a speed-up must not change a single match, its order, its teams or any
 * explanation. If a change of policy means to change them, record the new digests and say why.
 */
describe('formMatches over the seeded bench pool', () => {
  const now = new Date('2026-12-01T10:00:00.000Z');
  const pool = buildPool(3_000, 20261201, 120_000, now);
  const formation = formMatches(pool, BENCH_RULES, now);
  const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

  it('forms the same matches, each of the same tickets on the same teams, in the same order', () => {
    const matches = formation.matches.map(
      (match) =>
        `${match.region}:` +
        match.participants
          .map((participant) => `${participant.ticketId}/${participant.team}`)
          .sort()
          .join(','),
    );
    expect(matches).toHaveLength(995);
    expect(digest(matches.map((match) => `${match}\n`).join(''))).toBe('7b5c017e2bad156a');
  });

  it('gives the same output in full, unmatched tickets and their reasons included', () => {
    expect(digest(JSON.stringify(formation))).toBe('b72b8840911e5015');
  });
});
