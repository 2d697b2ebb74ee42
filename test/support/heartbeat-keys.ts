import type { DataSource } from 'typeorm';

/**
 * The idempotency keys stored for a player's heartbeats: one per heartbeat PostgreSQL answered,
 * none for one the liveness store answered.
 */
export async function heartbeatKeyCount(ds: DataSource, playerId: string): Promise<number> {
  const rows = await ds.query<{ n: string }[]>(
    `SELECT count(*) AS n FROM idempotency_keys WHERE player_id = $1 AND route LIKE '%heartbeat'`,
    [playerId],
  );
  return Number(rows[0]?.n);
}
