import { randomBytes } from 'node:crypto';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import {
  newMeasurementId,
  newProbeNonce,
  probeChallengeProblem,
  signProbeChallenge,
  signProbeMeasurement,
  type ProbeChallenge,
  type ProbeMeasurement,
  type SigningKeys,
} from '@matchplane/join-auth';

/** Microseconds on this process's monotonic clock: immune to wall-clock steps (NTP, an operator). */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * Issues signed challenges and turns answers into signed measurements. Stateless: everything an
 * answer needs comes back inside the signed challenge, so the edge holds nothing per player. The
 * RTT is the answer's receive time minus the challenge's send time, both on this process's
 * monotonic clock (a challenge carries this process's edge id; another process refuses it).
 */
export class ProbeEdge {
  /** Random per process: the monotonic clock of one process means nothing to another. */
  readonly edgeId = randomBytes(9).toString('base64url');

  constructor(
    readonly region: string,
    private readonly signing: SigningKeys,
    private readonly challengeTtlMs: number,
  ) {}

  /** Call as late as possible before the bytes are written: the issue time is stamped here. */
  issue(playerId: string, region: string): ProbeChallenge {
    this.requireOwnRegion(region);
    return signProbeChallenge(this.signing.keys, this.signing.activeKeyId, {
      nonce: newProbeNonce(),
      playerId,
      region,
      edgeId: this.edgeId,
      issuedAtUs: monotonicUs(),
    });
  }

  /**
   * Checks the echoed challenge (signature, this edge, the answering player and region, expiry)
   * and signs one measurement of it. `receivedAtUs` is stamped when the answer arrived. A challenge
   * answered twice measures a second, longer RTT: a delay can only add to it, so it is harmless;
   * the API makes each measurement single use.
   */
  answer(
    answer: { playerId: string; region: string; challenge: ProbeChallenge },
    receivedAtUs: number,
  ): ProbeMeasurement {
    const { challenge } = answer;
    switch (probeChallengeProblem(this.signing.keys, challenge)) {
      case 'MALFORMED':
        throw new CodedError(ErrorCode.VALIDATION_FAILED, 'challenge is not a probe challenge');
      case 'UNKNOWN_KEY':
        throw new CodedError(
          ErrorCode.PROBE_UNKNOWN_KEY,
          `challenge key id ${JSON.stringify(challenge.keyId)} is not one of this edge's keys`,
        );
      case 'BAD_SIGNATURE':
        throw new CodedError(
          ErrorCode.PROBE_BAD_SIGNATURE,
          'challenge signature does not match its contents (forged or altered)',
        );
      case undefined:
        break;
    }
    if (challenge.playerId !== answer.playerId) {
      throw new CodedError(ErrorCode.PROBE_WRONG_PLAYER, 'challenge was issued to another player');
    }
    if (challenge.region !== answer.region || challenge.region !== this.region) {
      throw new CodedError(
        ErrorCode.PROBE_WRONG_REGION,
        `challenge was issued for ${challenge.region}, answered for ${answer.region}; this edge measures ${this.region}`,
      );
    }
    if (challenge.edgeId !== this.edgeId) {
      throw new CodedError(
        ErrorCode.PROBE_WRONG_EDGE,
        'challenge was issued by another edge process; answer where it was issued',
      );
    }
    const elapsedUs = receivedAtUs - challenge.issuedAtUs;
    if (elapsedUs > this.challengeTtlMs * 1000) {
      throw new CodedError(
        ErrorCode.PROBE_EXPIRED,
        `challenge expired (${this.challengeTtlMs} ms to answer); request a new one`,
      );
    }
    return signProbeMeasurement(this.signing.keys, this.signing.activeKeyId, {
      measurementId: newMeasurementId(),
      playerId: challenge.playerId,
      region: challenge.region,
      samplesMs: [Math.max(0, elapsedUs) / 1000],
      measuredAt: new Date().toISOString(),
    });
  }

  private requireOwnRegion(region: string): void {
    if (region !== this.region) {
      throw new CodedError(
        ErrorCode.PROBE_WRONG_REGION,
        `this edge measures ${this.region}, not ${region.slice(0, 64)}`,
      );
    }
  }
}
