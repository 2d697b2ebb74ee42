import { ConfigError, loadConfig } from '@matchplane/config';
import { MatcherConfig } from './matcher.config';
import { parseWideningSteps } from '@matchplane/rule-sets';
import { matcherRules, matcherRulesProblems } from './matcher-rules';

describe(matcherRules.name, () => {
  it('gives every QUEUE_MODES mode its team shape and the MATCH_WIDENING steps', () => {
    const rules = matcherRules(loadConfig(MatcherConfig, {}));
    expect(rules).toEqual([
      {
        mode: 'duel',
        teamSize: 1,
        teamCount: 2,
        widening: [
          { afterMs: 0, maxRttMs: 50, ratingWindow: 100 },
          { afterMs: 10_000, maxRttMs: 100, ratingWindow: 200 },
          { afterMs: 30_000, maxRttMs: 200, ratingWindow: 400 },
        ],
        attributeRules: [],
      },
      expect.objectContaining({ mode: 'squad', teamSize: 4, teamCount: 2 }),
    ]);
  });

  it('gives a mode of unequal teams each team its size, a mode its fill steps, and leaves others as they were', () => {
    const rules = matcherRules(
      loadConfig(MatcherConfig, { QUEUE_MODES: 'duel:1x2,hunt:4+1,br:1x10@5000:6' }),
    );
    expect(rules[0]).not.toHaveProperty('teamSizes');
    expect(rules[0]).not.toHaveProperty('fill');
    expect(rules[1]).toEqual(
      expect.objectContaining({ mode: 'hunt', teamSize: 4, teamCount: 2, teamSizes: [4, 1] }),
    );
    expect(rules[2]).toEqual(
      expect.objectContaining({ mode: 'br', fill: [{ afterMs: 5000, minPlayers: 6 }] }),
    );
  });

  it('refuses to start when a role rule asks more of a team than the team holds', () => {
    const env = {
      QUEUE_MODES: 'duel:1x2,hunt:4+1',
      QUEUE_MODE_ATTRIBUTES: JSON.stringify({
        hunt: {
          attributes: { roles: { type: 'set', values: ['healer', 'tank'] } },
          rules: [{ roles: 'roles', perTeam: { healer: 1, tank: 1 } }],
        },
      }),
    };
    expect(() => loadConfig(MatcherConfig, env)).toThrow(ConfigError);
    expect(() => loadConfig(MatcherConfig, env)).toThrow(
      /mode hunt: its roles rule asks for 2 players a team, its smallest team has 1/,
    );
  });

  it('gives a mode the attribute rules QUEUE_MODE_ATTRIBUTES declares for it', () => {
    const rules = matcherRules(
      loadConfig(MatcherConfig, {
        QUEUE_MODE_ATTRIBUTES: JSON.stringify({
          squad: {
            attributes: { buildVersion: { type: 'string', values: ['1', '2'] } },
            rules: [{ equal: 'buildVersion' }],
          },
        }),
      }),
    );
    expect(rules.find((r) => r.mode === 'squad')?.attributeRules).toEqual([
      { kind: 'equal', attribute: 'buildVersion' },
    ]);
    expect(rules.find((r) => r.mode === 'duel')?.attributeRules).toEqual([]);
  });

  it('lets MATCH_WIDENING_BY_MODE override one mode, "inf" meaning any rating', () => {
    const rules = matcherRules(
      loadConfig(MatcherConfig, { MATCH_WIDENING_BY_MODE: 'squad=0:60:150,20000:120:inf' }),
    );
    expect(rules.find((r) => r.mode === 'squad')?.widening).toEqual([
      { afterMs: 0, maxRttMs: 60, ratingWindow: 150 },
      { afterMs: 20_000, maxRttMs: 120, ratingWindow: Number.POSITIVE_INFINITY },
    ]);
    expect(rules.find((r) => r.mode === 'duel')?.widening).toHaveLength(3);
  });

  it('refuses steps that narrow, a first step after 0 and overrides of unknown modes, naming the variable', () => {
    const variables = {
      MATCH_WIDENING: '0:50:100,5000:40:100',
      MATCH_WIDENING_BY_MODE: 'chess=10:50:100',
    };
    // Each variable is well-formed on its own; only together with the rules do they fail.
    const config = { ...loadConfig(MatcherConfig, {}), ...variables };
    const expected = [
      'MATCH_WIDENING_BY_MODE names mode "chess", which QUEUE_MODES does not list',
      'MATCH_WIDENING step[1].maxRttMs must not narrow the step before (got "0:50:100,5000:40:100")',
      'MATCH_WIDENING_BY_MODE[chess] step[0].afterMs must be 0 (got "10:50:100")',
    ];
    expect(matcherRulesProblems(config)).toEqual(expected);
    expect(() => matcherRules(config)).toThrow(ConfigError);
    // Loading runs the same checks: the matcher's main.ts has none of its own.
    expect(() => loadConfig(MatcherConfig, variables)).toThrow(new ConfigError(expected));
  });

  it('rejects a malformed MATCH_WIDENING at load time with one clear reason', () => {
    expect(() => loadConfig(MatcherConfig, { MATCH_WIDENING: '0:50' })).toThrow(
      /^Invalid configuration: MATCH_WIDENING must be comma-separated afterMs:maxRttMs:ratingWindow steps/,
    );
  });

  it('parses steps as numbers', () => {
    expect(parseWideningSteps('0:5:10, 100:50:inf')).toEqual([
      { afterMs: 0, maxRttMs: 5, ratingWindow: 10 },
      { afterMs: 100, maxRttMs: 50, ratingWindow: Number.POSITIVE_INFINITY },
    ]);
  });
});
