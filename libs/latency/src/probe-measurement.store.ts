import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/**
 * Owns `probe_measurements`: the ids of the edge-signed measurements recorded, so each is
 * recorded once.
 */
@Injectable()
export class ProbeMeasurementStore {
  /** Records the measurement's id; false when it was recorded before (a replay). */
  async claim(
    manager: EntityManager,
    measurement: {
      id: string;
      playerId: string;
      region: string;
      keyId: string;
      samplesMs: readonly number[];
      measuredAt: Date;
    },
  ): Promise<boolean> {
    const claimed = await manager.query<{ id: string }[]>(
      `INSERT INTO probe_measurements (id, player_id, region, key_id, samples_ms, measured_at)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING RETURNING id`,
      [
        measurement.id,
        measurement.playerId,
        measurement.region,
        measurement.keyId,
        measurement.samplesMs,
        measurement.measuredAt,
      ],
    );
    return claimed.length > 0;
  }
}
