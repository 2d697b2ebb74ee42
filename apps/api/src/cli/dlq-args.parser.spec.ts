import { parseDlqArgs } from './dlq-args.parser';

describe(parseDlqArgs.name, () => {
  it.each([
    [['list'], { kind: 'list', filter: {}, limit: undefined, cursor: undefined }],
    [
      [
        'list',
        '--event=match.state_changed',
        '--aggregate=3f1c2b9e-8a4d-4c5e-9f00-1234567890ab',
        '--limit=10',
        '--cursor=abc_-',
      ],
      {
        kind: 'list',
        filter: {
          event: 'match.state_changed',
          aggregateId: '3f1c2b9e-8a4d-4c5e-9f00-1234567890ab',
        },
        limit: 10,
        cursor: 'abc_-',
      },
    ],
    [['show', '42'], { kind: 'show', id: '42' }],
    [
      ['replay', '42', '--reason=fixed', '--actor=alice'],
      { kind: 'replay', id: '42', reason: 'fixed', actor: 'alice' },
    ],
    [
      ['replay', '--all', '--reason=outage over'],
      { kind: 'replay-matching', filter: {}, all: true, reason: 'outage over' },
    ],
    [
      ['replay', '--event=ticket.state_changed', '--reason=x'],
      {
        kind: 'replay-matching',
        filter: { event: 'ticket.state_changed' },
        all: false,
        reason: 'x',
      },
    ],
    [['discard', '7', '--reason=a=b'], { kind: 'discard', id: '7', reason: 'a=b' }],
    [['stats'], { kind: 'stats' }],
  ])('parses %j', (argv, operation) => {
    expect(parseDlqArgs(argv)).toEqual({
      ok: true,
      help: false,
      json: false,
      operation: expect.objectContaining(operation) as unknown,
    });
  });

  it('reads --from and --to as instants, a plain date as UTC midnight', () => {
    const parsed = parseDlqArgs([
      'list',
      '--from=2025-03-01',
      '--to=2025-03-02T12:30:00+02:00',
      '--json',
    ]);
    expect(parsed).toMatchObject({
      ok: true,
      json: true,
      operation: {
        filter: { from: new Date('2025-03-01T00:00:00Z'), to: new Date('2025-03-02T10:30:00Z') },
      },
    });
  });

  it.each([['--help'], ['-h'], ['list', '--help']])('%s asks for help', (...argv) => {
    expect(parseDlqArgs(argv)).toEqual({ ok: true, help: true });
  });

  it.each([
    [[], 'a command is required'],
    [['purge'], 'unknown command "purge"'],
    [['list', '--verbose'], 'unknown flag "--verbose"'],
    [['list', '--event=a', '--event=b'], '--event is given twice'],
    [['list', '--event'], '--event needs a value'],
    [['list', '--to=2025-03-01T10:00:00'], '--to must be an ISO 8601 instant with Z or an offset'],
    [['list', '--from=2025-03-02', '--to=2025-03-01'], '--from must not be later than --to'],
    [['list', '--limit=501'], '--limit must be a whole number from 1 to 500'],
    [['show', '0'], 'the id must be a positive whole number'],
    [['show', '1', '2'], 'unexpected argument "2"'],
    [['show', '1', '--reason=x'], 'show does not take --reason'],
    [['replay', '1', '--reason=  '], 'replay needs --reason=... for the audit trail'],
    [['replay', '--reason=x'], 'replay needs an id, a filter'],
    [['replay', '1', '--event=x', '--reason=x'], 'replay takes an id or a selection'],
    [['replay', '1', '--reason=x', '--actor=has space'], '--actor must be'],
    [['discard', '--reason=x'], 'discard needs the id of a dead letter'],
    [['stats', '--all'], 'stats does not take --all'],
  ])('rejects %j', (argv, problem) => {
    const parsed = parseDlqArgs(argv);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem).toContain(problem);
  });
});
