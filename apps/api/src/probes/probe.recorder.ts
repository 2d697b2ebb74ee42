import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';

export interface IssuedChallenge {
  readonly challengeId: string;
  readonly nonce: string;
  readonly issuedAt: Date;
  readonly expiresAt: Date;
  /** Resolves once the stored row holds issuedAt (it is corrected after the response is sent). */
  readonly settled?: Promise<void>;
}

export interface RecordedProbe {
  readonly rttMs: number;
  readonly estimateMs: number;
  readonly samplesMs: number[];
}

/** Why an answer was refused; each has its own code. */
export type ProbeRefusal =
  'NOT_FOUND' | 'WRONG_PLAYER' | 'WRONG_REGION' | 'ALREADY_ANSWERED' | 'NONCE_MISMATCH' | 'EXPIRED';

const REFUSAL_CODES = {
  NOT_FOUND: ErrorCode.PROBE_CHALLENGE_NOT_FOUND,
  WRONG_PLAYER: ErrorCode.PROBE_WRONG_PLAYER,
  WRONG_REGION: ErrorCode.PROBE_WRONG_REGION,
  ALREADY_ANSWERED: ErrorCode.PROBE_ALREADY_ANSWERED,
  NONCE_MISMATCH: ErrorCode.PROBE_NONCE_MISMATCH,
  EXPIRED: ErrorCode.PROBE_EXPIRED,
} as const satisfies Record<ProbeRefusal, ErrorCode>;

export class ProbeRefusedError extends CodedError<(typeof REFUSAL_CODES)[ProbeRefusal]> {
  override name = 'ProbeRefusedError';
  constructor(
    readonly refusal: ProbeRefusal,
    message: string,
  ) {
    super(REFUSAL_CODES[refusal], message);
  }
}

/**
 * Issues latency challenges and records answers as server-measured RTTs (receive time minus
 * issue time). The probe routes answer 503 when none is bound: never a success that stored nothing.
 */
export abstract class ProbeRecorder {
  abstract issue(playerId: string, region: string, now: Date): Promise<IssuedChallenge>;
  abstract answer(
    playerId: string,
    region: string,
    answer: { challengeId: string; nonce: string },
    receivedAt: Date,
  ): Promise<RecordedProbe>;
}
