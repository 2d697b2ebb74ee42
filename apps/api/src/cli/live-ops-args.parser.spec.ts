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
    expect(
      parseLiveOpsArgs(['cancel-match', '6F1C1E5E-8A3A-4D2E-9C51-1F0A3E2B7C4D', '--reason=stuck']),
    ).toMatchObject({
      ok: true,
      operation: { kind: 'cancel-match', matchId: '6f1c1e5e-8a3a-4d2e-9c51-1f0a3e2b7c4d' },
    });
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
    [['cancel-match', 'not-a-uuid', '--reason=x'], 'needs one match id (a UUID)'],
    [['release-tickets', '--reason=x'], 'needs one player id'],
    [['cancel-match', '6f1c1e5e-8a3a-4d2e-9c51-1f0a3e2b7c4d'], 'needs --reason'],
  ])('refuses %j naming the problem', (argv, problem) => {
    const parsed = parseLiveOpsArgs(argv);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.problem).toContain(problem);
  });
});
