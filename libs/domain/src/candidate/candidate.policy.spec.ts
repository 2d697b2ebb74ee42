import { DomainError } from '../shared/domain.error';
import {
  candidateRejection,
  measuredRegions,
  validCandidate,
  type CandidateView,
} from './candidate.policy';

const now = new Date('2026-12-01T10:00:00.000Z');
const TIMEOUT = 30_000;
const base: CandidateView = {
  state: 'SEARCHING',
  lastHeartbeatAt: new Date(now.getTime() - 5_000),
  predictedRtt: { 'eu-west': 30 },
};

describe(validCandidate.name, () => {
  it.each([
    ['a heartbeating SEARCHING ticket with a measured region', base, null],
    [
      'a heartbeat exactly at the timeout',
      { ...base, lastHeartbeatAt: new Date(now.getTime() - TIMEOUT) },
      null,
    ],
    [
      'a heartbeat slightly ahead of now (another clock)',
      { ...base, lastHeartbeatAt: new Date(now.getTime() + 500) },
      null,
    ],
    ['a region at 0 ms', { ...base, predictedRtt: { local: 0 } }, null],
    [
      'one usable region among garbage',
      { ...base, predictedRtt: { eu: Number.NaN, us: 80, ap: '12' } },
      null,
    ],
    ['a MATCHED ticket', { ...base, state: 'MATCHED' as const }, 'NOT_SEARCHING'],
    ['an EXPIRED ticket', { ...base, state: 'EXPIRED' as const }, 'NOT_SEARCHING'],
    [
      'a heartbeat 1 ms past the timeout',
      { ...base, lastHeartbeatAt: new Date(now.getTime() - TIMEOUT - 1) },
      'HEARTBEAT_STALE',
    ],
    [
      'an invalid heartbeat time',
      { ...base, lastHeartbeatAt: new Date('nope') },
      'HEARTBEAT_STALE',
    ],
    ['an empty RTT map', { ...base, predictedRtt: {} }, 'NO_REGION'],
    ['an RTT map stored as JSON null', { ...base, predictedRtt: null }, 'NO_REGION'],
    ['an RTT array', { ...base, predictedRtt: [30] }, 'NO_REGION'],
    [
      'only unusable measurements',
      { ...base, predictedRtt: { eu: Number.NaN, us: -1, ap: Number.POSITIVE_INFINITY, sa: null } },
      'NO_REGION',
    ],
  ])('%s -> %s', (_, ticket, rejection) => {
    expect(candidateRejection(ticket, now, TIMEOUT)).toBe(rejection);
    expect(validCandidate(ticket, now, TIMEOUT)).toBe(rejection === null);
  });

  it('refuses a nonsensical timeout or clock instead of answering', () => {
    expect(() => validCandidate(base, now, Number.NaN)).toThrow(DomainError);
    expect(() => validCandidate(base, now, -1)).toThrow(DomainError);
    expect(() => validCandidate(base, new Date('nope'), TIMEOUT)).toThrow(DomainError);
  });
});

describe(measuredRegions.name, () => {
  it('lists the regions with a finite, non-negative RTT', () => {
    expect(measuredRegions({ eu: 10, us: -3, ap: 0, sa: Number.NaN })).toEqual(['eu', 'ap']);
    expect(measuredRegions(undefined)).toEqual([]);
  });
});
