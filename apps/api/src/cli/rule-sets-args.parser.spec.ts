import { parseRuleSetsArgs } from './rule-sets-args.parser';

describe(parseRuleSetsArgs.name, () => {
  it('reads each command with its argument, reason and actor', () => {
    expect(parseRuleSetsArgs(['list', '--json'])).toEqual({
      ok: true,
      help: false,
      json: true,
      operation: { kind: 'list' },
    });
    expect(parseRuleSetsArgs(['check', 'wide.json'])).toMatchObject({
      operation: { kind: 'check', file: 'wide.json' },
    });
    expect(parseRuleSetsArgs(['create', 'wide.json', '--reason=launch', '--actor=al'])).toEqual({
      ok: true,
      help: false,
      json: false,
      operation: { kind: 'create', file: 'wide.json', reason: 'launch', actor: 'al' },
    });
    expect(parseRuleSetsArgs(['activate', '12', '--reason=launch'])).toMatchObject({
      operation: { kind: 'activate', version: 12, reason: 'launch' },
    });
    expect(parseRuleSetsArgs(['rollback', '--reason=complaints'])).toMatchObject({
      operation: { kind: 'rollback', reason: 'complaints' },
    });
  });

  it.each([
    [['activate', 'two', '--reason=x'], 'activate needs a version (a positive integer)'],
    [['activate', '0', '--reason=x'], 'activate needs a version (a positive integer)'],
    [['activate', '3'], 'activate needs --reason=R for the audit trail'],
    [['create', '--reason=x'], 'create needs the rule set file'],
    [['rollback', '2', '--reason=x'], 'rollback takes no version'],
    [['check'], 'check needs the rule set file'],
    [
      ['rollback', '--reason=x', '--actor=a b'],
      '--actor must be 1-100 letters, digits, "_", ".", "@" or "-"',
    ],
    [['publish'], 'unknown command "publish"'],
  ])('refuses %j: %s', (argv, problem) => {
    expect(parseRuleSetsArgs(argv)).toEqual({ ok: false, problem });
  });
});
