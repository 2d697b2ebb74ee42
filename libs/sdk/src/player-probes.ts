import {
  PlayerRoutes,
  type ProbeAnswerRequest,
  type ProbeAnswerResponse,
  type ProbeChallengeResponse,
  type QueueOptionsResponse,
} from '@matchplane/contracts';
import {
  checkProbeSamples,
  checkRecordWithinMs,
  DEFAULT_RECORD_WITHIN_MS,
  httpProbeEdge,
  type EdgeProber,
} from './edge-probe';
import type { PlayerCalls } from './player-calls';

export interface ProbeOptions {
  /**
   * Challenge/answer round trips per region, 1 to MAX_PROBE_SAMPLES (50, the most the API keeps);
   * the server keeps a median of recent ones. Default 3.
   */
  samples?: number;
  /**
   * At an edge: how old a chain of samples gets before its measurements go to the API (default
   * DEFAULT_RECORD_WITHIN_MS, 20 s; positive and finite, a RangeError otherwise); keep it below
   * the API's PROBE_MEASUREMENT_MAX_AGE_MS. Measurements are recorded between chains, never while
   * a sample is on the wire.
   */
  recordWithinMs?: number;
}

export interface ProbeAllResult {
  /** The last answer per measured region (its `estimateMs` is what placement uses). */
  measured: Record<string, ProbeAnswerResponse>;
  /** Regions whose probe failed; queueing needs only one measured region. */
  failed: Record<string, Error>;
}

/** PlayerClient's queue options and latency probes (documented there). */
export class ProbeCalls {
  /** The queue options last fetched: where the probe edges are, how often to heartbeat. */
  lastQueueOptions: QueueOptionsResponse | undefined;

  constructor(
    private readonly calls: PlayerCalls,
    private readonly edges: EdgeProber,
    private readonly playerId: () => string | undefined,
  ) {}

  async queueOptions(): Promise<QueueOptionsResponse> {
    const options = await this.calls.required<QueueOptionsResponse>({
      method: 'GET',
      path: PlayerRoutes.queueOptions,
      retry: 'safe',
    });
    this.lastQueueOptions = options;
    return options;
  }

  async probe(region: string, options: ProbeOptions = {}): Promise<ProbeAnswerResponse> {
    // Checked here, the one way in (probeAll comes through here too), whichever path follows.
    const { samples = 3, recordWithinMs = DEFAULT_RECORD_WITHIN_MS } = options;
    checkProbeSamples(samples);
    checkRecordWithinMs(recordWithinMs);
    const edge = httpProbeEdge(this.lastQueueOptions, region);
    if (edge !== undefined) {
      return this.edges.probe(
        {
          edge,
          region,
          samples,
          playerId: this.playerId(),
          recordWithinMs,
        },
        (body) =>
          this.calls.required({
            method: 'POST',
            path: PlayerRoutes.probeMeasurements,
            body,
            retry: 'never',
          }),
      );
    }
    let last: ProbeAnswerResponse | undefined;
    for (let sample = 0; sample < samples; sample += 1) {
      const challenge = await this.calls.required<ProbeChallengeResponse>({
        method: 'POST',
        path: PlayerRoutes.probeChallenge(region),
        retry: 'idempotency-key',
      });
      const answer: ProbeAnswerRequest = {
        challengeId: challenge.challengeId,
        nonce: challenge.nonce,
      };
      last = await this.calls.required<ProbeAnswerResponse>({
        method: 'POST',
        path: PlayerRoutes.probeAnswer(region),
        body: answer,
        retry: 'never',
      });
    }
    // samples >= 1, so the loop ran.
    return last as ProbeAnswerResponse;
  }

  async probeAll(regions?: readonly string[], options: ProbeOptions = {}): Promise<ProbeAllResult> {
    const targets = regions ?? (await this.queueOptions()).regions;
    const result: ProbeAllResult = { measured: {}, failed: {} };
    for (const region of targets) {
      try {
        result.measured[region] = await this.probe(region, options);
      } catch (err) {
        result.failed[region] = err instanceof Error ? err : new Error(String(err));
      }
    }
    return result;
  }
}
