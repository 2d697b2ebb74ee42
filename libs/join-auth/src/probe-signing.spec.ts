import { randomBytes } from 'node:crypto';
import { KeySet } from './key-set';
import {
  decodeProbeChallenge,
  encodeProbeChallenge,
  probeChallengeDatagramBody,
  encodeProbeMeasurement,
  newProbeNonce,
  probeChallengeProblem,
  probeMeasurementProblem,
  signProbeChallenge,
  signProbeMeasurement,
  type ProbeChallenge,
  type ProbeMeasurement,
} from './probe-signing';

const PLAYER = '6f1c2a4e-0b7d-4c1e-9a53-2f8d1e7b4c90';
const OTHER_PLAYER = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const keys = KeySet.fromKeys({ old: randomBytes(32), new: randomBytes(32) });

function challenge(keyId = 'new'): ProbeChallenge {
  return signProbeChallenge(keys, keyId, {
    nonce: 'AAAAAAAAAAAAAAAAAAAAAA',
    playerId: PLAYER,
    region: 'eu-west',
    edgeId: 'edge-1',
    issuedAtUs: 123_456_789,
  });
}

function measurement(keyId = 'new'): ProbeMeasurement {
  return signProbeMeasurement(keys, keyId, {
    measurementId: '11111111-2222-4333-8444-555555555555',
    playerId: PLAYER,
    region: 'eu-west',
    samplesMs: [15.123, 14.9],
    measuredAt: '2026-12-06T04:00:00.000Z',
  });
}

describe('probe signing', () => {
  it('lays a challenge out as tag, length-prefixed strings and the issue time in µs', () => {
    const bytes = encodeProbeChallenge({
      keyId: 'k',
      nonce: 'n',
      playerId: 'p',
      region: 'r',
      edgeId: 'e',
      issuedAtUs: 258,
    });
    expect(bytes.toString('hex')).toBe(
      '10' + '00016b' + '00016e' + '000170' + '000172' + '000165' + '0000000000000102',
    );
  });

  it('lays a measurement out with its samples as u32 µs after a u8 count', () => {
    const bytes = encodeProbeMeasurement({
      keyId: 'k',
      measurementId: 'm',
      playerId: 'p',
      region: 'r',
      measuredAt: new Date(1).toISOString(),
      samplesMs: [1.5],
    });
    expect(bytes.toString('hex')).toBe(
      '11' + '00016b' + '00016d' + '000170' + '000172' + '0000000000000001' + '01' + '000005dc',
    );
  });

  it('reads a challenge back from its datagram body (bytes then MAC), and nothing else', () => {
    const signed = challenge();
    const body = probeChallengeDatagramBody(signed);
    expect(decodeProbeChallenge(body)).toEqual(signed);
    expect(decodeProbeChallenge(body.subarray(0, body.length - 1))).toBeUndefined();
    expect(decodeProbeChallenge(Buffer.concat([body, Buffer.of(0)]))).toBeUndefined();
    expect(
      decodeProbeChallenge(Buffer.concat([Buffer.of(0x11), body.subarray(1)])),
    ).toBeUndefined();
  });

  it('draws nonces of 16 random bytes, none repeated across refills of its pool', () => {
    const nonces = Array.from({ length: 1_000 }, () => newProbeNonce());
    expect(new Set(nonces).size).toBe(nonces.length);
    for (const nonce of nonces) expect(Buffer.from(nonce, 'base64url')).toHaveLength(16);
  });

  it('verifies what it signed under either key of the set (rotation)', () => {
    expect(probeChallengeProblem(keys, challenge('old'))).toBeUndefined();
    expect(probeChallengeProblem(keys, challenge('new'))).toBeUndefined();
    expect(probeMeasurementProblem(keys, measurement('old'))).toBeUndefined();
    expect(probeMeasurementProblem(keys, measurement('new'))).toBeUndefined();
  });

  it('refuses any changed field as a bad signature', () => {
    const signed = measurement();
    for (const tampered of [
      { ...signed, samplesMs: [5, 14.9] },
      { ...signed, playerId: OTHER_PLAYER },
      { ...signed, region: 'us-east' },
      { ...signed, measuredAt: '2026-12-06T04:00:01.000Z' },
      { ...signed, measurementId: '11111111-2222-4333-8444-555555555556' },
    ]) {
      expect(probeMeasurementProblem(keys, tampered)).toBe('BAD_SIGNATURE');
    }
    expect(probeChallengeProblem(keys, { ...challenge(), issuedAtUs: 123_456_790 })).toBe(
      'BAD_SIGNATURE',
    );
  });

  it('covers the key id: the same MAC under another key id does not verify', () => {
    expect(probeMeasurementProblem(keys, { ...measurement('new'), keyId: 'old' })).toBe(
      'BAD_SIGNATURE',
    );
  });

  it('names a key the set does not hold as unknown', () => {
    expect(probeMeasurementProblem(keys.without('new'), measurement('new'))).toBe('UNKNOWN_KEY');
  });

  it('refuses malformed values before checking any MAC', () => {
    const signed = measurement();
    for (const malformed of [
      { ...signed, samplesMs: [] },
      { ...signed, samplesMs: [1.0001] },
      { ...signed, samplesMs: [-1] },
      { ...signed, measuredAt: '2026-12-06T04:00:00Z' },
      { ...signed, playerId: PLAYER.toUpperCase() },
      { ...signed, signature: 'not base64url!' },
    ]) {
      expect(probeMeasurementProblem(keys, malformed)).toBe('MALFORMED');
    }
  });
});
