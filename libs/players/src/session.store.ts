import { Injectable, Optional } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { RequestBatcher, type BatchOutcome } from '@matchplane/persistence';
import { SessionCache } from './session-cache';

export interface AuthenticatedSession {
  readonly sessionId: string;
  readonly playerId: string;
  readonly expiresAt: Date;
}

interface SessionLookup {
  readonly tokenHash: Buffer;
  readonly now: Date;
}

/**
 * Owns `sessions`: token hashes with expiry and revocation.
 *
 * Every player request authenticates, so lookups that arrive together share one statement (see
 * RequestBatcher) instead of a round trip each, and a live session is then kept in the
 * SessionCache (when there is one, and while it is active) for SESSION_CACHE_TTL_MS. Revoking
 * here evicts at once; another replica evicts when the revocation announcement reaches it, so
 * until then (or until the TTL, if the announcement was lost) it may still accept the token. See
 * docs/decisions/2026-12-08-session-cache.md. Without the cache a revoked session is refused by
 * the very next lookup, on every replica.
 */
@Injectable()
export class SessionStore {
  private readonly lookups = new RequestBatcher<SessionLookup, AuthenticatedSession | undefined>(
    (batch) => this.lookUp(batch),
    { maxBatchSize: 256, maxConcurrentBatches: 4 },
  );

  constructor(
    private readonly dataSource: DataSource,
    @Optional() private readonly cache?: SessionCache,
  ) {}

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
    const cached = this.cache?.get(tokenHash, now);
    if (cached) return cached;
    // Read before the lookup: a revocation heard while it is in flight makes its answer stale.
    const epoch = this.cache?.epoch();
    const session = await this.lookups.submit({ tokenHash, now });
    if (session && epoch !== undefined) this.cache?.remember(tokenHash, session, now, epoch);
    return session;
  }

  private async lookUp(
    batch: readonly SessionLookup[],
  ): Promise<BatchOutcome<AuthenticatedSession | undefined>[]> {
    const rows = await this.dataSource.query<
      { n: string; id: string; player_id: string; expires_at: Date }[]
    >(
      `SELECT l.n, s.id, s.player_id, s.expires_at
         FROM unnest($1::bytea[], $2::timestamptz[]) WITH ORDINALITY AS l(token_hash, at, n)
         JOIN sessions s ON s.token_hash = l.token_hash AND s.revoked_at IS NULL AND s.expires_at > l.at`,
      [batch.map((lookup) => lookup.tokenHash), batch.map((lookup) => lookup.now)],
    );
    const found = new Map(rows.map((row) => [Number(row.n), row]));
    return batch.map((_, index) => {
      const row = found.get(index + 1);
      return {
        value: row
          ? { sessionId: row.id, playerId: row.player_id, expiresAt: row.expires_at }
          : undefined,
      };
    });
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
    this.cache?.revoked(sessionId);
  }
}
