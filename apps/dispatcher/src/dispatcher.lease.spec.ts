import { ConsoleLogger, Logger } from '@nestjs/common';
import { loadConfig } from '@matchplane/config';
import { DispatcherConfig } from './dispatcher.config';
import type { OutboxDispatchersRepository } from '@matchplane/outbox';
import { DispatcherLease } from './dispatcher.lease';

const OWNER_TIMEOUT_MS = 1_500;
const LEASE_MS = 60_000;
/** Heartbeats run every third of the owner timeout and prove ownership for three quarters of it. */
const BEAT_MS = OWNER_TIMEOUT_MS / 3;
const PROOF_MS = OWNER_TIMEOUT_MS * 0.75;

/** A registry whose heartbeats succeed, fail or hang as the test says, on fake timers. */
function leaseWithHeartbeats() {
  const state = { fail: false, delayMs: 0 };
  const registry = {
    beat: jest.fn(async () => {
      if (state.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
      if (state.fail) throw new Error('database unreachable');
    }),
    retire: jest.fn(() => Promise.resolve()),
    forgetSilentFor: jest.fn(() => Promise.resolve(0)),
  };
  const config = loadConfig(DispatcherConfig, {
    OUTBOX_OWNER_TIMEOUT_MS: String(OWNER_TIMEOUT_MS),
    OUTBOX_CLAIM_LEASE_MS: String(LEASE_MS),
  });
  const lease = new DispatcherLease(registry as unknown as OutboxDispatchersRepository, config);
  return { lease, state, registry };
}

describe(DispatcherLease.name, () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  afterAll(() => {
    Logger.overrideLogger(new ConsoleLogger());
  });
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('hands off a claim while heartbeats succeed, and none once they have failed for three quarters of the owner timeout', async () => {
    const { lease, state } = leaseWithHeartbeats();
    await lease.onModuleInit();
    const claimedAt = performance.now();
    await jest.advanceTimersByTimeAsync(10 * BEAT_MS);
    expect(lease.mayHandOff(claimedAt)).toBe(true);

    state.fail = true;
    await jest.advanceTimersByTimeAsync(PROOF_MS - BEAT_MS);
    expect(lease.mayHandOff(claimedAt)).toBe(true);
    await jest.advanceTimersByTimeAsync(BEAT_MS);
    expect(lease.mayHandOff(claimedAt)).toBe(false);
    await lease.retire();
  });

  it('after a heartbeat gap, hands off only claims made since: one made before may have been taken over meanwhile', async () => {
    const { lease, state } = leaseWithHeartbeats();
    const beats: number[] = [];
    lease.onBeat(() => beats.push(performance.now()));
    await lease.onModuleInit();
    const beforeGap = performance.now();

    state.fail = true;
    await jest.advanceTimersByTimeAsync(2 * OWNER_TIMEOUT_MS);
    state.fail = false;
    const recovered = beats.length;
    await jest.advanceTimersByTimeAsync(BEAT_MS);
    expect(beats.length).toBe(recovered + 1);

    expect(lease.mayHandOff(beforeGap)).toBe(false);
    expect(lease.mayHandOff(performance.now())).toBe(true);
    await lease.retire();
  });

  it('treats a heartbeat that commits after the proof lapsed as a gap, though it was sent in time', async () => {
    const { lease, state } = leaseWithHeartbeats();
    await lease.onModuleInit();
    const claimedAt = performance.now();
    // The next heartbeat is sent on time (at BEAT_MS) but commits only after the first one's
    // heartbeat_at is older than the owner timeout: the others may have taken over meanwhile,
    // although the late one, counted from when it was sent, would still prove ownership now.
    state.delayMs = OWNER_TIMEOUT_MS - BEAT_MS + 100;
    await jest.advanceTimersByTimeAsync(BEAT_MS + state.delayMs + 1);
    expect(performance.now()).toBeGreaterThan(OWNER_TIMEOUT_MS);
    expect(performance.now()).toBeLessThan(BEAT_MS + PROOF_MS);

    expect(lease.mayHandOff(claimedAt)).toBe(false);
    expect(lease.mayHandOff(performance.now())).toBe(true);
    await lease.retire();
  });

  it('hands off nothing claimed more than three quarters of the claim lease ago, however well it beats', async () => {
    const { lease } = leaseWithHeartbeats();
    await lease.onModuleInit();
    const claimedAt = performance.now();
    await jest.advanceTimersByTimeAsync(LEASE_MS * 0.75 - BEAT_MS);
    expect(lease.mayHandOff(claimedAt)).toBe(true);
    await jest.advanceTimersByTimeAsync(BEAT_MS);
    expect(lease.mayHandOff(claimedAt)).toBe(false);
    await lease.retire();
  });

  it('retires: stops beating, deletes its registration and hands off nothing more', async () => {
    const { lease, registry } = leaseWithHeartbeats();
    await lease.onModuleInit();
    await lease.retire();
    const beatsAtRetire = registry.beat.mock.calls.length;
    await jest.advanceTimersByTimeAsync(10 * BEAT_MS);
    expect(registry.beat.mock.calls.length).toBe(beatsAtRetire);
    expect(registry.retire).toHaveBeenCalledWith(lease.id);
    expect(lease.mayHandOff(performance.now())).toBe(false);
  });
});
