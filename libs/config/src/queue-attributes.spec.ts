import { ConfigError, loadConfig } from './load-config';
import { parseQueueModeAttributes } from './queue-attributes';
import { ServiceConfig } from './service.config';

const attributes = JSON.stringify({
  duel: {
    attributes: {
      buildVersion: { type: 'string', values: ['1.4.0', '1.5.0'] },
      skill: { type: 'number', min: 0, max: 100, default: 50 },
    },
    rules: [
      { equal: 'buildVersion' },
      { distance: 'skill', widening: [{ afterMs: 0, maxDistance: 10 }] },
    ],
  },
});

function problemOf(env: Record<string, string>): string {
  try {
    loadConfig(ServiceConfig, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('expected the configuration to be refused');
}

describe('QUEUE_MODE_ATTRIBUTES', () => {
  it('is optional: unset, no mode declares attributes', () => {
    const config = loadConfig(ServiceConfig, {});
    expect(parseQueueModeAttributes(config.QUEUE_MODE_ATTRIBUTES, ['duel']).size).toBe(0);
  });

  it('loads per-mode declarations and rules', () => {
    const config = loadConfig(ServiceConfig, { QUEUE_MODE_ATTRIBUTES: attributes });
    const schemas = parseQueueModeAttributes(config.QUEUE_MODE_ATTRIBUTES, ['duel', 'squad']);
    expect(schemas.get('duel')?.rules.map((rule) => rule.kind)).toEqual(['equal', 'distance']);
    expect(schemas.has('squad')).toBe(false);
  });

  it.each([
    ['malformed JSON', '{duel', /QUEUE_MODE_ATTRIBUTES is not JSON/],
    [
      'a list',
      '[]',
      /QUEUE_MODE_ATTRIBUTES must be a JSON object of mode -> \{attributes, rules\}/,
    ],
    [
      'an unknown mode',
      JSON.stringify({ ranked: { attributes: {} } }),
      /QUEUE_MODE_ATTRIBUTES names mode "ranked", which QUEUE_MODES does not list/,
    ],
    [
      'a rule on an undeclared attribute',
      JSON.stringify({ duel: { rules: [{ equal: 'buildVersion' }] } }),
      /QUEUE_MODE_ATTRIBUTES duel\.rules\[0\] names attribute "buildVersion", which is not declared/,
    ],
    [
      'a distance rule on a string attribute',
      JSON.stringify({
        duel: {
          attributes: { build: { type: 'string', values: ['a'] } },
          rules: [{ distance: 'build', widening: [{ afterMs: 0, maxDistance: 1 }] }],
        },
      }),
      /a distance rule needs a number attribute, build is a string/,
    ],
  ])('refuses %s with one line naming the variable and the problem', (_, value, expected) => {
    expect(problemOf({ QUEUE_MODE_ATTRIBUTES: value })).toMatch(expected);
  });

  it('refuses a roles rule that asks more of a team than the smallest team holds', () => {
    const roles = { type: 'set', values: ['healer', 'tank'] };
    const rules = [{ roles: 'roles', perTeam: { healer: 1, tank: 1 } }];
    expect(
      problemOf({
        QUEUE_MODES: 'duel:1x2,hunt:4+1',
        QUEUE_MODE_ATTRIBUTES: JSON.stringify({ hunt: { attributes: { roles }, rules } }),
      }),
    ).toMatch(/mode hunt: its roles rule asks for 2 players a team, its smallest team has 1/);
    expect(() =>
      loadConfig(ServiceConfig, {
        QUEUE_MODES: 'duel:1x2,arena:2x2',
        QUEUE_MODE_ATTRIBUTES: JSON.stringify({ arena: { attributes: { roles }, rules } }),
      }),
    ).not.toThrow();
  });
});
