import { randomUUID } from 'node:crypto';
import {
  createMatch,
  createTicket,
  foldMatchEvents,
  matchExits,
  transitionMatch,
  transitionTicket,
  type DomainEvent,
  type MatchCommand,
  type MatchHistoryEvent,
  type MatchSnapshot,
} from '@matchplane/domain';
import {
  buildEnvelope,
  envelopeFor,
  envelopesFor,
  INT64_MAX,
  validateEnvelope,
  type EnvelopeInput,
  type OutboxEnvelope,
  type StoredEnvelope,
} from './envelope.builder';
import { InvalidEnvelopeError } from './envelope.error';
import type { OutboxRow } from './outbox.row';

const t0 = new Date('2026-12-01T10:00:00.000Z');

function newParticipants(count = 2) {
  return Array.from({ length: count }, (_, index) => ({
    playerId: randomUUID(),
    ticketId: randomUUID(),
    team: index % 2,
  }));
}

/** A valid envelope input: the second event of a fresh match. */
function validInput(): EnvelopeInput<'match.state_changed'> {
  const created = createMatch(
    { id: randomUUID(), mode: 'duel', region: 'eu-west', participants: newParticipants() },
    t0,
  );
  return transitionMatch(created.match, { to: 'PROCESS_READY' }, t0).events[0]!;
}

/** Lets a test hand the builder what a buggy writer would. */
function mangled(patch: Record<string, unknown>, base: object = validInput()): EnvelopeInput {
  return { ...base, ...patch } as unknown as EnvelopeInput;
}

function rejection(run: () => unknown): InvalidEnvelopeError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidEnvelopeError) return error;
    throw error;
  }
  throw new Error('expected the envelope to be rejected');
}

const fieldsOf = (error: InvalidEnvelopeError) => error.problems.map((problem) => problem.field);

function rowOf(
  envelope: EnvelopeInput | OutboxEnvelope,
  revision: unknown = String(envelope.revision),
): OutboxRow {
  return {
    id: '1',
    event: envelope.event,
    aggregate_type: envelope.aggregateType,
    aggregate_id: envelope.aggregateId,
    revision: revision as string,
    occurred_at: envelope.occurredAt,
    player_ids: [...envelope.playerIds],
    // As jsonb gives it back: parsed JSON, sharing nothing with the writer's object.
    payload: JSON.parse(JSON.stringify(envelope.payload)) as Record<string, unknown>,
    status: 'pending',
    attempts: 0,
    last_error: null,
    next_attempt_at: t0,
    claimed_at: null,
    claim_token: null,
    claimed_by: null,
    published_at: null,
    dead_lettered_at: null,
    created_at: t0,
    traceparent: null,
  };
}

describe(buildEnvelope.name, () => {
  it('accepts a complete envelope and returns a frozen copy', () => {
    const input = validInput();
    const envelope = buildEnvelope(input);
    expect(envelope).toEqual({
      ...input,
      occurredAt: input.occurredAt,
      playerIds: [...input.playerIds],
    });
    expect(Object.isFrozen(envelope)).toBe(true);
    expect(Object.isFrozen(envelope.playerIds)).toBe(true);
    expect(Object.isFrozen(envelope.payload)).toBe(true);
    if (envelope.event === 'match.state_changed')
      expect(Object.isFrozen(envelope.payload.participants[0])).toBe(true);
    expect(envelope.occurredAt).not.toBe(input.occurredAt);
  });

  it('shares nothing mutable with what the writer passed', () => {
    const input = validInput();
    const participants = input.payload.participants.map((p) => ({ ...p }));
    const fresh = {
      ...input,
      occurredAt: new Date(input.occurredAt.getTime()),
      playerIds: [...input.playerIds],
      payload: { ...input.payload, participants },
    };
    const envelope = buildEnvelope(fresh);
    participants[0]!.team = 9;
    fresh.occurredAt.setTime(0);
    expect(
      envelope.event === 'match.state_changed' && envelope.payload.participants[0]!.team,
    ).not.toBe(9);
    expect(envelope.occurredAt.getTime()).toBe(t0.getTime());
  });

  it.each([
    'event',
    'aggregateType',
    'aggregateId',
    'revision',
    'occurredAt',
    'playerIds',
    'payload',
  ])('rejects an envelope without %s, naming the field', (field) => {
    const { [field as keyof EnvelopeInput]: _omitted, ...rest } = validInput();
    const error = rejection(() => buildEnvelope(rest as unknown as EnvelopeInput));
    expect(fieldsOf(error)).toContain(field);
    expect(error.message).toContain(field);
  });

  it.each([
    'event',
    'aggregateType',
    'aggregateId',
    'revision',
    'occurredAt',
    'playerIds',
    'payload',
  ])('rejects %s set to null', (field) => {
    expect(fieldsOf(rejection(() => buildEnvelope(mangled({ [field]: null }))))).toContain(field);
  });

  it('lists every problem at once, not just the first', () => {
    const error = rejection(() =>
      buildEnvelope(
        mangled({ aggregateId: 'm-1', revision: -1, occurredAt: 'yesterday', playerIds: [] }),
      ),
    );
    expect(fieldsOf(error)).toEqual(
      expect.arrayContaining(['aggregateId', 'revision', 'occurredAt', 'playerIds']),
    );
  });

  it('rejects a field that is not part of the envelope', () => {
    expect(fieldsOf(rejection(() => buildEnvelope(mangled({ id: '7' }))))).toEqual(['id']);
  });

  describe('revision', () => {
    it.each([
      ['the -1 sentinel of a CTE that matched nothing', -1, /-1 \(the sentinel/],
      ['zero', 0, />= 1/],
      ['a float', 1.5, /integer/],
      ['NaN', Number.NaN, /integer/],
      ['Infinity', Number.POSITIVE_INFINITY, /integer/],
      ['a number past 2^53 - 1', 2 ** 53, /pass a bigint/],
      ['a decimal string', '3', /strings are refused/],
      ['a bigint over int64', 2n ** 63n, /overflows int64/],
      ['a negative bigint', -1n, />= 1/],
      ['a zero bigint', 0n, />= 1/],
      ['a boolean', true, /number or bigint/],
    ])('rejects %s, never coercing it', (_, revision, message) => {
      const error = rejection(() => buildEnvelope(mangled({ revision })));
      expect(error.problems).toEqual([
        { field: 'revision', message: expect.stringMatching(message) },
      ]);
    });

    it.each([
      [2, 2],
      [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
      [7n, 7],
      [2n ** 53n + 1n, 2n ** 53n + 1n],
      [INT64_MAX, INT64_MAX],
    ])('accepts %p as %p: a number when exact, a bigint beyond', (revision, expected) => {
      expect(buildEnvelope(mangled({ revision })).revision).toBe(expected);
    });

    it('ties revision 1 to the creation and the creation to revision 1', () => {
      const created = createMatch(
        { id: randomUUID(), mode: 'duel', region: 'eu', participants: newParticipants() },
        t0,
      ).events[0]!;
      expect(fieldsOf(rejection(() => buildEnvelope({ ...created, revision: 2 })))).toEqual([
        'revision',
      ]);
      expect(fieldsOf(rejection(() => buildEnvelope({ ...validInput(), revision: 1 })))).toEqual([
        'payload.from',
      ]);
    });
  });

  it.each([
    ['an unknown event type', { event: 'match.exploded' }, 'event'],
    ['the wrong aggregate type', { aggregateType: 'ticket' }, 'aggregateType'],
    ['a non-uuid aggregate id', { aggregateId: 'match-1' }, 'aggregateId'],
    ['an uppercase aggregate id', { aggregateId: randomUUID().toUpperCase() }, 'aggregateId'],
    ['the nil uuid', { aggregateId: '00000000-0000-0000-0000-000000000000' }, 'aggregateId'],
    ['an invalid date', { occurredAt: new Date('nope') }, 'occurredAt'],
    ['a date string', { occurredAt: '2026-12-01T10:00:00Z' }, 'occurredAt'],
    ['epoch milliseconds', { occurredAt: t0.getTime() }, 'occurredAt'],
    ['the epoch a null became', { occurredAt: new Date(0) }, 'occurredAt'],
    [
      'seconds mistaken for milliseconds',
      { occurredAt: new Date(t0.getTime() * 1000) },
      'occurredAt',
    ],
    ['playerIds that are not an array', { playerIds: 'p1' }, 'playerIds'],
    ['no players', { playerIds: [] }, 'playerIds'],
    ['a payload that is JSON null', { payload: null }, 'payload'],
    ['a payload that is an array', { payload: [] }, 'payload'],
    ['a payload that is a string', { payload: '{}' }, 'payload'],
  ])('rejects %s', (_, patch, field) => {
    expect(fieldsOf(rejection(() => buildEnvelope(mangled(patch))))).toContain(field);
  });

  describe('playerIds', () => {
    it('rejects a repeated player rather than deduplicating it', () => {
      const input = validInput();
      const error = rejection(() =>
        buildEnvelope({ ...input, playerIds: [...input.playerIds, input.playerIds[0]!] }),
      );
      expect(error.problems).toEqual([
        { field: 'playerIds[2]', message: expect.stringMatching(/repeats player/) },
      ]);
    });

    it('names each malformed id by its index', () => {
      const input = validInput();
      const error = rejection(() =>
        buildEnvelope(mangled({ playerIds: [input.playerIds[0], 'bob', 42] }, input)),
      );
      expect(fieldsOf(error)).toEqual(expect.arrayContaining(['playerIds[1]', 'playerIds[2]']));
    });

    it('requires a match event to address every participant, no-shows included', () => {
      const input = validInput();
      const error = rejection(() =>
        buildEnvelope({ ...input, playerIds: input.playerIds.slice(1) }),
      );
      expect(error.problems).toEqual([
        { field: 'playerIds', message: expect.stringMatching(/missing/) },
      ]);
    });

    it('refuses to tell a match event to someone outside the match', () => {
      const input = validInput();
      const error = rejection(() =>
        buildEnvelope({ ...input, playerIds: [...input.playerIds, randomUUID()] }),
      );
      expect(error.problems).toEqual([
        { field: 'playerIds', message: expect.stringMatching(/only participants/) },
      ]);
    });

    it('addresses a ticket event to its player alone', () => {
      const event = createTicket(
        { id: randomUUID(), playerId: randomUUID(), mode: 'duel', rating: 1500 },
        t0,
      ).events[0]!;
      expect(buildEnvelope(event).playerIds).toEqual(event.playerIds);
      expect(
        fieldsOf(
          rejection(() =>
            buildEnvelope({ ...event, playerIds: [...event.playerIds, randomUUID()] }),
          ),
        ),
      ).toEqual(['playerIds']);
    });
  });

  it('takes a rating event about one player, at any revision, addressed to that player alone', () => {
    const playerId = randomUUID();
    const rating: EnvelopeInput<'rating.updated'> = {
      event: 'rating.updated',
      aggregateType: 'player',
      aggregateId: playerId,
      revision: 3,
      occurredAt: t0,
      playerIds: [playerId],
      payload: {
        playerId,
        reason: 'OPERATOR_IMPORT',
        mu: 30,
        sigma: 2,
        rating: 1652,
        previousMu: 25,
        previousSigma: 25 / 3,
        previousRating: 1500,
      },
    };
    expect(buildEnvelope(rating).revision).toBe(3);
    expect(buildEnvelope({ ...rating, revision: 1 }).revision).toBe(1);
    expect(
      fieldsOf(rejection(() => buildEnvelope({ ...rating, playerIds: [randomUUID()] }))),
    ).toEqual(['playerIds']);
    expect(
      fieldsOf(
        rejection(() =>
          buildEnvelope({ ...rating, payload: { ...rating.payload, playerId: randomUUID() } }),
        ),
      ),
    ).toEqual(['payload.playerId', 'playerIds']);
    expect(
      fieldsOf(rejection(() => buildEnvelope(mangled({ aggregateType: 'match' }, rating)))),
    ).toEqual(['aggregateType']);
  });

  it('requires the payload to name the same aggregate as the envelope', () => {
    const input = validInput();
    const error = rejection(() =>
      buildEnvelope({ ...input, payload: { ...input.payload, matchId: randomUUID() } }),
    );
    expect(fieldsOf(error)).toEqual(['payload.matchId']);
  });

  it('names the envelope it refused in the message', () => {
    const input = validInput();
    const error = rejection(() => buildEnvelope(mangled({ revision: -1 }, input)));
    expect(error.message).toContain(`match.state_changed match ${input.aggregateId} r-1`);
    expect(error.subject).toBe(`match.state_changed match ${input.aggregateId} r-1`);
  });
});

describe(validateEnvelope.name, () => {
  it("accepts the driver's decimal int8 string and returns what the builder returned", () => {
    const envelope = buildEnvelope(validInput());
    expect(validateEnvelope(rowOf(envelope))).toEqual(envelope);
    expect(validateEnvelope(rowOf(envelope)).revision).toBe(2);
  });

  it('returns a bigint only past 2^53 - 1', () => {
    expect(validateEnvelope(rowOf(validInput(), '9007199254740993')).revision).toBe(
      9007199254740993n,
    );
    expect(validateEnvelope(rowOf(validInput(), '9223372036854775807')).revision).toBe(INT64_MAX);
  });

  it('also accepts a number or bigint, should the driver be set to parse int8', () => {
    expect(validateEnvelope(rowOf(validInput(), 2)).revision).toBe(2);
    expect(validateEnvelope(rowOf(validInput(), 2n)).revision).toBe(2);
  });

  it.each([
    '-1',
    '0',
    '01',
    '+2',
    ' 2',
    '2 ',
    '2.0',
    '1e3',
    '0x2',
    '',
    '9223372036854775808',
    '99999999999999999999',
  ])('rejects the stored revision %p', (revision) => {
    expect(rejection(() => validateEnvelope(rowOf(validInput(), revision))).problems).toEqual([
      { field: 'revision', message: expect.stringMatching(/decimal int64/) },
    ]);
  });

  it('rejects a row that could never be delivered, naming what is wrong', () => {
    const row = rowOf(validInput());
    expect(fieldsOf(rejection(() => validateEnvelope({ ...row, payload: {} })))).toEqual(
      expect.arrayContaining(['payload.matchId', 'payload.to', 'payload.participants']),
    );
    expect(fieldsOf(rejection(() => validateEnvelope({ ...row, player_ids: null })))).toEqual([
      'playerIds',
    ]);
    expect(fieldsOf(rejection(() => validateEnvelope({ ...row, event: 'match.created' })))).toEqual(
      ['event'],
    );
  });

  it('ignores the delivery columns of the row but not a missing envelope column', () => {
    const { payload: _gone, ...row } = rowOf(validInput());
    expect(fieldsOf(rejection(() => validateEnvelope(row as unknown as StoredEnvelope)))).toEqual([
      'payload',
    ]);
  });
});

describe(envelopesFor.name, () => {
  function randomMatchEvents(seed: number): { match: MatchSnapshot; events: DomainEvent[] } {
    let state = seed;
    const random = () => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state / 2 ** 31;
    };
    const created = createMatch(
      {
        id: randomUUID(),
        mode: 'duel',
        region: 'eu-west',
        participants: newParticipants(1 + (seed % 5)),
      },
      t0,
    );
    let { match } = created;
    const events: DomainEvent[] = [...created.events];
    while (matchExits(match.state).length > 0) {
      const exits = matchExits(match.state);
      const to = exits[Math.floor(random() * exits.length)]!;
      const command = (
        to === 'FAILED'
          ? { to, reason: 'SERVER_LOST' }
          : to === 'CANCELLED'
            ? { to, reason: 'OPERATOR_CANCELLED' }
            : { to }
      ) as MatchCommand;
      const change = transitionMatch(match, command, new Date(t0.getTime() + events.length));
      match = change.match;
      events.push(...change.events);
    }
    return { match, events };
  }

  it('builds a valid envelope for every event a transition returns, addressed to every participant', () => {
    for (let seed = 1; seed <= 100; seed += 1) {
      const { match, events } = randomMatchEvents(seed);
      const envelopes = envelopesFor(events);
      expect(envelopes.map((e) => e.revision)).toEqual(events.map((_, index) => index + 1));
      for (const envelope of envelopes) {
        expect([...envelope.playerIds].sort()).toEqual(
          match.participants.map((p) => p.playerId).sort(),
        );
      }
    }
  });

  it('round-trips through a stored row: the delivered envelopes fold to the final snapshot', () => {
    for (let seed = 1; seed <= 100; seed += 1) {
      const { match, events } = randomMatchEvents(seed);
      const delivered = envelopesFor(events).map((envelope) => validateEnvelope(rowOf(envelope)));
      expect(foldMatchEvents(delivered as MatchHistoryEvent[])).toStrictEqual(match);
    }
  });

  it('covers ticket events, through requeue to the end', () => {
    const created = createTicket(
      { id: randomUUID(), playerId: randomUUID(), mode: 'duel', rating: 1500 },
      t0,
    );
    const matchId = randomUUID();
    const matched = transitionTicket(created.ticket, { to: 'MATCHED', matchId }, t0);
    const requeued = transitionTicket(
      matched.ticket,
      {
        to: 'SEARCHING',
        failedMatch: { matchId, failedFrom: 'ALLOCATING', reason: 'ALLOCATION_FAILED' },
      },
      t0,
    );
    const cancelled = transitionTicket(
      requeued.ticket,
      { to: 'CANCELLED', reason: 'PLAYER_CANCELLED' },
      t0,
    );
    const events = [created, matched, requeued, cancelled].flatMap((change) => change.events);
    expect(
      envelopesFor(events).map((e) => [e.revision, 'to' in e.payload && e.payload.to]),
    ).toEqual([
      [1, 'SEARCHING'],
      [2, 'MATCHED'],
      [3, 'SEARCHING'],
      [4, 'CANCELLED'],
    ]);
    expect(envelopeFor(events[0]!).playerIds).toEqual([created.ticket.playerId]);
  });
});
