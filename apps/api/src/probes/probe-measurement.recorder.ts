import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ErrorCode, type SignedProbeMeasurement } from '@matchplane/contracts';
import { latencyEstimate } from '@matchplane/domain';
import { CodedError } from '@matchplane/errors';
import { probeMeasurementProblem } from '@matchplane/join-auth';
import { runInTransaction } from '@matchplane/persistence';
import { TicketStore } from '@matchplane/tickets';
import { ApiConfig } from '../api.config';
import { QueuePolicy } from '../queue/queue-policy';
import { LatencyStore, ProbeMeasurementStore } from '@matchplane/latency';
import { ProbeMeasurementKeys } from './probe-measurement.keys';
import type { RecordedProbe } from './probe.recorder';

/**
 * Records what a region's probe edge measured and signed: every check that needs no row runs
 * first, then one transaction claims the measurement id (single use, libs/latency's
 * ProbeMeasurementStore) and records each sample exactly as an API-hosted answer records its one, so a refusal writes nothing.
 */
@Injectable()
export class ProbeMeasurementRecorder {
  private readonly keep: number;
  private readonly maxAgeMs: number;

  constructor(
    private readonly dataSource: DataSource,
    private readonly latencies: LatencyStore,
    private readonly measurements: ProbeMeasurementStore,
    private readonly tickets: TicketStore,
    private readonly policy: QueuePolicy,
    private readonly keys: ProbeMeasurementKeys,
    @Inject(ApiConfig) config: ApiConfig,
  ) {
    this.keep = config.PROBE_SAMPLES_KEPT;
    this.maxAgeMs = config.PROBE_MEASUREMENT_MAX_AGE_MS;
  }

  async record(
    playerId: string,
    measurement: SignedProbeMeasurement,
    receivedAt: Date,
  ): Promise<RecordedProbe> {
    this.verify(playerId, measurement, receivedAt);
    return runInTransaction(this.dataSource, async (manager, unit) => {
      const measuredAt = new Date(measurement.measuredAt);
      const claimed = await this.measurements.claim(manager, {
        id: measurement.measurementId,
        playerId,
        region: measurement.region,
        keyId: measurement.keyId,
        samplesMs: measurement.samplesMs,
        measuredAt,
      });
      if (!claimed) {
        throw new CodedError(
          ErrorCode.PROBE_MEASUREMENT_REPLAYED,
          'This measurement was already recorded; each is single use',
        );
      }
      let recorded = { samplesMs: [] as number[], estimateMs: 0 };
      for (const sampleMs of measurement.samplesMs) {
        recorded = await this.latencies.record(unit, {
          playerId,
          region: measurement.region,
          sampleMs,
          keep: this.keep,
          measuredAt,
        });
      }
      // A searching ticket now has this RTT; the store refreshes its candidate once this commits.
      await this.tickets.applyLatency(unit, playerId, measurement.region, recorded.estimateMs);
      return { rttMs: latencyEstimate([...measurement.samplesMs]), ...recorded };
    });
  }

  private verify(playerId: string, measurement: SignedProbeMeasurement, receivedAt: Date): void {
    const keys = this.keys.keys;
    if (keys === null) {
      throw new CodedError(
        ErrorCode.NOT_CONFIGURED,
        'No probe key set is configured (PROBE_KEYS_FILE); edge measurements cannot be verified',
      );
    }
    switch (probeMeasurementProblem(keys, measurement)) {
      case 'MALFORMED':
        throw new CodedError(
          ErrorCode.VALIDATION_FAILED,
          'The body is not a probe measurement as an edge signs it (hand it over unchanged)',
        );
      case 'UNKNOWN_KEY':
        throw new CodedError(
          ErrorCode.PROBE_UNKNOWN_KEY,
          `The measurement is signed with key id ${JSON.stringify(measurement.keyId.slice(0, 64))}, which this API does not hold`,
        );
      case 'BAD_SIGNATURE':
        throw new CodedError(
          ErrorCode.PROBE_BAD_SIGNATURE,
          'The measurement signature does not match its contents (forged or altered)',
        );
      case undefined:
        break;
    }
    if (measurement.playerId !== playerId) {
      throw new CodedError(
        ErrorCode.PROBE_WRONG_PLAYER,
        'This measurement was taken for another player',
      );
    }
    this.policy.region(measurement.region);
    const ageMs = receivedAt.getTime() - Date.parse(measurement.measuredAt);
    // Both bounds: a measurement stamped far in the future would otherwise stay fresh for longer.
    if (Math.abs(ageMs) > this.maxAgeMs) {
      throw new CodedError(
        ErrorCode.PROBE_MEASUREMENT_EXPIRED,
        `The measurement is ${Math.round(ageMs / 1000)} s old; it must be handed over within ${this.maxAgeMs / 1000} s. Probe again`,
      );
    }
  }
}
