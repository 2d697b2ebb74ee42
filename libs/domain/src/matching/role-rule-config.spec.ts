import { parseModeAttributeSchema } from './attribute-schema';
import { assertModeRules } from './mode-rules';

const roles = { type: 'set', values: ['healer', 'tank', 'dps'] };
const schemaOf = (rules: unknown[]) =>
  parseModeAttributeSchema({ attributes: { roles }, rules }, 'arena');

describe('the roles rule in QUEUE_MODE_ATTRIBUTES', () => {
  it('reads roles, per-team counts and optionalAfterSeconds', () => {
    const { schema, problems } = schemaOf([
      { roles: 'roles', perTeam: { healer: 1, tank: 1 }, optionalAfterSeconds: 90 },
    ]);
    expect(problems).toEqual([]);
    expect(schema.rules).toEqual([
      {
        kind: 'roles',
        attribute: 'roles',
        perTeam: { healer: 1, tank: 1 },
        optionalAfterMs: 90_000,
      },
    ]);
  });

  it.each<[string, unknown[], RegExp]>([
    [
      'no counts',
      [{ roles: 'roles', perTeam: {} }],
      /perTeam must be an object of role -> players/,
    ],
    [
      'a count of 0',
      [{ roles: 'roles', perTeam: { healer: 0 } }],
      /perTeam.healer must be an integer >= 1/,
    ],
    [
      'an unknown role',
      [{ roles: 'roles', perTeam: { bard: 1 } }],
      /perTeam names "bard", not a value of roles/,
    ],
    [
      'an unknown field',
      [{ roles: 'roles', perTeam: { healer: 1 }, min: 1 }],
      /unknown field "min"/,
    ],
    [
      'two roles rules',
      [
        { roles: 'roles', perTeam: { healer: 1 } },
        { roles: 'roles', perTeam: { tank: 1 } },
      ],
      /at most one roles rule/,
    ],
    [
      'a bad wait',
      [{ roles: 'roles', perTeam: { healer: 1 }, optionalAfterSeconds: -1 }],
      /optionalAfterSeconds must be/,
    ],
  ])('refuses %s, naming it', (_, rules, message) => {
    expect(schemaOf(rules).problems.join('; ')).toMatch(message);
  });

  it('refuses a roles rule on a string attribute', () => {
    const { problems } = parseModeAttributeSchema(
      {
        attributes: { role: { type: 'string', values: ['healer'] } },
        rules: [{ roles: 'role', perTeam: { healer: 1 } }],
      },
      'arena',
    );
    expect(problems.join('; ')).toMatch(/a roles rule needs a set attribute, role is a string/);
  });

  it('refuses mode rules whose teams are too small for the slots', () => {
    const { schema } = schemaOf([{ roles: 'roles', perTeam: { healer: 1, tank: 1 } }]);
    expect(() =>
      assertModeRules([
        {
          mode: 'hunt',
          teamSize: 4,
          teamCount: 2,
          teamSizes: [4, 1],
          widening: [{ afterMs: 0, maxRttMs: 50, ratingWindow: 100 }],
          attributeRules: schema.rules,
        },
      ]),
    ).toThrow(/asks for 2 players a team, the smallest team has 1/);
  });
});
