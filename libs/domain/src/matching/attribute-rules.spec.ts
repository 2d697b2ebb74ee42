import { DomainError } from '../shared/domain.error';
import {
  equalRuleKey,
  equalRuleKeys,
  maxDistanceAt,
  parseModeAttributeSchema,
  resolveTicketAttributes,
  type DistanceRule,
  type ModeAttributeSchema,
} from './attribute-rules';
import { formMatches, type MatchCandidate, type MatchFormation } from './match-formation';
import { assertModeRules, type ModeRules } from './mode-rules';

const now = new Date('2026-12-01T10:00:00.000Z');

const declaration = {
  attributes: {
    buildVersion: { type: 'string', values: ['1.4.0', '1.5.0', '1.6.0'] },
    crossplay: { type: 'string', values: ['pc', 'console'], default: 'pc' },
    skill: { type: 'number', min: 0, max: 100, integer: true, default: 50 },
  },
  rules: [
    { equal: 'buildVersion' },
    {
      distance: 'skill',
      widening: [
        { afterMs: 0, maxDistance: 5 },
        { afterMs: 10_000, maxDistance: 'inf' },
      ],
    },
  ],
};

function schemaOf(value: unknown): ModeAttributeSchema {
  const { schema, problems } = parseModeAttributeSchema(value, 'duel');
  expect(problems).toEqual([]);
  return schema;
}

describe(parseModeAttributeSchema.name, () => {
  it('reads declarations and rules, "inf" as any distance', () => {
    const schema = schemaOf(declaration);
    expect(schema.attributes.map((attribute) => attribute.name)).toEqual([
      'buildVersion',
      'crossplay',
      'skill',
    ]);
    expect(schema.rules).toEqual([
      { kind: 'equal', attribute: 'buildVersion' },
      {
        kind: 'distance',
        attribute: 'skill',
        widening: [
          { afterMs: 0, maxDistance: 5 },
          { afterMs: 10_000, maxDistance: Number.POSITIVE_INFINITY },
        ],
      },
    ]);
  });

  it.each([
    ['not an object', [], ['duel must be an object']],
    [
      'an unknown field',
      { attributes: {}, rule: [] },
      ['duel has unknown field "rule" (fields: attributes, rules)'],
    ],
    [
      'a bad attribute name',
      { attributes: { 'build version': { type: 'string', values: ['a'] } } },
      [
        'duel.attributes.build version: attribute names are a letter then up to 31 letters, digits or "_"',
      ],
    ],
    [
      'an unknown type',
      { attributes: { tier: { type: 'bool' } } },
      ['duel.attributes.tier.type must be "string", "number" or "set"'],
    ],
    [
      'a string without allowed values',
      { attributes: { build: { type: 'string', values: [] } } },
      ['duel.attributes.build.values must be a list of 1-64 strings of 1-64 printable characters'],
    ],
    [
      'a NUL in an allowed value',
      { attributes: { build: { type: 'string', values: ['1\u0000'] } } },
      ['duel.attributes.build.values must be a list of 1-64 strings of 1-64 printable characters'],
    ],
    [
      'a default not allowed',
      { attributes: { build: { type: 'string', values: ['a'], default: 'b' } } },
      ['duel.attributes.build.default must be one of its values'],
    ],
    [
      'min above max',
      { attributes: { skill: { type: 'number', min: 5, max: 1 } } },
      ['duel.attributes.skill.min must not exceed max'],
    ],
    [
      'a rule on an undeclared attribute',
      { attributes: {}, rules: [{ equal: 'buildVersion' }] },
      ['duel.rules[0] names attribute "buildVersion", which is not declared'],
    ],
    [
      'a distance rule on a string',
      {
        attributes: { build: { type: 'string', values: ['a'] } },
        rules: [{ distance: 'build', widening: [{ afterMs: 0, maxDistance: 1 }] }],
      },
      ['duel.rules[0]: a distance rule needs a number attribute, build is a string'],
    ],
    [
      'a narrowing distance',
      {
        attributes: { skill: { type: 'number', min: 0, max: 9 } },
        rules: [
          {
            distance: 'skill',
            widening: [
              { afterMs: 0, maxDistance: 5 },
              { afterMs: 1_000, maxDistance: 2 },
            ],
          },
        ],
      },
      ['duel.rules[0].widening[1].maxDistance must not narrow the step before'],
    ],
    [
      'a rule of no kind',
      { attributes: {}, rules: [{ same: 'x' }] },
      [
        'duel.rules[0] must be {"equal": "<attribute>"}, {"intersect": "<attribute>"}, {"roles": "<set attribute>", "perTeam": {"<role>": <n>, ...}} (each with an optional "optionalAfterSeconds": <s>) or {"distance": "<attribute>", "widening": [{"afterMs": 0, "maxDistance": <n>}, ...]}',
      ],
    ],
  ])('refuses %s, naming where', (_, value, problems) => {
    expect(parseModeAttributeSchema(value, 'duel').problems).toEqual(problems);
  });
});

describe(resolveTicketAttributes.name, () => {
  const schema = schemaOf(declaration);

  it('keeps what was given and fills optional attributes with their defaults', () => {
    expect(resolveTicketAttributes(schema, { buildVersion: '1.5.0', skill: 70 })).toEqual({
      attributes: { buildVersion: '1.5.0', crossplay: 'pc', skill: 70 },
    });
  });

  it.each([
    [
      'an unknown attribute',
      { buildVersion: '1.5.0', region: 'x' },
      'region',
      /unknown attribute "region"; this mode declares buildVersion, crossplay, skill/,
    ],
    ['a missing required one', {}, 'buildVersion', /^buildVersion is required$/],
    [
      'a number for a string',
      { buildVersion: 15 },
      'buildVersion',
      /^buildVersion must be a string$/,
    ],
    [
      'a value not allowed',
      { buildVersion: '9.9' },
      'buildVersion',
      /^buildVersion must be one of "1.4.0", "1.5.0", "1.6.0"$/,
    ],
    [
      'a string for a number',
      { buildVersion: '1.5.0', skill: '7' },
      'skill',
      /^skill must be a number$/,
    ],
    [
      'a fraction for an integer',
      { buildVersion: '1.5.0', skill: 7.5 },
      'skill',
      /^skill must be an integer$/,
    ],
    [
      'a number out of range',
      { buildVersion: '1.5.0', skill: 101 },
      'skill',
      /^skill must be between 0 and 100$/,
    ],
    ['null', { buildVersion: null }, 'buildVersion', /^buildVersion must be a string$/],
    [
      'an inherited name',
      { buildVersion: '1.5.0', constructor: 1 },
      'constructor',
      /unknown attribute "constructor"/,
    ],
  ])('refuses %s, naming the attribute', (_, given, attribute, message) => {
    const result = resolveTicketAttributes(schema, given);
    expect('problems' in result).toBe(true);
    const problems = 'problems' in result ? result.problems : [];
    expect(problems).toHaveLength(1);
    expect(problems[0]?.attribute).toBe(attribute);
    expect(problems[0]?.message).toMatch(message);
  });

  it('refuses attributes that are not an object', () => {
    expect(resolveTicketAttributes(schema, ['1.5.0'])).toEqual({
      problems: [{ attribute: '', message: 'attributes must be an object of name -> value' }],
    });
  });
});

describe(maxDistanceAt.name, () => {
  it('widens with the wait, like the RTT and rating steps', () => {
    const rule: DistanceRule = {
      kind: 'distance',
      attribute: 'skill',
      widening: [
        { afterMs: 0, maxDistance: 5 },
        { afterMs: 10_000, maxDistance: 20 },
      ],
    };
    expect(maxDistanceAt(rule, 0)).toBe(5);
    expect(maxDistanceAt(rule, 9_999)).toBe(5);
    expect(maxDistanceAt(rule, 10_000)).toBe(20);
  });
});

describe('attribute rules in assertModeRules', () => {
  it('refuses a distance rule whose steps narrow', () => {
    expect(() =>
      assertModeRules([
        {
          mode: 'duel',
          teamSize: 1,
          teamCount: 2,
          widening: [{ afterMs: 0, maxRttMs: 50, ratingWindow: 100 }],
          attributeRules: [
            {
              kind: 'distance',
              attribute: 'skill',
              widening: [
                { afterMs: 0, maxDistance: 5 },
                { afterMs: 100, maxDistance: 1 },
              ],
            },
          ],
        },
      ]),
    ).toThrow(DomainError);
  });
});

describe('formMatches with attribute rules', () => {
  const duel: ModeRules = {
    mode: 'duel',
    teamSize: 1,
    teamCount: 2,
    widening: [{ afterMs: 0, maxRttMs: 100, ratingWindow: Number.POSITIVE_INFINITY }],
    attributeRules: [
      { kind: 'equal', attribute: 'buildVersion' },
      {
        kind: 'distance',
        attribute: 'skill',
        widening: [
          { afterMs: 0, maxDistance: 5 },
          { afterMs: 10_000, maxDistance: 20 },
        ],
      },
    ],
  };

  function uuid(kind: 1 | 2, n: number): string {
    return `${kind}0000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
  }

  function candidate(
    n: number,
    attributes: Record<string, string | number>,
    waitedMs = 1_000,
  ): MatchCandidate {
    return {
      ticketId: uuid(1, n),
      playerId: uuid(2, n),
      mode: 'duel',
      rating: 1500,
      predictedRtt: { 'eu-west': 20 },
      enqueuedAt: new Date(now.getTime() - waitedMs),
      attributes,
    };
  }

  function pairs(formation: MatchFormation): string[][] {
    return formation.matches.map((match) =>
      match.participants.map((participant) => participant.ticketId).sort(),
    );
  }

  function reasonOf(formation: MatchFormation, n: number) {
    return formation.unmatched.find((ticket) => ticket.ticketId === uuid(1, n))?.reason;
  }

  it('matches only equal build versions, passing over an older ticket of another build', () => {
    const formation = formMatches(
      [
        candidate(1, { buildVersion: '1.4.0', skill: 50 }, 9_000),
        candidate(2, { buildVersion: '1.5.0', skill: 50 }, 8_000),
        candidate(3, { buildVersion: '1.4.0', skill: 50 }, 1_000),
      ],
      [duel],
      now,
    );
    expect(pairs(formation)).toEqual([[uuid(1, 1), uuid(1, 3)]]);
    const reason = reasonOf(formation, 2);
    expect(reason?.code).toBe('NOT_ENOUGH_PLAYERS');
  });

  it('names the equal rule when players of another build would fill the match', () => {
    const formation = formMatches(
      [
        candidate(1, { buildVersion: '1.4.0', skill: 50 }),
        candidate(2, { buildVersion: '1.5.0', skill: 50 }),
      ],
      [duel],
      now,
    );
    expect(formation.matches).toEqual([]);
    const reason = reasonOf(formation, 1);
    expect(reason?.code).toBe('ATTRIBUTE_MISMATCH');
    expect(reason?.details).toMatchObject({
      rule: 'equal',
      attributes: ['buildVersion'],
      values: { buildVersion: '1.4.0' },
    });
    expect(reason?.message).toMatch(/^buildVersion must equal yours \("1\.4\.0"\)/);
  });

  it('keeps a skill gap apart until the anchor has waited long enough, then matches', () => {
    const young = [
      candidate(1, { buildVersion: '1.4.0', skill: 40 }, 2_000),
      candidate(2, { buildVersion: '1.4.0', skill: 55 }, 1_000),
    ];
    const early = formMatches(young, [duel], now);
    expect(early.matches).toEqual([]);
    const reason = reasonOf(early, 1);
    expect(reason?.code).toBe('ATTRIBUTE_MISMATCH');
    expect(reason?.details).toMatchObject({
      rule: 'distance',
      attributes: ['skill'],
      values: { skill: 40 },
      maxDistance: 5,
      nextWideningInMs: 8_000,
    });
    expect(reason?.message).toMatch(/^skill must be within 5 of yours \(40\).*widens in 8 s$/);

    // Ten seconds on, the older ticket anchors with distance 20: the younger one's 5 is not asked.
    const later = formMatches(young, [duel], new Date(now.getTime() + 9_000));
    expect(pairs(later)).toEqual([[uuid(1, 1), uuid(1, 2)]]);
  });

  it('takes the oldest partner within the distance, passing over older ones outside it', () => {
    const formation = formMatches(
      [
        candidate(1, { buildVersion: '1.4.0', skill: 50 }, 5_000),
        candidate(2, { buildVersion: '1.4.0', skill: 90 }, 4_000),
        candidate(3, { buildVersion: '1.4.0', skill: 53 }, 3_000),
        candidate(4, { buildVersion: '1.4.0', skill: 48 }, 2_000),
      ],
      [duel],
      now,
    );
    expect(pairs(formation)).toEqual([[uuid(1, 1), uuid(1, 3)]]);
    expect(reasonOf(formation, 2)?.code).toBe('ATTRIBUTE_MISMATCH');
  });

  it('leaves modes without attribute rules as they were', () => {
    const plain: ModeRules = { ...duel, attributeRules: undefined };
    const formation = formMatches(
      [candidate(1, { buildVersion: '1.4.0' }), candidate(2, { buildVersion: '1.5.0' })],
      [plain],
      now,
    );
    expect(pairs(formation)).toEqual([[uuid(1, 1), uuid(1, 2)]]);
  });

  it('lets tickets without a value (queued before the attribute was declared) meet only each other', () => {
    const formation = formMatches(
      [candidate(1, {}), candidate(2, { buildVersion: '1.4.0', skill: 50 }), candidate(3, {}, 500)],
      [duel],
      now,
    );
    expect(pairs(formation)).toEqual([[uuid(1, 1), uuid(1, 3)]]);
  });
});

describe('equalRuleKeys', () => {
  const rules = [
    { kind: 'equal', attribute: 'build' },
    { kind: 'equal', attribute: 'map' },
  ] as const;

  it('gives each ticket the key equalRuleKey gives it, one string per combination', () => {
    const keyOf = equalRuleKeys(rules);
    const tickets: unknown[] = [
      { build: '1.5.0', map: 'dust' },
      { map: 'dust', build: '1.5.0' },
      { build: '1.5.0', map: 2 },
      { build: '1.5.0', map: '2' },
      { build: '1.5.0' },
      { build: '1.5.0', map: null },
      { build: '1.5.0', map: Number.NaN },
      undefined,
      { build: 1, map: 'dust' },
    ];
    for (const attributes of tickets) {
      expect(keyOf(attributes)).toBe(equalRuleKey(rules, attributes));
    }
    expect(keyOf({ build: '1.5.0', map: 'dust' })).toBe(keyOf({ map: 'dust', build: '1.5.0' }));
    expect(keyOf({ build: '1.5.0', map: 2 })).not.toBe(keyOf({ build: '1.5.0', map: '2' }));
  });

  it('gives every ticket the empty key without equal rules', () => {
    expect(equalRuleKeys([])({ build: '1.5.0' })).toBe('');
  });
});
