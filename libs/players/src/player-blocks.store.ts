import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { runInTransaction } from '@matchplane/persistence';

/** One entry of a player's block list. */
export interface BlockedPlayer {
  readonly playerId: string;
  readonly blockedAt: Date;
}

/** What adding to a block list did: added, already there, or refused (and why). */
export type BlockOutcome = 'added' | 'already_blocked' | 'unknown_player' | 'list_full';

interface BlockRow {
  blocked_player_id: string;
  created_at: Date;
}

interface AvoidRow {
  player_id: string;
  avoided_id: string;
}

/**
 * Owns `player_blocks`: whom each player blocked (issue 34). The API changes a player's own
 * list; the matcher reads, for the players of a pass, everyone they must not meet (both
 * directions) so that no match holds a player and someone it blocked or that blocked it.
 */
@Injectable()
export class PlayerBlocks {
  constructor(private readonly dataSource: DataSource) {}

  /** `playerId`'s list, oldest block first. */
  async list(playerId: string): Promise<BlockedPlayer[]> {
    const rows = await this.dataSource.query<BlockRow[]>(
      `SELECT blocked_player_id, created_at FROM player_blocks
        WHERE player_id = $1 ORDER BY created_at, blocked_player_id`,
      [playerId],
    );
    return rows.map((row) => ({ playerId: row.blocked_player_id, blockedAt: row.created_at }));
  }

  /**
   * Blocks `blockedPlayerId` for `playerId`, unless no such player exists or the list holds
   * `maxEntries` already. A repeat changes nothing.
   */
  add(playerId: string, blockedPlayerId: string, maxEntries: number): Promise<BlockOutcome> {
    return runInTransaction(this.dataSource, async (manager) => {
      // One player's changes one at a time, so two adds at once cannot both take the last place.
      await manager.query(`SELECT 1 FROM players WHERE id = $1 FOR UPDATE`, [playerId]);
      const [state] = await manager.query<{ known: boolean; present: boolean; entries: number }[]>(
        `SELECT EXISTS (SELECT 1 FROM players WHERE id = $2) AS known,
                EXISTS (SELECT 1 FROM player_blocks
                         WHERE player_id = $1 AND blocked_player_id = $2) AS present,
                (SELECT count(*)::int FROM player_blocks WHERE player_id = $1) AS entries`,
        [playerId, blockedPlayerId],
      );
      if (state?.present) return 'already_blocked';
      if (!state?.known) return 'unknown_player';
      if (state.entries >= maxEntries) return 'list_full';
      await manager.query(
        `INSERT INTO player_blocks (player_id, blocked_player_id) VALUES ($1, $2)
         ON CONFLICT DO NOTHING`,
        [playerId, blockedPlayerId],
      );
      return 'added';
    });
  }

  /** Unblocks; removing a player not on the list changes nothing. */
  async remove(playerId: string, blockedPlayerId: string): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM player_blocks WHERE player_id = $1 AND blocked_player_id = $2`,
      [playerId, blockedPlayerId],
    );
  }

  /**
   * For each of `playerIds` that has any, the players it must not share a match with: those it
   * blocked and those who blocked it (one statement, both directions by index).
   */
  async avoidedBy(
    playerIds: readonly string[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Map<string, string[]>> {
    const avoided = new Map<string, string[]>();
    if (playerIds.length === 0) return avoided;
    const rows = await manager.query<AvoidRow[]>(
      `SELECT player_id, blocked_player_id AS avoided_id FROM player_blocks
        WHERE player_id = ANY($1::uuid[])
       UNION
       SELECT blocked_player_id, player_id FROM player_blocks
        WHERE blocked_player_id = ANY($1::uuid[])`,
      [playerIds],
    );
    for (const { player_id: playerId, avoided_id: avoidedId } of rows) {
      const list = avoided.get(playerId);
      if (list) list.push(avoidedId);
      else avoided.set(playerId, [avoidedId]);
    }
    // Sorted so a pass reads the same lists whatever order PostgreSQL answered in.
    for (const list of avoided.values()) list.sort();
    return avoided;
  }
}
