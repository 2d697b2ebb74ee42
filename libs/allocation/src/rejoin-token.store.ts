import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** A freshly signed join token for a player who left a running match (the allocator signs it). */
export interface RejoinToken {
  readonly matchId: string;
  readonly playerId: string;
  readonly joinToken: string;
  readonly keyId: string;
  readonly issuedAt: Date;
  readonly expiresAt: Date;
}

/**
 * Owns `rejoin_tokens`: one fresh token per (match, player), replaced on each leave. Kept apart
 * from `assignments` because the roster manifest commits to the assignments' tokens: a new token
 * there would break the manifest a game server verifies.
 */
@Injectable()
export class RejoinTokenStore {
  /** Records `token` unless a newer one is already recorded (a redelivered job changes nothing). */
  async save(manager: EntityManager, token: RejoinToken): Promise<void> {
    await manager.query(
      `INSERT INTO rejoin_tokens (match_id, player_id, join_token, key_id, issued_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (match_id, player_id) DO UPDATE
          SET join_token = EXCLUDED.join_token, key_id = EXCLUDED.key_id,
              issued_at = EXCLUDED.issued_at, expires_at = EXCLUDED.expires_at
        WHERE rejoin_tokens.issued_at < EXCLUDED.issued_at`,
      [
        token.matchId,
        token.playerId,
        token.joinToken,
        token.keyId,
        token.issuedAt,
        token.expiresAt,
      ],
    );
  }

  async find(
    manager: EntityManager,
    matchId: string,
    playerId: string,
  ): Promise<RejoinToken | undefined> {
    const [row] = await manager.query<
      {
        join_token: string;
        key_id: string;
        issued_at: Date;
        expires_at: Date;
      }[]
    >(
      `SELECT join_token, key_id, issued_at, expires_at FROM rejoin_tokens
        WHERE match_id = $1 AND player_id = $2`,
      [matchId, playerId],
    );
    return (
      row && {
        matchId,
        playerId,
        joinToken: row.join_token,
        keyId: row.key_id,
        issuedAt: row.issued_at,
        expiresAt: row.expires_at,
      }
    );
  }
}
