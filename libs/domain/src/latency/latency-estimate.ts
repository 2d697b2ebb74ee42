import { DomainError, DomainErrorCode } from '../shared/domain.error';

/**
 * The samples kept after adding `sample`: the newest `keep`, oldest first. A region's estimate
 * follows the player's current network, not their best ever.
 */
export function retainSamples(previous: readonly number[], sample: number, keep: number): number[] {
  if (!Number.isInteger(keep) || keep < 1) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `keep must be an integer >= 1, got ${keep}`,
    );
  }
  if (!Number.isFinite(sample) || sample < 0) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `an RTT sample must be a finite number of ms >= 0, got ${sample}`,
    );
  }
  return [...previous, sample].slice(-keep);
}

/**
 * The robust RTT estimate of a region: the median of the samples, so one delayed answer (a GC
 * pause, a retransmit) does not move placement.
 */
export function latencyEstimate(samples: readonly number[]): number {
  if (samples.length === 0) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      'a latency estimate needs at least one sample',
    );
  }
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const upper = sorted[middle] as number;
  return sorted.length % 2 === 1 ? upper : ((sorted[middle - 1] as number) + upper) / 2;
}
