import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** A challenge as its answer checks it. */
export interface StoredProbeChallenge {
  readonly playerId: string;
  readonly region: string;
  readonly nonceHash: Buffer;
  readonly issuedAt: Date;
  readonly expiresAt: Date;
  readonly answeredAt: Date | null;
}

interface ChallengeRow {
  player_id: string;
  region: string;
  nonce_hash: Buffer;
  issued_at: Date;
  expires_at: Date;
  answered_at: Date | null;
}

/**
 * Owns `probe_challenges`: the API-hosted probe's single-use challenges (a deployment without
 * regional edges). They live in PostgreSQL so that any API replica may receive the answer.
 */
@Injectable()
export class ProbeChallengeStore {
  async insert(
    manager: EntityManager,
    challenge: {
      id: string;
      playerId: string;
      region: string;
      nonceHash: Buffer;
      issuedAt: Date;
      expiresAt: Date;
    },
  ): Promise<void> {
    await manager.query(
      `INSERT INTO probe_challenges (id, player_id, region, nonce_hash, issued_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        challenge.id,
        challenge.playerId,
        challenge.region,
        challenge.nonceHash,
        challenge.issuedAt,
        challenge.expiresAt,
      ],
    );
  }

  /** Moves the issue time of a challenge still as inserted (unanswered, `provisional`) to `issuedAt`. */
  async restamp(
    manager: EntityManager,
    id: string,
    times: { provisional: Date; issuedAt: Date; expiresAt: Date },
  ): Promise<void> {
    await manager.query(
      `UPDATE probe_challenges SET issued_at = $2, expires_at = $3
        WHERE id = $1 AND answered_at IS NULL AND issued_at = $4`,
      [id, times.issuedAt, times.expiresAt, times.provisional],
    );
  }

  /** The challenge, its row locked until the caller's transaction ends. */
  async lock(manager: EntityManager, id: string): Promise<StoredProbeChallenge | undefined> {
    const rows = await manager.query<ChallengeRow[]>(
      `SELECT player_id, region, nonce_hash, issued_at, expires_at, answered_at
         FROM probe_challenges WHERE id = $1 FOR UPDATE`,
      [id],
    );
    const row = rows[0];
    return row
      ? {
          playerId: row.player_id,
          region: row.region,
          nonceHash: row.nonce_hash,
          issuedAt: row.issued_at,
          expiresAt: row.expires_at,
          answeredAt: row.answered_at,
        }
      : undefined;
  }

  async markAnswered(
    manager: EntityManager,
    id: string,
    answer: { answeredAt: Date; rttMs: number },
  ): Promise<void> {
    await manager.query(`UPDATE probe_challenges SET answered_at = $2, rtt_ms = $3 WHERE id = $1`, [
      id,
      answer.answeredAt,
      answer.rttMs,
    ]);
  }
}
