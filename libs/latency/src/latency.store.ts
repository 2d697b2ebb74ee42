import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { latencyEstimate, retainSamples } from '@matchplane/domain';
import type { UnitOfWork } from '@matchplane/persistence';

/** Owns `player_latencies`: each player's retained RTT samples and estimate per region. */
@Injectable()
export class LatencyStore {
  /**
   * Adds a sample (row locked for the read-modify-write, so in `unit`'s transaction) and returns
   * the new estimate.
   */
  async record(
    unit: UnitOfWork,
    input: { playerId: string; region: string; sampleMs: number; keep: number; measuredAt: Date },
  ): Promise<{ samplesMs: number[]; estimateMs: number }> {
    const { manager } = unit;
    // Insert-or-lock first, so two concurrent answers for one region serialise on the row.
    await manager.query(
      `INSERT INTO player_latencies (player_id, region, samples_ms, estimate_ms, measured_at)
       VALUES ($1, $2, '{}', 0, $3) ON CONFLICT (player_id, region) DO NOTHING`,
      [input.playerId, input.region, input.measuredAt],
    );
    const rows = await manager.query<{ samples_ms: number[] }[]>(
      `SELECT samples_ms FROM player_latencies WHERE player_id = $1 AND region = $2 FOR UPDATE`,
      [input.playerId, input.region],
    );
    const samplesMs = retainSamples(rows[0]?.samples_ms ?? [], input.sampleMs, input.keep);
    const estimateMs = latencyEstimate(samplesMs);
    await manager.query(
      `UPDATE player_latencies SET samples_ms = $3, estimate_ms = $4, measured_at = $5
        WHERE player_id = $1 AND region = $2`,
      [input.playerId, input.region, samplesMs, estimateMs, input.measuredAt],
    );
    return { samplesMs, estimateMs };
  }

  /** The player's estimates by region, limited to `regions` (a region dropped from config no longer counts). */
  async estimates(
    manager: EntityManager,
    playerId: string,
    regions: readonly string[],
  ): Promise<Record<string, number>> {
    const rows = await manager.query<{ region: string; estimate_ms: number }[]>(
      `SELECT region, estimate_ms FROM player_latencies
        WHERE player_id = $1 AND region = ANY($2::text[]) AND cardinality(samples_ms) > 0
        ORDER BY region`,
      [playerId, regions],
    );
    return Object.fromEntries(rows.map((row) => [row.region, row.estimate_ms]));
  }
}
