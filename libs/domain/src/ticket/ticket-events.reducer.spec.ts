import { randomUUID } from 'node:crypto';
import { DomainError } from '../shared/domain.error';
import type { MatchFailureReason } from '../match/match-state.machine';
import {
  createTicket,
  transitionTicket,
  type TicketCommand,
  type TicketSnapshot,
} from './ticket.aggregate';
import { foldTicketEvents, type TicketHistoryState } from './ticket-events.reducer';
import type { TicketStateChanged } from './ticket.events';
import { isTerminalTicketState, ticketExits } from './ticket-state.machine';

const t0 = new Date('2026-12-01T10:00:00.000Z');
const TIMEOUT = 30_000;

function prng(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function pick<T>(random: () => number, values: readonly T[]): T {
  return values[Math.floor(random() * values.length)]!;
}

function randomCommand(random: () => number, ticket: TicketSnapshot): TicketCommand {
  const to = pick(random, ticketExits(ticket.state));
  const matchId = ticket.matchId ?? randomUUID();
  switch (to) {
    case 'MATCHED':
      return { to, matchId: randomUUID() };
    case 'ASSIGNED':
    case 'CONNECTED':
    case 'COMPLETED':
      return { to, matchId };
    case 'CANCELLED':
      return ticket.matchId !== undefined && random() < 0.5
        ? { to, reason: 'MATCH_CANCELLED', matchId }
        : { to, reason: 'PLAYER_CANCELLED' };
    case 'FAILED':
      return {
        to,
        reason: ticket.state === 'ASSIGNED' && random() < 0.5 ? 'NO_SHOW' : 'MATCH_FAILED',
        matchId,
      };
    case 'EXPIRED':
      return { to, heartbeatTimeoutMs: TIMEOUT };
    case 'SEARCHING': {
      const reason: MatchFailureReason = pick(random, [
        'ALLOCATION_FAILED',
        'SERVER_LOST',
        'SERVER_REGISTRATION_TIMEOUT',
      ]);
      return {
        to,
        failedMatch: {
          matchId,
          failedFrom: random() < 0.5 ? 'ALLOCATING' : 'PROCESS_READY',
          reason,
        },
      };
    }
  }
}

function historyState(ticket: TicketSnapshot): TicketHistoryState {
  const { rating: _r, predictedRtt: _p, lastHeartbeatAt: _h, attributes: _a, ...rest } = ticket;
  return rest;
}

function randomHistory(seed: number): { ticket: TicketSnapshot; history: TicketStateChanged[] } {
  const random = prng(seed);
  let { ticket, events } = createTicket(
    { id: randomUUID(), playerId: randomUUID(), mode: 'duel', rating: 1500 },
    t0,
  );
  const history = [...events];
  while (!isTerminalTicketState(ticket.state) && random() < 0.92) {
    // Far enough apart that an EXPIRED is always due.
    const now = new Date(t0.getTime() + history.length * (TIMEOUT + 1));
    ({ ticket, events } = transitionTicket(ticket, randomCommand(random, ticket), now));
    history.push(...events);
  }
  return { ticket, history };
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

describe(foldTicketEvents.name, () => {
  it('folds 300 random legal histories (requeues included) back to the final snapshot', () => {
    let requeues = 0;
    for (let seed = 1; seed <= 300; seed += 1) {
      const { ticket, history } = randomHistory(seed);
      requeues += history.filter(
        (event) => event.payload.to === 'SEARCHING' && event.payload.from !== null,
      ).length;
      expect(foldTicketEvents(history)).toStrictEqual(historyState(ticket));
    }
    expect(requeues).toBeGreaterThan(0);
  });

  it('rejects gaps, repeats and a start past revision 1', () => {
    const { history } = randomHistory(3);
    const long = history.length >= 3 ? history : randomHistory(11).history;
    expect(codeOf(() => foldTicketEvents([long[0]!, long[2]!]))).toBe('REVISION_GAP');
    expect(codeOf(() => foldTicketEvents([long[0]!, long[0]!]))).toBe('REVISION_GAP');
    expect(codeOf(() => foldTicketEvents(long.slice(1)))).toBe('REVISION_GAP');
  });

  it.each([
    [
      'an event for two players',
      (e: TicketStateChanged) => ({ ...e, playerIds: [...e.playerIds, randomUUID()] }),
    ],
    [
      'a changed enqueuedAt',
      (e: TicketStateChanged) => ({
        ...e,
        payload: { ...e.payload, enqueuedAt: new Date(0).toISOString() },
      }),
    ],
    [
      'a MATCHED without its match',
      (e: TicketStateChanged) => {
        const { matchId: _m, ...payload } = e.payload;
        return { ...e, payload };
      },
    ],
  ])('rejects %s', (_, mangle) => {
    const created = createTicket(
      { id: randomUUID(), playerId: randomUUID(), mode: 'duel', rating: 1 },
      t0,
    );
    const next = transitionTicket(created.ticket, { to: 'MATCHED', matchId: randomUUID() }, t0)
      .events[0]!;
    expect(codeOf(() => foldTicketEvents([...created.events, mangle(next)]))).toBe(
      'INCONSISTENT_HISTORY',
    );
  });
});
