import { parseLiveOpsArgs } from './live-ops-args.parser';

describe(parseLiveOpsArgs.name, () => {
  it('reads a pause with its expected duration and actor', () => {
    expect(
      parseLiveOpsArgs([
        'pause',
        'region',
        'eu-west',
        '--reason=fleet',
        '--retry-after=60',
        '--actor=al',
      ]),
    ).toEqual({
      ok: true,
      help: false,
      json: false,
      operation: {
        kind: 'pause',
        scope: 'region',
        name: 'eu-west',
        reason: 'fleet',
        retryAfterSeconds: 60,
        actor: 'al',
      },
    });
    expect(parseLiveOpsArgs(['list', '--json'])).toMatchObject({ ok: true, json: true });
  });

  it.each([
    [['stop', 'mode', 'duel', '--reason=x'], 'unknown command "stop"'],
    [['pause', 'galaxy', 'duel', '--reason=x'], 'needs "mode" or "region"'],
    [['pause', 'mode', '--reason=x'], 'needs one name'],
    [['drain', 'mode', 'duel', '--reason=  '], 'needs --reason'],
    [['drain', 'mode', 'duel', '--reason=x', '--retry-after=5'], 'with pause only'],
    [['pause', 'mode', 'duel', '--reason=x', '--retry-after=0'], 'at least 1'],
    [['pause', 'mode', 'duel', '--reason=x', '--actor=a b'], '--actor must be'],
    [['pause', 'mode', 'duel', '--bogus'], "Unknown option '--bogus'"],
  ])('refuses %j naming the problem', (argv, problem) => {
    const parsed = parseLiveOpsArgs(argv);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.problem).toContain(problem);
  });
});
