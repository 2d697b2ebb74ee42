import type { MatchCandidate, QueueControl } from '@matchplane/domain';
import { applyQueueHolds } from './queue-holds';

const candidate = (ticketId: string, predictedRtt: Record<string, number>): MatchCandidate => ({
  ticketId,
  playerId: `p-${ticketId}`,
  mode: 'duel',
  rating: 1500,
  predictedRtt,
  enqueuedAt: new Date('2026-12-06T04:00:00Z'),
  attributes: {},
});
const hold = (over: Partial<QueueControl>): QueueControl => ({
  scope: 'mode',
  name: 'duel',
  state: 'PAUSED',
  reason: 'rollout',
  setBy: 'ops',
  setAt: new Date(),
  ...over,
});

describe(applyQueueHolds.name, () => {
  const pool = [candidate('a', { eu: 20, us: 90 }), candidate('b', { eu: 30 })];

  it('matches nobody in a paused mode and tells every ticket why', () => {
    const { pool: left, held } = applyQueueHolds([hold({})], 'duel', pool);
    expect(left).toEqual([]);
    expect(held.map((h) => [h.ticketId, h.code])).toEqual([
      ['a', 'MODE_PAUSED'],
      ['b', 'MODE_PAUSED'],
    ]);
  });

  it('keeps matching a draining mode and another mode than the paused one', () => {
    expect(applyQueueHolds([hold({ state: 'DRAINING' })], 'duel', pool).pool).toHaveLength(2);
    expect(applyQueueHolds([hold({ name: 'squad' })], 'duel', pool).pool).toHaveLength(2);
  });

  it('takes closed regions out of each candidate, holding one left with none', () => {
    const { pool: left, held } = applyQueueHolds(
      [hold({ scope: 'region', name: 'eu', state: 'DRAINING' })],
      'duel',
      pool,
    );
    expect(left.map((c) => [c.ticketId, c.predictedRtt])).toEqual([['a', { us: 90 }]]);
    expect(held).toEqual([expect.objectContaining({ ticketId: 'b', code: 'REGIONS_PAUSED' })]);
  });
});
