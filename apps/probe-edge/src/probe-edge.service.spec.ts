import { randomBytes } from 'node:crypto';
import { KeySet, probeMeasurementProblem } from '@matchplane/join-auth';
import { monotonicUs, ProbeEdge } from './probe-edge.service';

const PLAYER = '6f1c2a4e-0b7d-4c1e-9a53-2f8d1e7b4c90';
const keys = KeySet.fromKeys({ 'probe-1': randomBytes(32) });

function edge(region = 'eu-west', ttlMs = 1_000): ProbeEdge {
  return new ProbeEdge(region, { keys, activeKeyId: 'probe-1' }, ttlMs);
}

describe(ProbeEdge.name, () => {
  it('measures receive minus issue on its monotonic clock and signs the measurement', () => {
    const beacon = edge();
    const challenge = beacon.issue(PLAYER, 'eu-west');
    const measurement = beacon.answer(
      { playerId: PLAYER, region: 'eu-west', challenge },
      challenge.issuedAtUs + 12_345,
    );
    expect(measurement).toMatchObject({ playerId: PLAYER, region: 'eu-west', samplesMs: [12.345] });
    expect(probeMeasurementProblem(keys, measurement)).toBeUndefined();
    expect(challenge.issuedAtUs).toBeLessThanOrEqual(monotonicUs());
  });

  it('gives each answer its own measurement id', () => {
    const beacon = edge();
    const challenge = beacon.issue(PLAYER, 'eu-west');
    const answer = { playerId: PLAYER, region: 'eu-west', challenge };
    const [a, b] = [1, 2].map((us) => beacon.answer(answer, challenge.issuedAtUs + us));
    expect(a!.measurementId).not.toBe(b!.measurementId);
  });

  it.each([
    ['a challenge for another region', () => edge().issue(PLAYER, 'us-east'), 'PROBE_WRONG_REGION'],
    [
      'an answer at another edge process',
      () => {
        const challenge = edge().issue(PLAYER, 'eu-west');
        return edge().answer({ playerId: PLAYER, region: 'eu-west', challenge }, monotonicUs());
      },
      'PROBE_WRONG_EDGE',
    ],
    [
      'an answer after the TTL',
      () => {
        const beacon = edge('eu-west', 100);
        const challenge = beacon.issue(PLAYER, 'eu-west');
        return beacon.answer(
          { playerId: PLAYER, region: 'eu-west', challenge },
          challenge.issuedAtUs + 100_001,
        );
      },
      'PROBE_EXPIRED',
    ],
    [
      'an altered issue time',
      () => {
        const beacon = edge();
        const challenge = beacon.issue(PLAYER, 'eu-west');
        const altered = { ...challenge, issuedAtUs: challenge.issuedAtUs + 50_000 };
        return beacon.answer(
          { playerId: PLAYER, region: 'eu-west', challenge: altered },
          monotonicUs(),
        );
      },
      'PROBE_BAD_SIGNATURE',
    ],
  ])('refuses %s', (_name, act, code) => {
    expect(act).toThrow(expect.objectContaining({ code }));
  });
});
