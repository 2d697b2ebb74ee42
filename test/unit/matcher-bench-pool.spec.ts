import { loadConfig } from '@matchplane/config';
import { formMatches } from '@matchplane/domain';
import { MatcherConfig } from '../../apps/matcher/src/matcher.config';
import { matcherRules } from '../../apps/matcher/src/matcher-rules';
import {
  BENCH_BUILD_VERSIONS,
  BENCH_MODE_ATTRIBUTES,
  BENCH_RULES,
  buildPool,
  mixedBuildMatches,
  splitParties,
} from '../bench/matcher-pure.bench';

/**
 * The bench:matcher pool and its figures without running the bench (benches are not run in
 * tests): a small pool carries build versions, formMatches keeps them apart, the counter sees a
 * mixed match, and the declaration the end-to-end bench gives the matcher app loads.
 */
describe('bench:matcher pool with build versions', () => {
  const now = new Date('2026-12-01T10:00:00.000Z');
  const pool = buildPool(2_000, 20261201, 120_000, now);

  it('gives every ticket one of the three build versions, all three present', () => {
    const builds = pool.map((candidate) => candidate.attributes?.buildVersion);
    expect(new Set(builds)).toEqual(new Set(BENCH_BUILD_VERSIONS));
  });

  it('forms matches of one build only, and mixedBuildMatches counts a mixed one', () => {
    const byTicket = new Map(pool.map((candidate) => [candidate.ticketId, candidate]));
    const matches = formMatches(pool, BENCH_RULES, now).matches.map((match) =>
      match.participants.map((p) => byTicket.get(p.ticketId)?.attributes ?? {}),
    );
    expect(matches.length).toBeGreaterThan(100);
    expect(mixedBuildMatches(matches)).toBe(0);
    expect(
      mixedBuildMatches([...matches, [{ buildVersion: '1.4.0' }, { buildVersion: '1.5.0' }]]),
    ).toBe(1);
  });

  it('declares the same rules to the matcher app of the end-to-end bench', () => {
    const rules = matcherRules(
      loadConfig(MatcherConfig, {
        QUEUE_MODES: BENCH_RULES.map((r) => `${r.mode}:${r.teamSize}x${r.teamCount}`).join(','),
        QUEUE_MODE_ATTRIBUTES: BENCH_MODE_ATTRIBUTES,
      }),
    );
    expect(rules.map((r) => [r.mode, r.attributeRules])).toEqual(
      BENCH_RULES.map((r) => [r.mode, r.attributeRules]),
    );
  });
});

describe('bench:matcher pool with parties', () => {
  const now = new Date('2026-12-01T10:00:00.000Z');
  const pool = buildPool(2_000, 20261201, 120_000, now, 0.3);
  const parties = new Map<string, typeof pool>();
  for (const candidate of pool) {
    if (candidate.party)
      parties.set(candidate.party.id, [...(parties.get(candidate.party.id) ?? []), candidate]);
  }

  it('puts the share of players in squad parties of 2-4 that queue together on one build', () => {
    // The share to within one player: a party is at least two.
    const inParties = pool.filter((candidate) => candidate.party).length;
    expect(inParties).toBeGreaterThanOrEqual(599);
    expect(inParties).toBeLessThanOrEqual(600);
    for (const members of parties.values()) {
      expect(members.length).toBe(members[0]!.party!.size);
      expect(members.length).toBeGreaterThanOrEqual(2);
      expect(members.length).toBeLessThanOrEqual(4);
      expect(new Set(members.map((m) => m.mode))).toEqual(new Set(['squad']));
      expect(new Set(members.map((m) => m.enqueuedAt.getTime())).size).toBe(1);
      expect(new Set(members.map((m) => m.attributes?.buildVersion)).size).toBe(1);
    }
  });

  it('leaves the pool as it was with a share of 0', () => {
    const plain = buildPool(2_000, 20261201, 120_000, now, 0);
    expect(plain.some((candidate) => candidate.party)).toBe(false);
    expect(plain.map((c) => c.ticketId)).toEqual(pool.map((c) => c.ticketId));
  });

  it('counts no split party in formMatches, and counts one the matches split or matched in part', () => {
    const matches = formMatches(pool, BENCH_RULES, now).matches;
    expect(splitParties(pool, matches)).toBe(0);
    const [first, second] = [...parties.values()].find((members) => members.length === 2)!;
    expect(
      splitParties(pool, [
        {
          participants: [
            { ticketId: first!.ticketId, team: 0 },
            { ticketId: second!.ticketId, team: 1 },
          ],
        },
      ]),
    ).toBe(1);
    expect(splitParties(pool, [{ participants: [{ ticketId: first!.ticketId, team: 0 }] }])).toBe(
      1,
    );
  });
});
