import { randomUUID } from 'node:crypto';
import { createMatch, createTicket, transitionMatch } from '@matchplane/domain';
import { buildEnvelope, envelopeFor, InvalidEnvelopeError, validateEnvelope, type EnvelopeInput } from './envelope.builder';
import type { OutboxRow } from './outbox.row';

const playerA = randomUUID();
const playerB = randomUUID();
const matchId = randomUUID();

function validInput(): EnvelopeInput {
  return {
    event: 'match.state_changed',
    aggregateType: 'match',
    aggregateId: matchId,
    revision: 2,
    occurredAt: new Date('2026-12-01T10:00:00Z'),
    playerIds: [playerA, playerB],
    payload: {
      matchId,
      from: 'ALLOCATING',
      to: 'PROCESS_READY',
      mode: 'duel',
      region: 'eu-west',
      participants: [
        { playerId: playerA, ticketId: randomUUID(), team: 0 },
        { playerId: playerB, ticketId: randomUUID(), team: 1 },
      ],
    },
  };
}

function problemsOf(input: EnvelopeInput): string[] {
  try {
    buildEnvelope(input);
  } catch (error) {
    if (error instanceof InvalidEnvelopeError) return error.problems;
    throw error;
  }
  throw new Error('expected the envelope to be rejected');
}

describe(buildEnvelope.name, () => {
  it('accepts a complete envelope and freezes it', () => {
    const envelope = buildEnvelope(validInput());
    expect(envelope).toMatchObject({ event: 'match.state_changed', revision: 2, aggregateId: matchId });
    expect(Object.isFrozen(envelope)).toBe(true);
  });

  it.each(['event', 'aggregateType', 'aggregateId', 'revision', 'occurredAt', 'playerIds', 'payload'] as const)(
    'rejects an envelope without %s, naming it',
    (field) => {
      const input = { ...validInput(), [field]: undefined };
      expect(problemsOf(input).join('; ')).toContain(field);
    },
  );

  it.each([
    ['the -1 sentinel of a CTE that matched nothing', -1],
    ['zero', 0],
    ['a float', 1.5],
    ['NaN', Number.NaN],
    ['a string', '3'],
    ['an unsafe number', 2 ** 60],
    ['a bigint over int64', 2n ** 63n],
    ['a negative bigint', -1n],
  ])('rejects a revision that is %s, never coercing it', (_, revision) => {
    expect(problemsOf({ ...validInput(), revision }).join()).toMatch(/revision/);
  });

  it('accepts a bigint revision within int64', () => {
    expect(buildEnvelope({ ...validInput(), revision: 2n ** 62n }).revision).toBe(2n ** 62n);
    expect(buildEnvelope({ ...validInput(), revision: 7n }).revision).toBe(7);
  });

  it.each([
    ['an unknown event type', { event: 'match.exploded' }, /event must be one of/],
    ['the wrong aggregate type', { aggregateType: 'ticket' }, /aggregateType of match.state_changed must be "match"/],
    ['a non-UUID aggregate id', { aggregateId: 'match-1' }, /aggregateId must be a UUID/],
    ['an invalid date', { occurredAt: new Date('nope') }, /occurredAt/],
    ['a date string', { occurredAt: '2026-12-01T10:00:00Z' }, /occurredAt/],
    ['no players', { playerIds: [] }, /playerIds must be a non-empty array/],
    ['a repeated player', { playerIds: [playerA, playerA, playerB] }, /must not repeat/],
    ['a non-UUID player', { playerIds: [playerA, playerB, 'bob'] }, /playerIds must be UUIDs/],
    ['a payload that is JSON null', { payload: null }, /payload must be an object/],
    ['a payload that is an array', { payload: [] }, /payload must be an object/],
  ])('rejects %s', (_, patch, expected) => {
    expect(problemsOf({ ...validInput(), ...patch }).join('; ')).toMatch(expected);
  });

  it('rejects players missing from a match event', () => {
    expect(problemsOf({ ...validInput(), playerIds: [playerA] }).join()).toMatch(/include every participant; missing/);
  });

  it.each([
    ['an unknown state', { to: 'EXPLODED' }, /payload.to/],
    ['an unknown field', { extra: 1 }, /payload.extra/],
    ['a missing region', { region: undefined }, /payload.region/],
    ['a participant with a bad team', { participants: [{ playerId: playerA, ticketId: randomUUID(), team: -1 }] }, /payload.participants.0.team/],
    ['another aggregate id', { matchId: randomUUID() }, /another aggregate/],
  ])('validates the payload per event type: %s', (_, patch, expected) => {
    const input = validInput();
    expect(problemsOf({ ...input, payload: { ...(input.payload as object), ...patch } }).join('; ')).toMatch(expected);
  });

  it('validates ticket payloads with their own schema', () => {
    const ticketId = randomUUID();
    const ticket = {
      event: 'ticket.state_changed',
      aggregateType: 'ticket',
      aggregateId: ticketId,
      revision: 1,
      occurredAt: new Date(),
      playerIds: [playerA],
      payload: { ticketId, from: null, to: 'SEARCHING', mode: 'duel' },
    };
    expect(buildEnvelope(ticket).event).toBe('ticket.state_changed');
    expect(problemsOf({ ...ticket, payload: { ...ticket.payload, region: 'eu' } }).join()).toMatch(/payload.region/);
  });
});

describe(validateEnvelope.name, () => {
  function rowOf(input: EnvelopeInput, revision: string): OutboxRow {
    return {
      id: '1',
      event: input.event as string,
      aggregate_type: input.aggregateType as string,
      aggregate_id: input.aggregateId as string,
      revision,
      occurred_at: input.occurredAt as Date,
      player_ids: input.playerIds as string[],
      payload: input.payload as Record<string, unknown>,
      status: 'pending',
      attempts: 0,
      last_error: null,
      next_attempt_at: new Date(),
      claimed_at: null,
      published_at: null,
      dead_lettered_at: null,
      created_at: new Date(),
    };
  }

  it("accepts the driver's decimal int8 string", () => {
    expect(validateEnvelope(rowOf(validInput(), '2')).revision).toBe(2);
  });

  it('rejects a stored row that could never be delivered', () => {
    expect(() => validateEnvelope({ ...rowOf(validInput(), '-1') })).toThrow(InvalidEnvelopeError);
    expect(() => validateEnvelope({ ...rowOf(validInput(), '2'), payload: {} })).toThrow(/payload/);
  });
});

describe(envelopeFor.name, () => {
  it('turns every domain event into a valid envelope addressed to every participant', () => {
    const participants = [
      { playerId: playerA, ticketId: randomUUID(), team: 0 },
      { playerId: playerB, ticketId: randomUUID(), team: 1 },
    ];
    const created = createMatch({ id: matchId, mode: 'duel', region: 'eu-west', participants }, new Date());
    const failed = transitionMatch(created.match, 'FAILED', new Date(), 'allocation failed');
    const envelopes = [...created.events, ...failed.events].map(envelopeFor);
    expect(envelopes.map((e) => [e.revision, e.playerIds])).toEqual([
      [1, [playerA, playerB]],
      [2, [playerA, playerB]],
    ]);
    const ticket = createTicket({ id: randomUUID(), playerId: playerA, mode: 'duel' }, new Date());
    expect(envelopeFor(ticket.events[0]!).playerIds).toEqual([playerA]);
  });
});
