import { randomUUID } from 'node:crypto';
import { DomainError } from '../shared/domain.error';
import {
  createTicket,
  heartbeatExpired,
  transitionTicket,
  type NewTicket,
  type TicketCommand,
  type TicketSnapshot,
} from './ticket.aggregate';

const t0 = new Date('2026-12-01T10:00:00.000Z');
const later = (ms: number) => new Date(t0.getTime() + ms);
const TIMEOUT = 30_000;

function newTicket(overrides: Partial<NewTicket> = {}) {
  return createTicket(
    {
      id: randomUUID(),
      playerId: randomUUID(),
      mode: 'duel',
      rating: 1500,
      predictedRtt: { 'eu-west': 25 },
      ...overrides,
    },
    t0,
  );
}

function matched(matchId = randomUUID()): TicketSnapshot {
  return transitionTicket(newTicket().ticket, { to: 'MATCHED', matchId }, later(1_000)).ticket;
}

function assigned(): TicketSnapshot {
  const ticket = matched();
  return transitionTicket(ticket, { to: 'ASSIGNED', matchId: ticket.matchId! }, later(2_000))
    .ticket;
}

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe(createTicket.name, () => {
  it('keeps an earlier enqueue time when given one (requeue priority), its event saying so', () => {
    const since = new Date(t0.getTime() - 90_000);
    const { ticket, events } = newTicket({ queuedSince: since });
    expect(ticket).toMatchObject({ enqueuedAt: since, lastHeartbeatAt: t0, stateChangedAt: t0 });
    expect(events[0]?.payload.enqueuedAt).toBe(since.toISOString());
  });

  it('refuses an enqueue time after now or invalid', () => {
    expect(codeOf(() => newTicket({ queuedSince: later(1) }))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => newTicket({ queuedSince: new Date(Number.NaN) }))).toBe('INVALID_ARGUMENT');
  });

  it('creates a SEARCHING ticket at revision 1, enqueued and heartbeating now, announced to its player', () => {
    const { ticket, events } = newTicket();
    expect(ticket).toMatchObject({
      state: 'SEARCHING',
      revision: 1,
      enqueuedAt: t0,
      lastHeartbeatAt: t0,
      stateChangedAt: t0,
    });
    expect(ticket.matchId).toBeUndefined();
    expect(events).toEqual([
      {
        event: 'ticket.state_changed',
        aggregateType: 'ticket',
        aggregateId: ticket.id,
        revision: 1,
        occurredAt: t0,
        playerIds: [ticket.playerId],
        payload: {
          ticketId: ticket.id,
          from: null,
          to: 'SEARCHING',
          mode: 'duel',
          enqueuedAt: t0.toISOString(),
        },
      },
    ]);
  });

  it('stores an absent RTT map as an empty object, never null', () => {
    const { ticket } = newTicket({ predictedRtt: undefined });
    expect(ticket.predictedRtt).toEqual({});
  });

  it.each([
    ['a null RTT map', { predictedRtt: null as unknown as Record<string, number> }],
    ['a negative RTT', { predictedRtt: { eu: -1 } }],
    ['an infinite RTT', { predictedRtt: { eu: Number.POSITIVE_INFINITY } }],
    ['a NaN rating', { rating: Number.NaN }],
    ['a non-uuid player', { playerId: 'player-1' }],
    ['an empty mode', { mode: '' }],
  ])('refuses %s', (_, overrides) => {
    expect(codeOf(() => newTicket(overrides))).toBe('INVALID_ARGUMENT');
  });
});

describe(transitionTicket.name, () => {
  it('walks SEARCHING -> MATCHED -> ASSIGNED -> CONNECTED -> COMPLETED, revision + 1 each, keeping the match', () => {
    const matchId = randomUUID();
    let { ticket } = newTicket();
    const steps: TicketCommand[] = [
      { to: 'MATCHED', matchId },
      { to: 'ASSIGNED', matchId },
      { to: 'CONNECTED', matchId },
      { to: 'COMPLETED', matchId },
    ];
    for (const command of steps) {
      const change = transitionTicket(ticket, command, later(ticket.revision));
      expect(change.ticket).toMatchObject({
        state: command.to,
        revision: ticket.revision + 1,
        matchId,
        enqueuedAt: t0,
      });
      expect(change.events).toEqual([
        expect.objectContaining({
          revision: ticket.revision + 1,
          playerIds: [ticket.playerId],
          payload: expect.objectContaining({ from: ticket.state, to: command.to, matchId }),
        }),
      ]);
      ticket = change.ticket;
    }
  });

  it('requeues after a match fails before ASSIGNMENT_READY for a reason no player caused, keeping enqueuedAt', () => {
    for (const ticket of [matched(), assigned()]) {
      const failedMatch = {
        matchId: ticket.matchId!,
        failedFrom: 'PROCESS_READY' as const,
        reason: 'SERVER_REGISTRATION_TIMEOUT' as const,
      };
      const { ticket: requeued, events } = transitionTicket(
        ticket,
        { to: 'SEARCHING', failedMatch },
        later(9_000),
      );
      expect(requeued).toMatchObject({
        state: 'SEARCHING',
        revision: ticket.revision + 1,
        enqueuedAt: t0,
      });
      expect('matchId' in requeued).toBe(false);
      expect(events[0]!.payload).toEqual({
        ticketId: ticket.id,
        from: ticket.state,
        to: 'SEARCHING',
        mode: 'duel',
        enqueuedAt: t0.toISOString(),
        matchId: ticket.matchId,
        reason: 'MATCH_FAILED',
      });
    }
  });

  it.each([
    ['a match that failed from ASSIGNMENT_READY', 'ASSIGNMENT_READY', 'SERVER_LOST'],
    ['a match that failed from IN_PROGRESS', 'IN_PROGRESS', 'SERVER_LOST'],
    ['a no-show', 'PROCESS_READY', 'NO_SHOW'],
    ['a participant who left', 'ALLOCATING', 'PARTICIPANT_LEFT'],
  ] as const)('refuses to requeue after %s', (_, failedFrom, reason) => {
    const ticket = matched();
    expect(
      codeOf(() =>
        transitionTicket(
          ticket,
          { to: 'SEARCHING', failedMatch: { matchId: ticket.matchId!, failedFrom, reason } },
          later(1),
        ),
      ),
    ).toBe('REQUEUE_NOT_ALLOWED');
  });

  it('refuses a command for a match the ticket is not in (a stale job after a requeue and a new match)', () => {
    const ticket = matched();
    const other = randomUUID();
    const stale: TicketCommand[] = [
      { to: 'ASSIGNED', matchId: other },
      { to: 'FAILED', reason: 'MATCH_FAILED', matchId: other },
      { to: 'CANCELLED', reason: 'MATCH_CANCELLED', matchId: other },
      {
        to: 'SEARCHING',
        failedMatch: { matchId: other, failedFrom: 'ALLOCATING', reason: 'ALLOCATION_FAILED' },
      },
    ];
    for (const command of stale)
      expect(codeOf(() => transitionTicket(ticket, command, later(1)))).toBe('MATCH_MISMATCH');
  });

  it('fails a no-show only from ASSIGNED', () => {
    const ticket = assigned();
    expect(
      transitionTicket(
        ticket,
        { to: 'FAILED', reason: 'NO_SHOW', matchId: ticket.matchId! },
        later(1),
      ).ticket,
    ).toMatchObject({
      state: 'FAILED',
      matchId: ticket.matchId,
    });
    const early = matched();
    expect(
      codeOf(() =>
        transitionTicket(
          early,
          { to: 'FAILED', reason: 'NO_SHOW', matchId: early.matchId! },
          later(1),
        ),
      ),
    ).toBe('ILLEGAL_TRANSITION');
  });

  it('lets the player cancel while searching, with no match named', () => {
    const { ticket } = newTicket();
    const { ticket: cancelled, events } = transitionTicket(
      ticket,
      { to: 'CANCELLED', reason: 'PLAYER_CANCELLED' },
      later(1),
    );
    expect(cancelled.state).toBe('CANCELLED');
    expect(events[0]!.payload).not.toHaveProperty('matchId');
    expect(events[0]!.payload.reason).toBe('PLAYER_CANCELLED');
  });

  it('expires a ticket only once its heartbeat is older than the timeout', () => {
    const { ticket } = newTicket();
    expect(
      codeOf(() =>
        transitionTicket(ticket, { to: 'EXPIRED', heartbeatTimeoutMs: TIMEOUT }, later(TIMEOUT)),
      ),
    ).toBe('HEARTBEAT_NOT_EXPIRED');
    const { ticket: expired, events } = transitionTicket(
      ticket,
      { to: 'EXPIRED', heartbeatTimeoutMs: TIMEOUT },
      later(TIMEOUT + 1),
    );
    expect(expired.state).toBe('EXPIRED');
    expect(events[0]!.payload.reason).toBe('HEARTBEAT_TIMEOUT');
  });

  it('times a search out only once it has searched for the whole timeout, heartbeating or not', () => {
    const { ticket } = newTicket();
    expect(
      codeOf(() =>
        transitionTicket(
          ticket,
          { to: 'EXPIRED', searchTimeoutMs: TIMEOUT, searchingSince: later(0) },
          later(TIMEOUT - 1),
        ),
      ),
    ).toBe('SEARCH_NOT_TIMED_OUT');
    const { ticket: expired, events } = transitionTicket(
      ticket,
      { to: 'EXPIRED', searchTimeoutMs: TIMEOUT, searchingSince: later(0) },
      later(TIMEOUT),
    );
    expect(expired.state).toBe('EXPIRED');
    expect(events[0]!.payload.reason).toBe('SEARCH_TIMED_OUT');
  });

  it('has no exit from a finished ticket', () => {
    const cancelled = transitionTicket(
      newTicket().ticket,
      { to: 'CANCELLED', reason: 'PLAYER_CANCELLED' },
      later(1),
    ).ticket;
    expect(
      codeOf(() => transitionTicket(cancelled, { to: 'MATCHED', matchId: randomUUID() }, later(2))),
    ).toBe('ILLEGAL_TRANSITION');
    expect(
      codeOf(() =>
        transitionTicket(cancelled, { to: 'CANCELLED', reason: 'PLAYER_CANCELLED' }, later(2)),
      ),
    ).toBe('ILLEGAL_TRANSITION');
  });

  it('refuses a MATCHED without a valid match id', () => {
    expect(
      codeOf(() =>
        transitionTicket(newTicket().ticket, { to: 'MATCHED', matchId: 'm1' }, later(1)),
      ),
    ).toBe('INVALID_ARGUMENT');
  });

  it('leaves its input untouched', () => {
    const ticket = matched();
    const copy = structuredClone(ticket);
    transitionTicket(ticket, { to: 'ASSIGNED', matchId: ticket.matchId! }, later(5));
    expect(ticket).toEqual(copy);
  });
});

describe(heartbeatExpired.name, () => {
  it('is the strict complement of "heartbeat within the timeout"', () => {
    const ticket = { lastHeartbeatAt: t0 };
    expect(heartbeatExpired(ticket, later(TIMEOUT), TIMEOUT)).toBe(false);
    expect(heartbeatExpired(ticket, later(TIMEOUT + 1), TIMEOUT)).toBe(true);
    expect(heartbeatExpired({ lastHeartbeatAt: new Date('nope') }, t0, TIMEOUT)).toBe(true);
  });

  it('refuses a timeout that is not a finite number >= 0', () => {
    for (const timeout of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(codeOf(() => heartbeatExpired({ lastHeartbeatAt: t0 }, t0, timeout))).toBe(
        'INVALID_ARGUMENT',
      );
    }
  });
});
