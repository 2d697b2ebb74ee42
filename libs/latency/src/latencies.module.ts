import { Module } from '@nestjs/common';
import { LatencyStore } from './latency.store';
import { ProbeChallengeStore } from './probe-challenge.store';
import { ProbeMeasurementStore } from './probe-measurement.store';

/**
 * Owns a player's measured latency: `player_latencies` (written by probe answers, read when a
 * ticket is created), `probe_challenges` and `probe_measurements`.
 */
@Module({
  providers: [LatencyStore, ProbeChallengeStore, ProbeMeasurementStore],
  exports: [LatencyStore, ProbeChallengeStore, ProbeMeasurementStore],
})
export class LatenciesModule {}
