import { admissionRefusal, closedRegions, modePause, type QueueControl } from './queue-control';

const at = new Date('2026-12-06T04:00:00Z');
const control = (over: Partial<QueueControl>): QueueControl => ({
  scope: 'mode',
  name: 'duel',
  state: 'PAUSED',
  reason: 'rollout',
  setBy: 'ops',
  setAt: at,
  ...over,
});

describe('queue controls', () => {
  it('refuses a new ticket of a paused or draining mode, with the expected wait', () => {
    expect(admissionRefusal([control({ retryAfterSeconds: 600 })], 'duel', ['eu'])).toEqual({
      state: 'PAUSED',
      detail: 'Mode duel is paused by an operator (rollout); nothing new may queue now',
      retryAfterSeconds: 600,
    });
    expect(admissionRefusal([control({ state: 'DRAINING' })], 'duel', ['eu'])?.state).toBe(
      'DRAINING',
    );
    expect(admissionRefusal([control({})], 'squad', ['eu'])).toBeUndefined();
  });

  it('refuses a ticket only when every region it measured is closed', () => {
    const controls = [control({ scope: 'region', name: 'eu' })];
    expect(admissionRefusal(controls, 'duel', ['eu', 'us'])).toBeUndefined();
    expect(admissionRefusal(controls, 'duel', ['eu'])?.detail).toContain(
      'Every region you measured (eu)',
    );
  });

  it('closes paused and draining regions to new matches; only a paused mode stops matching', () => {
    const controls = [
      control({ scope: 'region', name: 'eu' }),
      control({ scope: 'region', name: 'us', state: 'DRAINING' }),
      control({ name: 'squad', state: 'DRAINING' }),
    ];
    expect([...closedRegions(controls)].sort()).toEqual(['eu', 'us']);
    expect(modePause(controls, 'squad')).toBeUndefined();
    expect(modePause([control({})], 'duel')?.reason).toBe('rollout');
  });
});
