import { Pool } from 'pg';

export interface MatchRow {
  readonly id: string;
  readonly mode: string;
  readonly region: string;
  readonly state: string;
  readonly failureReason: string | null;
}

/**
 * What the demo reads straight from its own database, as an operator would: the player API tells
 * a client its server endpoint but not the match's region, and a failure's reason is not in the
 * notifications either.
 */
export class ControlPlaneView {
  private readonly pool: Pool;

  constructor(databaseName: string) {
    this.pool = new Pool({
      host: process.env.DATABASE_HOST || '127.0.0.1',
      port: Number(process.env.DATABASE_PORT || 5432),
      user: process.env.DATABASE_USER || 'postgres',
      password: process.env.DATABASE_PASSWORD || undefined,
      database: databaseName,
      max: 2,
      connectionTimeoutMillis: 5_000,
    });
    this.pool.on('error', () => undefined);
  }

  async match(matchId: string): Promise<MatchRow | undefined> {
    const { rows } = await this.pool.query<{
      id: string;
      mode: string;
      region: string;
      state: string;
      failure_reason: string | null;
    }>(`SELECT id, mode, region, state, failure_reason FROM matches WHERE id = $1`, [matchId]);
    const row = rows[0];
    return row
      ? {
          id: row.id,
          mode: row.mode,
          region: row.region,
          state: row.state,
          failureReason: row.failure_reason,
        }
      : undefined;
  }

  /** Resolves once the match is in `state`; a terminal state other than it is an error. */
  async untilState(matchId: string, state: string): Promise<void> {
    for (;;) {
      const row = await this.match(matchId);
      if (row?.state === state) return;
      if (row && ['COMPLETED', 'FAILED', 'CANCELLED'].includes(row.state))
        throw new Error(
          `match ${matchId} ended ${row.state}${row.failureReason ? ` (${row.failureReason})` : ''} instead of reaching ${state}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}
