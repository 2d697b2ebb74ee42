import { modeRulesOf, ruleSetProblems, ruleVariablesFromBody } from './rule-variables';

const base = { QUEUE_MODES: 'duel:1x2,squad:4x2' };

describe(ruleVariablesFromBody.name, () => {
  it('takes the rule variables, QUEUE_MODE_ATTRIBUTES as an object or its JSON', () => {
    const attributes = { duel: { attributes: { platform: { type: 'string', values: ['pc'] } } } };
    expect(
      ruleVariablesFromBody({ MATCH_WIDENING: '0:60:100', QUEUE_MODE_ATTRIBUTES: attributes }),
    ).toEqual({
      variables: { MATCH_WIDENING: '0:60:100', QUEUE_MODE_ATTRIBUTES: JSON.stringify(attributes) },
    });
  });

  it('names each variable that is not a rule variable, and refuses what is no object', () => {
    expect(ruleVariablesFromBody({ MATCHER_PASS_INTERVAL_MS: '5', FOO: 1 })).toEqual({
      problems: [
        {
          field: 'MATCHER_PASS_INTERVAL_MS',
          problem: expect.stringMatching(/^is not a rule variable/),
        },
        { field: 'FOO', problem: expect.stringMatching(/^is not a rule variable/) },
      ],
    });
    expect(ruleVariablesFromBody(['MATCH_WIDENING'])).toEqual({
      problems: [{ field: 'rules', problem: expect.stringMatching(/^must be a JSON object/) }],
    });
  });
});

describe(ruleSetProblems.name, () => {
  it('has none for rules the matcher would start with', () => {
    expect(ruleSetProblems(base, { MATCH_WIDENING_BY_MODE: 'squad=0:60:150' })).toEqual([]);
  });

  it('names the variable of each problem: a malformed variable first, then what well-formed ones break together', () => {
    const problems = ruleSetProblems(base, {
      MATCH_WIDENING: '0:50:100,5000:40:100',
      MATCH_WIDENING_BY_MODE: 'chess=0:50:100',
      QUEUE_MODE_ATTRIBUTES: '{"duel": {"rules": [{"equal": "platform"}]}}',
    });
    expect(problems.map((p) => p.field)).toEqual(['QUEUE_MODE_ATTRIBUTES']);
    const widening = ruleSetProblems(base, {
      MATCH_WIDENING: '0:50:100,5000:40:100',
      MATCH_WIDENING_BY_MODE: 'chess=0:50:100',
    });
    expect(widening).toEqual([
      {
        field: 'MATCH_WIDENING_BY_MODE',
        problem: 'MATCH_WIDENING_BY_MODE names mode "chess", which QUEUE_MODES does not list',
      },
      {
        field: 'MATCH_WIDENING',
        problem:
          'MATCH_WIDENING step[1].maxRttMs must not narrow the step before (got "0:50:100,5000:40:100")',
      },
    ]);
  });

  it("keeps the deployment's modes: shapes may change, names may not", () => {
    expect(ruleSetProblems(base, { QUEUE_MODES: 'duel:1x2,squad:5x2' })).toEqual([]);
    expect(ruleSetProblems(base, { QUEUE_MODES: 'duel:1x2' })).toEqual([
      { field: 'QUEUE_MODES', problem: expect.stringContaining('(duel, squad)') },
    ]);
  });
});

describe(modeRulesOf.name, () => {
  it('builds each mode with its own widening over the default', () => {
    const rules = modeRulesOf({
      QUEUE_MODES: 'duel:1x2,squad:4x2',
      MATCH_WIDENING: '0:50:100',
      MATCH_WIDENING_BY_MODE: 'squad=0:60:inf',
    });
    expect(rules.map((rule) => [rule.mode, rule.widening])).toEqual([
      ['duel', [{ afterMs: 0, maxRttMs: 50, ratingWindow: 100 }]],
      ['squad', [{ afterMs: 0, maxRttMs: 60, ratingWindow: Number.POSITIVE_INFINITY }]],
    ]);
  });
});
