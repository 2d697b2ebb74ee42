import { randomUUID } from 'node:crypto';
import { EVENT_TYPES, AGGREGATE_TYPE_OF, isEventType, type EventType } from './events';
import { compiledShapeAccepts, payloadProblems, shapeProblems } from './events.schemas';

const playerA = randomUUID();
const playerB = randomUUID();

function matchPayload(patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    matchId: randomUUID(),
    from: 'ALLOCATING',
    to: 'PROCESS_READY',
    region: 'eu-west',
    mode: 'duel',
    participants: [
      { playerId: playerA, ticketId: randomUUID(), team: 0 },
      { playerId: playerB, ticketId: randomUUID(), team: 1 },
    ],
    ...patch,
  };
}

function ticketPayload(patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ticketId: randomUUID(),
    from: 'SEARCHING',
    to: 'MATCHED',
    mode: 'duel',
    enqueuedAt: '2026-12-01T10:00:00.000Z',
    matchId: randomUUID(),
    ...patch,
  };
}

function ratingPayload(patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    playerId: playerA,
    reason: 'MATCH_RESULT',
    matchId: randomUUID(),
    mu: 27.6,
    sigma: 8.07,
    rating: 1665.3,
    previousMu: 25,
    previousSigma: 25 / 3,
    previousRating: 1500,
    ...patch,
  };
}

function without(payload: Record<string, unknown>, field: string): Record<string, unknown> {
  const { [field]: _omitted, ...rest } = payload;
  return rest;
}

const fields = (problems: { field: string }[]) => problems.map((problem) => problem.field);

describe('event registry', () => {
  it('knows exactly the events the domain emits, each with its aggregate type', () => {
    expect(EVENT_TYPES).toEqual([
      'match.state_changed',
      'match.participants_added',
      'match.presence_changed',
      'ticket.state_changed',
      'rating.updated',
      'backfill.state_changed',
    ]);
    expect(AGGREGATE_TYPE_OF).toEqual({
      'match.state_changed': 'match',
      'match.participants_added': 'match',
      'match.presence_changed': 'match',
      'ticket.state_changed': 'ticket',
      'rating.updated': 'player',
      'backfill.state_changed': 'backfill',
    });
    expect(isEventType('match.state_changed')).toBe(true);
    expect(isEventType('match.created')).toBe(false);
  });
});

describe('backfill payloads', () => {
  const requestId = '33333333-3333-4333-8333-333333333333';
  const matchId = '44444444-4444-4444-8444-444444444444';
  const player = '55555555-5555-4555-8555-555555555555';
  const backfill = (overrides: Record<string, unknown> = {}) => ({
    requestId,
    matchId,
    mode: 'squad',
    team: 1,
    slots: 1,
    from: 'OPEN',
    to: 'MATCHED',
    playerIds: [player],
    expiresAt: '2026-12-03T18:00:00.000Z',
    ...overrides,
  });

  it('accepts each step of a backfill request and refuses a skipped one or a missing reason', () => {
    const problemsOf = (payload: unknown) => payloadProblems('backfill.state_changed', payload);
    expect(problemsOf(backfill({ from: null, to: 'OPEN', playerIds: [] }))).toEqual([]);
    expect(problemsOf(backfill())).toEqual([]);
    expect(problemsOf(backfill({ from: 'MATCHED', to: 'PUBLISHED', rosterRevision: 2 }))).toEqual(
      [],
    );
    expect(problemsOf(backfill({ to: 'EXPIRED', reason: 'TIMED_OUT', playerIds: [] }))).toEqual([]);
    expect(problemsOf(backfill({ from: 'OPEN', to: 'FILLED' }))[0]?.field).toBe('payload.to');
    expect(problemsOf(backfill({ to: 'CANCELLED', playerIds: [] }))[0]?.field).toBe(
      'payload.reason',
    );
    expect(problemsOf(backfill({ playerIds: [] }))[0]?.field).toBe('payload.playerIds');
    expect(problemsOf(backfill({ playerIds: ['nope'] }))[0]?.field).toBe('payload.playerIds');
  });

  it('accepts players added to a match only when they are on the roster it carries', () => {
    const problemsOf = (payload: unknown) => payloadProblems('match.participants_added', payload);
    const stayed = {
      playerId: '66666666-6666-4666-8666-666666666666',
      ticketId: requestId,
      team: 0,
    };
    const added = { playerId: player, ticketId: '77777777-7777-4777-8777-777777777777', team: 1 };
    const payload = {
      matchId,
      state: 'IN_PROGRESS',
      region: 'eu-west',
      mode: 'squad',
      participants: [stayed, added],
      added: [added],
      backfillRequestId: requestId,
    };
    expect(problemsOf(payload)).toEqual([]);
    expect(problemsOf({ ...payload, participants: [stayed] })[0]?.field).toBe('payload.added');
    expect(problemsOf({ ...payload, added: [] })[0]?.field).toBe('payload.added');
  });
});

describe('match.state_changed payload', () => {
  const problemsOf = (payload: unknown) => payloadProblems('match.state_changed', payload);

  it('accepts a valid payload, and a creation from null', () => {
    expect(problemsOf(matchPayload())).toEqual([]);
    expect(problemsOf(matchPayload({ from: null, to: 'ALLOCATING' }))).toEqual([]);
    expect(problemsOf(matchPayload({ to: 'FAILED', reason: 'ALLOCATION_FAILED' }))).toEqual([]);
    expect(
      problemsOf(
        matchPayload({ from: 'IN_PROGRESS', to: 'CANCELLED', reason: 'OPERATOR_CANCELLED' }),
      ),
    ).toEqual([]);
  });

  it.each(['matchId', 'from', 'to', 'region', 'mode', 'participants'])('requires %s', (field) => {
    expect(fields(problemsOf(without(matchPayload(), field)))).toContain(`payload.${field}`);
  });

  it.each([
    ['a non-uuid matchId', { matchId: 'm-1' }, 'payload.matchId'],
    ['an unknown state', { to: 'EXPLODED' }, 'payload.to'],
    ['an unknown from', { from: 'LIMBO' }, 'payload.from'],
    ['a lowercase state', { to: 'process_ready' }, 'payload.to'],
    ['a region that is a number', { region: 1 }, 'payload.region'],
    ['an empty mode', { mode: '' }, 'payload.mode'],
    ['a mode over 64 characters', { mode: 'x'.repeat(65) }, 'payload.mode'],
    ['a region with a trailing space', { region: 'eu-west ' }, 'payload.region'],
    [
      'participants that are not an array',
      { participants: { 0: { playerId: playerA } } },
      'payload.participants',
    ],
    ['no participants', { participants: [] }, 'payload.participants'],
    ['a participant that is not an object', { participants: ['p1'] }, 'payload.participants.0'],
    [
      'a participant without its ticket',
      { participants: [{ playerId: playerA, team: 0 }] },
      'payload.participants.0.ticketId',
    ],
    [
      'a negative team',
      { participants: [{ playerId: playerA, ticketId: randomUUID(), team: -1 }] },
      'payload.participants.0.team',
    ],
    [
      'a fractional team',
      { participants: [{ playerId: playerA, ticketId: randomUUID(), team: 0.5 }] },
      'payload.participants.0.team',
    ],
    [
      'a team given as a string',
      { participants: [{ playerId: playerA, ticketId: randomUUID(), team: '0' }] },
      'payload.participants.0.team',
    ],
    [
      'an unknown participant field',
      { participants: [{ playerId: playerA, ticketId: randomUUID(), team: 0, rating: 1 }] },
      'payload.participants.0.rating',
    ],
    ['an unknown field', { extra: 1 }, 'payload.extra'],
    ['a null reason', { reason: null }, 'payload.reason'],
  ])('rejects %s', (_, patch, field) => {
    expect(fields(problemsOf(matchPayload(patch)))).toContain(field);
  });

  it.each([
    [
      'a transition the machine does not have',
      { from: 'ALLOCATING', to: 'COMPLETED' },
      'payload.to',
    ],
    [
      'a way out of a terminal state',
      { from: 'COMPLETED', to: 'FAILED', reason: 'SERVER_LOST' },
      'payload.to',
    ],
    ['a creation into anything but ALLOCATING', { from: null, to: 'PROCESS_READY' }, 'payload.to'],
    ['FAILED without a reason', { to: 'FAILED' }, 'payload.reason'],
    [
      'FAILED with a cancel reason',
      { to: 'FAILED', reason: 'OPERATOR_CANCELLED' },
      'payload.reason',
    ],
    ['CANCELLED with a failure reason', { to: 'CANCELLED', reason: 'NO_SHOW' }, 'payload.reason'],
    ['a reason on a forward step', { reason: 'SERVER_LOST' }, 'payload.reason'],
    ['a free-text reason', { to: 'FAILED', reason: 'allocation failed' }, 'payload.reason'],
  ])('rejects %s', (_, patch, field) => {
    expect(fields(problemsOf(matchPayload(patch)))).toEqual([field]);
  });

  it('rejects a player or a ticket twice in the roster', () => {
    const ticketId = randomUUID();
    expect(
      problemsOf(
        matchPayload({
          participants: [
            { playerId: playerA, ticketId: randomUUID(), team: 0 },
            { playerId: playerA, ticketId: randomUUID(), team: 1 },
          ],
        }),
      ),
    ).toEqual([{ field: 'payload.participants', message: expect.stringMatching(/appears twice/) }]);
    expect(
      fields(
        problemsOf(
          matchPayload({
            participants: [
              { playerId: playerA, ticketId, team: 0 },
              { playerId: playerB, ticketId, team: 1 },
            ],
          }),
        ),
      ),
    ).toEqual(['payload.participants']);
  });

  it.each([
    ['null', null],
    ['an array', []],
    ['a string', 'payload'],
    ['a Date', new Date()],
    ['a class instance', new (class Payload {})()],
  ])('rejects a payload that is %s', (_, payload) => {
    expect(problemsOf(payload)).toEqual([
      { field: 'payload', message: expect.stringMatching(/must be a JSON object/) },
    ]);
  });

  it('is not fooled by a __proto__ key in parsed JSON', () => {
    const payload = JSON.parse(
      `{"__proto__": {"matchId": "${randomUUID()}"}, "to": "PROCESS_READY"}`,
    ) as unknown;
    expect(problemsOf(payload).length).toBeGreaterThan(0);
  });
});

describe('ticket.state_changed payload', () => {
  const problemsOf = (payload: unknown) => payloadProblems('ticket.state_changed', payload);

  it('accepts valid payloads through the lifecycle', () => {
    const matchId = randomUUID();
    expect(problemsOf(ticketPayload({ matchId }))).toEqual([]);
    expect(problemsOf(without(ticketPayload({ from: null, to: 'SEARCHING' }), 'matchId'))).toEqual(
      [],
    );
    expect(
      problemsOf(ticketPayload({ from: 'MATCHED', to: 'SEARCHING', reason: 'MATCH_FAILED' })),
    ).toEqual([]);
    expect(
      problemsOf(ticketPayload({ from: 'ASSIGNED', to: 'FAILED', reason: 'NO_SHOW' })),
    ).toEqual([]);
    expect(
      problemsOf(without(ticketPayload({ to: 'EXPIRED', reason: 'HEARTBEAT_TIMEOUT' }), 'matchId')),
    ).toEqual([]);
  });

  it.each(['ticketId', 'from', 'to', 'mode', 'enqueuedAt'])('requires %s', (field) => {
    expect(fields(problemsOf(without(ticketPayload(), field)))).toContain(`payload.${field}`);
  });

  it.each([
    ['a non-uuid ticketId', { ticketId: 't-1' }, 'payload.ticketId'],
    ['an unknown state', { to: 'LOST' }, 'payload.to'],
    [
      'an enqueuedAt without milliseconds',
      { enqueuedAt: '2026-12-01T10:00:00Z' },
      'payload.enqueuedAt',
    ],
    [
      'an enqueuedAt with an offset',
      { enqueuedAt: '2026-12-01T11:00:00.000+01:00' },
      'payload.enqueuedAt',
    ],
    [
      'an enqueuedAt that is no date',
      { enqueuedAt: '2026-02-30T10:00:00.000Z' },
      'payload.enqueuedAt',
    ],
    ['an enqueuedAt in epoch ms', { enqueuedAt: 1764583200000 }, 'payload.enqueuedAt'],
    ['a non-uuid matchId', { matchId: 'm-1' }, 'payload.matchId'],
    ['an unknown field', { region: 'eu' }, 'payload.region'],
    [
      'a reason outside the ticket codes',
      { from: 'MATCHED', to: 'FAILED', reason: 'SERVER_LOST' },
      'payload.reason',
    ],
  ])('rejects %s', (_, patch, field) => {
    expect(fields(problemsOf(ticketPayload(patch)))).toContain(field);
  });

  it.each([
    ['a MATCHED that names no match', without(ticketPayload(), 'matchId'), 'payload.matchId'],
    [
      'a creation that names a match',
      ticketPayload({ from: null, to: 'SEARCHING' }),
      'payload.matchId',
    ],
    [
      'a requeue that does not name the match it left',
      without(
        ticketPayload({ from: 'ASSIGNED', to: 'SEARCHING', reason: 'MATCH_FAILED' }),
        'matchId',
      ),
      'payload.matchId',
    ],
    [
      'a transition the machine does not have',
      ticketPayload({ from: 'MATCHED', to: 'COMPLETED' }),
      'payload.to',
    ],
    [
      'a creation into anything but SEARCHING',
      ticketPayload({ from: null, to: 'MATCHED' }),
      'payload.to',
    ],
    [
      'a requeue without its reason',
      ticketPayload({ from: 'MATCHED', to: 'SEARCHING' }),
      'payload.reason',
    ],
    [
      'a no-show before the assignment',
      ticketPayload({ from: 'MATCHED', to: 'FAILED', reason: 'NO_SHOW' }),
      'payload.reason',
    ],
    ['a reason on a forward step', ticketPayload({ reason: 'MATCH_FAILED' }), 'payload.reason'],
  ])('rejects %s', (_, payload, field) => {
    expect(fields(problemsOf(payload))).toEqual([field]);
  });
});

describe('rating.updated payload', () => {
  const problemsOf = (payload: unknown) => payloadProblems('rating.updated', payload);

  it('accepts a match result with its match and an import without one', () => {
    expect(problemsOf(ratingPayload())).toEqual([]);
    expect(problemsOf(without(ratingPayload({ reason: 'OPERATOR_IMPORT' }), 'matchId'))).toEqual(
      [],
    );
  });

  it.each([
    ['a sigma of 0', ratingPayload({ sigma: 0 }), 'payload.sigma'],
    ['an infinite mu', ratingPayload({ mu: Number.POSITIVE_INFINITY }), 'payload.mu'],
    ['a NaN rating', ratingPayload({ previousRating: Number.NaN }), 'payload.previousRating'],
    ['an unknown reason', ratingPayload({ reason: 'DECAY' }), 'payload.reason'],
    ['a match result without its match', without(ratingPayload(), 'matchId'), 'payload.matchId'],
    ['an import naming a match', ratingPayload({ reason: 'OPERATOR_IMPORT' }), 'payload.matchId'],
  ])('rejects %s', (_, payload, field) => {
    expect(fields(problemsOf(payload))).toEqual([field]);
  });
});

describe('the compiled payload schemas', () => {
  /** Values a buggy writer might put anywhere: right and wrong types, near misses. */
  const VALUES: readonly (() => unknown)[] = [
    () => undefined,
    () => null,
    () => '',
    () => 'x',
    () => 'eu-west',
    () => ' eu-west',
    () => 'e'.repeat(70),
    () => 'ALLOCATING',
    () => 'PROCESS_READY',
    () => 'SEARCHING',
    () => 'MATCHED',
    () => 'FAILED',
    () => 'ALLOCATION_FAILED',
    () => 'PLAYER_CANCELLED',
    () => 'MATCH_FAILED',
    () => 'MATCH_RESULT',
    () => 0,
    () => Number.POSITIVE_INFINITY,
    () => 1,
    () => -1,
    () => 1.5,
    () => Number.NaN,
    () => true,
    () => [],
    () => ({}),
    () => new Date('2026-12-01T10:00:00.000Z'),
    () => randomUUID(),
    () => randomUUID().toUpperCase(),
    () => '00000000-0000-0000-0000-000000000000',
    () => '2026-12-01T10:00:00.000Z',
    () => '2026-12-01T10:00:00Z',
    () => [{ playerId: randomUUID(), ticketId: randomUUID(), team: 0 }],
    () => [{ playerId: playerA, ticketId: randomUUID(), team: 0, extra: 1 }],
    () => [{ playerId: playerA, ticketId: randomUUID(), team: 0 }, 'x'],
  ];
  /**
   * Shapes the compiled schema does not model and hands to class-validator, which may accept them
   * (an array of arrays of participants, objects without a prototype, Sets): there the compiled
   * schema must only never say yes where class-validator says no.
   */
  const EXOTIC: readonly (() => unknown)[] = [
    () => [[{ playerId: randomUUID(), ticketId: randomUUID(), team: 0 }]],
    () => [
      Object.assign(Object.create(null) as object, {
        playerId: playerA,
        ticketId: randomUUID(),
        team: 0,
      }),
    ],
    () => new Set([1]),
    () => Object.assign(Object.create(null) as object, { a: 1 }),
  ];
  const FIELDS = [
    'playerId',
    'sigma',
    'mu',
    'matchId',
    'ticketId',
    'from',
    'to',
    'reason',
    'region',
    'mode',
    'enqueuedAt',
    'participants',
    'extra',
    'participants.0.playerId',
    'participants.0.ticketId',
    'participants.0.team',
    'participants.1.team',
    'participants.0.extra',
  ];

  /** A copy of `payload` with `field` set to `value` (undefined: deleted). */
  function mutated(
    payload: Record<string, unknown>,
    field: string,
    value: unknown,
  ): Record<string, unknown> {
    const copy: Record<string, unknown> = {
      ...payload,
      ...(Array.isArray(payload.participants)
        ? {
            participants: (payload.participants as unknown[]).map((p) =>
              typeof p === 'object' && p !== null ? { ...p } : p,
            ),
          }
        : {}),
    };
    const [head, index, leaf] = field.split('.') as [string, string?, string?];
    const target =
      leaf === undefined
        ? copy
        : (copy[head] as Record<string, unknown>[] | undefined)?.[Number(index)];
    const key = leaf ?? head;
    if (!target || typeof target !== 'object') return copy;
    if (value === undefined) delete target[key];
    else target[key] = value;
    return copy;
  }

  const bases: [EventType, () => Record<string, unknown>][] = [
    ['match.state_changed', () => matchPayload()],
    ['match.state_changed', () => matchPayload({ from: null, to: 'ALLOCATING' })],
    ['match.state_changed', () => matchPayload({ to: 'FAILED', reason: 'ALLOCATION_FAILED' })],
    ['ticket.state_changed', () => ticketPayload()],
    [
      'ticket.state_changed',
      () => without(ticketPayload({ from: null, to: 'SEARCHING' }), 'matchId'),
    ],
    [
      'ticket.state_changed',
      () => ticketPayload({ from: 'MATCHED', to: 'SEARCHING', reason: 'MATCH_FAILED' }),
    ],
    ['rating.updated', () => ratingPayload()],
    ['rating.updated', () => without(ratingPayload({ reason: 'OPERATOR_IMPORT' }), 'matchId')],
  ];

  it('accepts exactly the payloads class-validator accepts, over single and double mutations of valid ones', () => {
    let accepted = 0;
    let rejected = 0;
    const check = (
      event: EventType,
      payload: Record<string, unknown>,
      what: string,
      exotic = false,
    ) => {
      const authority = shapeProblems(event, payload).length === 0;
      const compiled = compiledShapeAccepts(event, payload);
      if (compiled ? !authority : authority && !exotic)
        throw new Error(`${event} ${what}: compiled ${compiled}, class-validator ${authority}`);
      if (authority) accepted += 1;
      else rejected += 1;
    };
    for (const [event, base] of bases) {
      check(event, base(), 'unchanged');
      FIELDS.forEach((field, f) => {
        VALUES.forEach((value, v) => {
          const once = mutated(base(), field, value());
          check(event, once, `${field}=#${v}`);
          // A second mutation on a deterministic stride: pairs of faults, and faults undone.
          const other = FIELDS[(f * 7 + v * 3 + 1) % FIELDS.length] as string;
          const second = VALUES[(v * 5 + f + 2) % VALUES.length] as () => unknown;
          check(event, mutated(once, other, second()), `${field}=#${v}, ${other}`);
        });
      });
    }
    for (const [event, base] of bases) {
      for (const field of FIELDS) {
        EXOTIC.forEach((value, v) =>
          check(event, mutated(base(), field, value()), `${field}=exotic #${v}`, true),
        );
      }
    }
    // Both verdicts were exercised in earnest.
    expect(accepted).toBeGreaterThan(100);
    expect(rejected).toBeGreaterThan(1_000);
  });

  it('still lets class-validator word the problems of a payload it refuses', () => {
    expect(payloadProblems('match.state_changed', matchPayload({ region: ' eu-west' }))).toEqual(
      shapeProblems('match.state_changed', matchPayload({ region: ' eu-west' })),
    );
  });
});
