import {
  parseModeAttributeSchema,
  resolveTicketAttributes,
  type ModeAttributeSchema,
} from './attribute-rules';
import { selectBackfill } from './backfill-selection';
import {
  newCandidate,
  numberedUuid,
  reasonOf,
  ticketsOfMatches,
  newBackfillNeed,
} from '../../../../test/support/match-candidates';
import { formMatches, type MatchCandidate } from './match-formation';
import type { ModeRules } from './mode-rules';

/* Issue 34 item 2: set attributes with an intersect rule, and rules optional after a wait. */

const now = new Date('2026-12-01T10:00:00.000Z');

const crossplay = {
  attributes: {
    platforms: { type: 'set', values: ['pc', 'ps', 'xbox'], default: ['xbox', 'pc'] },
    build: { type: 'string', values: ['1.4', '1.5'], default: '1.5' },
  },
  rules: [{ intersect: 'platforms' }, { equal: 'build', optionalAfterSeconds: 30 }],
};

function schemaOf(value: unknown): ModeAttributeSchema {
  const { schema, problems } = parseModeAttributeSchema(value, 'duel');
  expect(problems).toEqual([]);
  return schema;
}

describe('set attributes and optional rules in the schema', () => {
  it('reads a set declaration (default in declared order), an intersect rule and optionalAfterSeconds as ms', () => {
    const schema = schemaOf(crossplay);
    expect(schema.attributes[0]).toEqual({
      name: 'platforms',
      type: 'set',
      values: ['pc', 'ps', 'xbox'],
      default: ['pc', 'xbox'],
    });
    expect(schema.rules).toEqual([
      { kind: 'intersect', attribute: 'platforms' },
      { kind: 'equal', attribute: 'build', optionalAfterMs: 30_000 },
    ]);
  });

  it.each<[string, unknown, string]>([
    [
      'an intersect rule on a string',
      { attributes: { build: { type: 'string', values: ['a'] } }, rules: [{ intersect: 'build' }] },
      'duel.rules[0]: an intersect rule needs a set attribute, build is a string',
    ],
    [
      'an equal rule on a set',
      { attributes: { p: { type: 'set', values: ['a'] } }, rules: [{ equal: 'p' }] },
      'duel.rules[0]: an equal rule needs a string or number attribute, p is a set (use intersect)',
    ],
    [
      'a negative optionalAfterSeconds',
      {
        attributes: { p: { type: 'set', values: ['a'] } },
        rules: [{ intersect: 'p', optionalAfterSeconds: -1 }],
      },
      'duel.rules[0].optionalAfterSeconds must be a number of seconds from 0 to 86400',
    ],
    [
      'an unknown field on an equal rule',
      { attributes: { b: { type: 'string', values: ['a'] } }, rules: [{ equal: 'b', after: 3 }] },
      'duel.rules[0] has unknown field "after" (fields: equal, optionalAfterSeconds)',
    ],
    [
      'a set default outside its values',
      { attributes: { p: { type: 'set', values: ['a', 'b'], default: ['c'] } } },
      'duel.attributes.p.default must be a non-empty list of distinct values from its values',
    ],
    [
      'an empty set default',
      { attributes: { p: { type: 'set', values: ['a'], default: [] } } },
      'duel.attributes.p.default must be a non-empty list of distinct values from its values',
    ],
    [
      'intersect rules whose searches would try too many combinations',
      {
        attributes: {
          p: { type: 'set', values: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] },
          q: { type: 'set', values: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'] },
        },
        rules: [{ intersect: 'p' }, { intersect: 'q' }],
      },
      "duel.rules: the intersect rules' sets allow 72 combinations of values, at most 64",
    ],
  ])('refuses %s, naming where', (_, value, problem) => {
    expect(parseModeAttributeSchema(value, 'duel').problems).toContain(problem);
  });
});

describe('set attribute values on a ticket', () => {
  const schema = schemaOf(crossplay);

  it('stores the set in declared order and fills the default', () => {
    expect(resolveTicketAttributes(schema, { platforms: ['xbox', 'ps'] })).toEqual({
      attributes: { platforms: ['ps', 'xbox'], build: '1.5' },
    });
    expect(resolveTicketAttributes(schema, {})).toEqual({
      attributes: { platforms: ['pc', 'xbox'], build: '1.5' },
    });
  });

  it.each<[string, unknown, string]>([
    ['not a list', 'pc', 'platforms must be a list of values'],
    ['an empty list', [], 'platforms must list at least one value'],
    [
      'a value not allowed',
      ['pc', 'switch'],
      'platforms lists "switch"; its values must be among "pc", "ps", "xbox"',
    ],
    [
      'a number in the list',
      ['pc', 7],
      'platforms lists 7; its values must be among "pc", "ps", "xbox"',
    ],
    ['a value twice', ['pc', 'pc'], 'platforms lists "pc" twice'],
  ])('refuses %s, naming the attribute and the entry', (_, platforms, message) => {
    expect(resolveTicketAttributes(schema, { platforms })).toEqual({
      problems: [{ attribute: 'platforms', message }],
    });
  });
});

const uuid = numberedUuid;
const teamsOf = ticketsOfMatches;

function candidate(
  n: number,
  attributes: Record<string, string | readonly string[]>,
  waitedMs = 1_000,
): MatchCandidate {
  return newCandidate(n, now, waitedMs, { attributes });
}

describe('intersect rules in a pass', () => {
  const widening = [{ afterMs: 0, maxRttMs: 100, ratingWindow: 500 }];
  const duel: ModeRules = {
    mode: 'duel',
    teamSize: 1,
    teamCount: 2,
    widening,
    attributeRules: [{ kind: 'intersect', attribute: 'platforms' }],
  };

  it('matches only players whose sets share a value, passing over an older one that shares none', () => {
    const formation = formMatches(
      [
        candidate(1, { platforms: ['pc', 'xbox'] }, 9_000),
        candidate(2, { platforms: ['ps'] }, 8_000),
        candidate(3, { platforms: ['xbox'] }, 1_000),
      ],
      [duel],
      now,
    );
    expect(teamsOf(formation)).toEqual([[uuid(1, 1), uuid(1, 3)]]);
  });

  it('needs one value in every set of the match, not only pairwise overlaps', () => {
    const squad: ModeRules = { ...duel, mode: 'duel', teamSize: 1, teamCount: 3 };
    const pairwise = [
      candidate(1, { platforms: ['pc', 'ps'] }, 9_000),
      candidate(2, { platforms: ['ps', 'xbox'] }, 8_000),
      candidate(3, { platforms: ['xbox', 'pc'] }, 7_000),
    ];
    // Every two share a value, the three share none.
    expect(formMatches(pairwise, [squad], now).matches).toEqual([]);
    const withCommon = [...pairwise, candidate(4, { platforms: ['ps'] }, 6_000)];
    expect(teamsOf(formMatches(withCommon, [squad], now))).toEqual([
      [uuid(1, 1), uuid(1, 2), uuid(1, 4)],
    ]);
  });

  it('explains a ticket kept apart by the rule, naming the attribute and its values', () => {
    const formation = formMatches(
      [candidate(1, { platforms: ['pc'] }), candidate(2, { platforms: ['ps', 'xbox'] })],
      [duel],
      now,
    );
    const reason = reasonOf(formation, 2);
    expect(reason?.code).toBe('ATTRIBUTE_MISMATCH');
    expect(reason?.details).toMatchObject({
      rule: 'intersect',
      attributes: ['platforms'],
      values: { platforms: ['ps', 'xbox'] },
      optionalInMs: null,
    });
    expect(reason?.message).toMatch(
      /^platforms must share a value with yours \("ps", "xbox"\): players within your limits are searching, but with no value in common$/,
    );
  });

  it('fills a backfill request only with players sharing a value with the match', () => {
    const need = newBackfillNeed(now, { attributes: { platforms: ['pc'] } });
    const { picks } = selectBackfill(
      [need],
      [candidate(1, { platforms: ['ps'] }, 5_000), candidate(2, { platforms: ['ps', 'pc'] })],
      duel,
      now,
    );
    expect(picks.map((pick) => pick.candidates.map((c) => c.ticketId))).toEqual([[uuid(1, 2)]]);
  });
});

describe('rules optional after a wait', () => {
  const widening = [{ afterMs: 0, maxRttMs: 100, ratingWindow: 500 }];
  const duel: ModeRules = {
    mode: 'duel',
    teamSize: 1,
    teamCount: 2,
    widening,
    attributeRules: [
      { kind: 'equal', attribute: 'build', optionalAfterMs: 30_000 },
      { kind: 'intersect', attribute: 'platforms', optionalAfterMs: 60_000 },
    ],
  };

  it('keeps other builds apart until the older ticket has waited optionalAfter, then matches them', () => {
    const pair = [
      candidate(1, { build: '1.4', platforms: ['pc'] }, 10_000),
      candidate(2, { build: '1.5', platforms: ['pc'] }, 5_000),
    ];
    const early = formMatches(pair, [duel], now);
    expect(early.matches).toEqual([]);
    const reason = reasonOf(early, 1);
    expect(reason?.code).toBe('ATTRIBUTE_MISMATCH');
    expect(reason?.details).toMatchObject({
      rule: 'equal',
      attributes: ['build'],
      optionalInMs: 20_000,
    });
    expect(reason?.message).toMatch(
      /^build must equal yours \("1\.4"\).*; the build rule no longer applies in 20 s$/,
    );

    const later = formMatches(pair, [duel], new Date(now.getTime() + 20_000));
    expect(teamsOf(later)).toEqual([[uuid(1, 1), uuid(1, 2)]]);
  });

  it('waives an intersect rule once the anchor has waited past it, and only then', () => {
    const pair = [
      candidate(1, { build: '1.5', platforms: ['pc'] }, 59_000),
      candidate(2, { build: '1.5', platforms: ['ps'] }, 1_000),
    ];
    expect(formMatches(pair, [duel], now).matches).toEqual([]);
    expect(reasonOf(formMatches(pair, [duel], now), 1)?.message).toMatch(
      /; the platforms rule no longer applies in 1 s$/,
    );
    expect(teamsOf(formMatches(pair, [duel], new Date(now.getTime() + 1_000)))).toEqual([
      [uuid(1, 1), uuid(1, 2)],
    ]);
  });

  it('does not split the mode by an optional equal rule: the same build still matches first', () => {
    const formation = formMatches(
      [
        candidate(1, { build: '1.4', platforms: ['pc'] }, 9_000),
        candidate(2, { build: '1.5', platforms: ['pc'] }, 8_000),
        candidate(3, { build: '1.4', platforms: ['pc'] }, 1_000),
      ],
      [duel],
      now,
    );
    expect(teamsOf(formation)).toEqual([[uuid(1, 1), uuid(1, 3)]]);
  });
});
