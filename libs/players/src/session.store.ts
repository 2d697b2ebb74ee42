import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

export interface AuthenticatedSession {
  readonly sessionId: string;
  readonly playerId: string;
  readonly expiresAt: Date;
}

/** Owns `sessions`: token hashes with expiry and revocation. */
@Injectable()
export class SessionStore {
  constructor(private readonly dataSource: DataSource) {}

  async create(
    manager: EntityManager,
    playerId: string,
    tokenHash: Buffer,
    expiresAt: Date,
  ): Promise<string> {
    const rows = await manager.query<{ id: string }[]>(
      `INSERT INTO sessions (player_id, token_hash, expires_at) VALUES ($1, $2, $3) RETURNING id`,
      [playerId, tokenHash, expiresAt],
    );
    return (rows[0] as { id: string }).id;
  }

  /** The live session of a token hash: unrevoked and unexpired at `now`. */
  async authenticate(tokenHash: Buffer, now: Date): Promise<AuthenticatedSession | undefined> {
    const rows = await this.dataSource.query<{ id: string; player_id: string; expires_at: Date }[]>(
      `SELECT id, player_id, expires_at FROM sessions
        WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > $2`,
      [tokenHash, now],
    );
    const row = rows[0];
    return row
      ? { sessionId: row.id, playerId: row.player_id, expiresAt: row.expires_at }
      : undefined;
  }

  /** Which of these sessions are still live (unrevoked, unexpired) at `now`. */
  async liveAmong(sessionIds: readonly string[], now: Date): Promise<Set<string>> {
    if (sessionIds.length === 0) return new Set();
    const rows = await this.dataSource.query<{ id: string }[]>(
      `SELECT id FROM sessions WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL AND expires_at > $2`,
      [sessionIds, now],
    );
    return new Set(rows.map((row) => row.id));
  }

  async revoke(sessionId: string, now: Date): Promise<void> {
    await this.dataSource.query(
      `UPDATE sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`,
      [sessionId, now],
    );
  }
}
