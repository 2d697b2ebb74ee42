import { parseModeAttributeSchema, type ModeAttributeSchema } from './attribute-rules';
import type { ModeRules } from './mode-rules';
import { ruleSetFit } from './rule-set-fit';

const squad: ModeRules = {
  mode: 'squad',
  teamSize: 3,
  teamCount: 2,
  widening: [{ afterMs: 0, maxRttMs: 50, ratingWindow: 100 }],
};

function schemaOf(value: unknown): ModeAttributeSchema {
  const { schema, problems } = parseModeAttributeSchema(value, 'squad');
  expect(problems).toEqual([]);
  return schema;
}

/** The new version: platforms pc and console only, a region pool declared with a default. */
const version = schemaOf({
  attributes: {
    platform: { type: 'string', values: ['pc', 'console'] },
    pool: { type: 'string', values: ['main', 'beta'], default: 'main' },
  },
  rules: [{ equal: 'platform' }, { equal: 'pool' }],
});

describe(ruleSetFit.name, () => {
  it('takes a ticket whose attributes the version accepts, filling what it declared since with its default', () => {
    expect(ruleSetFit({ attributes: { platform: 'pc' } }, squad, version)).toEqual({
      fits: true,
      attributes: { platform: 'pc', pool: 'main' },
      unchanged: false,
    });
  });

  it('ignores an attribute the version no longer declares: dropping one ends no ticket', () => {
    expect(ruleSetFit({ attributes: { platform: 'pc', build: '1.2' } }, squad, version)).toEqual({
      fits: true,
      attributes: { platform: 'pc', pool: 'main' },
      unchanged: false,
    });
  });

  it('says a ticket that fits as it is is unchanged, so a pass can keep it rather than copy it', () => {
    expect(ruleSetFit({ attributes: { pool: 'beta', platform: 'pc' } }, squad, version)).toEqual({
      fits: true,
      attributes: { platform: 'pc', pool: 'beta' },
      unchanged: true,
    });
    const noAttributes = ruleSetFit({}, squad, schemaOf({}));
    expect(noAttributes).toEqual({ fits: true, attributes: {}, unchanged: false });
  });

  it('refuses a value the version no longer declares, and a required attribute the ticket lacks, naming them', () => {
    const mobile = ruleSetFit({ attributes: { platform: 'mobile' } }, squad, version);
    expect(mobile).toEqual({
      fits: false,
      problem: 'the ticket no longer fits mode squad: platform must be one of "pc", "console"',
    });
    expect(ruleSetFit({ attributes: {} }, squad, version)).toEqual({
      fits: false,
      problem: 'the ticket no longer fits mode squad: platform is required',
    });
  });

  it("refuses a party larger than the mode's teams now hold", () => {
    const party = { id: '00000000-0000-4000-8000-000000000001', size: 4 };
    expect(ruleSetFit({ attributes: { platform: 'pc' }, party }, squad, version)).toEqual({
      fits: false,
      problem: 'a party of 4 no longer fits mode squad, whose teams now hold at most 3',
    });
    expect(
      ruleSetFit({ attributes: { platform: 'pc' }, party: { ...party, size: 3 } }, squad, version),
    ).toMatchObject({ fits: true });
  });
});
