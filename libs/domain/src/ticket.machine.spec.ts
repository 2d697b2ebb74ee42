import { randomUUID } from 'node:crypto';
import { validCandidate } from './candidate';
import { canTransitionTicket, createTicket, transitionTicket } from './ticket.machine';

const now = new Date('2026-12-01T10:00:00Z');

describe('ticket state machine', () => {
  it('requeues a matched ticket with its original enqueue time and no match', () => {
    const { ticket } = createTicket({ id: randomUUID(), playerId: randomUUID(), mode: 'duel' }, now);
    const matched = transitionTicket(ticket, 'MATCHED', new Date(now.getTime() + 5_000), { matchId: randomUUID() });
    expect(matched.ticket.matchId).toBeDefined();
    const requeued = transitionTicket(matched.ticket, 'SEARCHING', new Date(now.getTime() + 9_000), { reason: 'allocation failed' });
    expect(requeued.ticket).toMatchObject({ state: 'SEARCHING', revision: 3, enqueuedAt: now });
    expect(requeued.ticket.matchId).toBeUndefined();
    expect(requeued.events[0]).toMatchObject({ from: 'MATCHED', to: 'SEARCHING', reason: 'allocation failed', playerId: ticket.playerId });
  });

  it('has no way out of a finished ticket', () => {
    for (const done of ['COMPLETED', 'CANCELLED', 'EXPIRED', 'FAILED'] as const) {
      expect(canTransitionTicket(done, 'SEARCHING')).toBe(false);
    }
    const { ticket } = createTicket({ id: randomUUID(), playerId: randomUUID(), mode: 'duel' }, now);
    const cancelled = transitionTicket(ticket, 'CANCELLED', now).ticket;
    expect(() => transitionTicket(cancelled, 'MATCHED', now)).toThrow(expect.objectContaining({ code: 'ILLEGAL_TRANSITION' }));
  });
});

describe(validCandidate.name, () => {
  const base = { state: 'SEARCHING' as const, lastHeartbeatAt: new Date(now.getTime() - 5_000), predictedRtt: { 'eu-west': 30 } };

  it.each([
    ['a heartbeating SEARCHING ticket with a measured region', base, true],
    ['a MATCHED ticket', { ...base, state: 'MATCHED' as const }, false],
    ['a ticket whose heartbeat is older than the timeout', { ...base, lastHeartbeatAt: new Date(now.getTime() - 31_000) }, false],
    ['an empty RTT map', { ...base, predictedRtt: {} }, false],
    ['an RTT map stored as JSON null', { ...base, predictedRtt: null }, false],
    ['only unusable measurements', { ...base, predictedRtt: { eu: Number.NaN, us: -1 } }, false],
  ])('%s -> %s', (_, ticket, expected) => {
    expect(validCandidate(ticket, now, 30_000)).toBe(expected);
  });
});
