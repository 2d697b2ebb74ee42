import { parseMigrateArgs } from './migrate-args.parser';

describe(parseMigrateArgs.name, () => {
  it('applies pending migrations when given no flag', () => {
    expect(parseMigrateArgs([])).toEqual({ ok: true, command: { kind: 'apply' } });
  });

  it.each([
    [['--status'], { kind: 'status' }],
    [['--help'], { kind: 'help' }],
    [['-h'], { kind: 'help' }],
    [['--rollback=1'], { kind: 'rollback', count: 1 }],
    [['--rollback=12'], { kind: 'rollback', count: 12 }],
  ])('parses %j', (argv, command) => {
    expect(parseMigrateArgs(argv)).toEqual({ ok: true, command });
  });

  it.each([
    ['--rollback'],
    ['--rollback='],
    ['--rollback=abc'],
    ['--rollback=0'],
    ['--rollback=-1'],
    ['--rollback=1.5'],
    ['--rollback=1e3'],
    ['--rollback= 2'],
    ['--rollback=99999999999999999999'],
  ])('rejects the malformed count in %s', (flag) => {
    const parsed = parseMigrateArgs([flag]);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem).toContain('--rollback needs a positive whole number');
  });

  it.each([
    [['--stauts']],
    [['status']],
    [['--status', '--rollback=1']],
    [['--rollback=1', 'extra']],
  ])('rejects %j', (argv) => {
    expect(parseMigrateArgs(argv)).toMatchObject({ ok: false });
  });
});
