import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { runInTransaction } from '@matchplane/persistence';

/**
 * Which list: `block` (never in one match) or `avoid` (in one match only when nothing else fits,
 * docs/decisions/2026-12-07-avoid-lists.md).
 */
export type PlayerListKind = 'block' | 'avoid';

/** One entry of a player's block or avoid list. */
export interface ListedPlayer {
  readonly playerId: string;
  /** When it went on this list. */
  readonly listedAt: Date;
}

/** What adding to a list did: added (or moved from the other list), already there, or refused. */
export type ListOutcome = 'added' | 'already_listed' | 'unknown_player' | 'list_full';

/** For the players of a pass: whom each must not meet, and whom each would rather not. */
export interface ListsAround {
  readonly blocked: Map<string, string[]>;
  readonly avoided: Map<string, string[]>;
}

interface ListRow {
  blocked_player_id: string;
  created_at: Date;
}

interface AroundRow {
  player_id: string;
  other_id: string;
  kind: PlayerListKind;
}

/**
 * Owns `player_blocks`: whom each player blocked or avoids (issue 34), one row per ordered pair
 * with its `kind`. The API changes a player's own lists; the matcher reads, for the players of a
 * pass, both lists in both directions, so that no match holds a player and someone it blocked or
 * that blocked it, and a match holds an avoided pair only when nothing else fits.
 */
@Injectable()
export class PlayerBlocks {
  constructor(private readonly dataSource: DataSource) {}

  /** `playerId`'s list of `kind`, oldest entry first. */
  async list(playerId: string, kind: PlayerListKind = 'block'): Promise<ListedPlayer[]> {
    const rows = await this.dataSource.query<ListRow[]>(
      `SELECT blocked_player_id, created_at FROM player_blocks
        WHERE player_id = $1 AND kind = $2 ORDER BY created_at, blocked_player_id`,
      [playerId, kind],
    );
    return rows.map((row) => ({ playerId: row.blocked_player_id, listedAt: row.created_at }));
  }

  /**
   * Puts `otherPlayerId` on `playerId`'s list of `kind`, unless no such player exists or that
   * list holds `maxEntries` already. A repeat changes nothing; a player on the other list moves
   * to this one (a pair is blocked or avoided, the latest word counting).
   */
  add(
    playerId: string,
    otherPlayerId: string,
    maxEntries: number,
    kind: PlayerListKind = 'block',
  ): Promise<ListOutcome> {
    return runInTransaction(this.dataSource, async (manager) => {
      // One player's changes one at a time, so two adds at once cannot both take the last place.
      await manager.query(`SELECT 1 FROM players WHERE id = $1 FOR UPDATE`, [playerId]);
      const [state] = await manager.query<{ known: boolean; present: boolean; entries: number }[]>(
        `SELECT EXISTS (SELECT 1 FROM players WHERE id = $2) AS known,
                EXISTS (SELECT 1 FROM player_blocks
                         WHERE player_id = $1 AND blocked_player_id = $2 AND kind = $3) AS present,
                (SELECT count(*)::int FROM player_blocks
                  WHERE player_id = $1 AND kind = $3) AS entries`,
        [playerId, otherPlayerId, kind],
      );
      if (state?.present) return 'already_listed';
      if (!state?.known) return 'unknown_player';
      if (state.entries >= maxEntries) return 'list_full';
      await manager.query(
        `INSERT INTO player_blocks (player_id, blocked_player_id, kind) VALUES ($1, $2, $3)
         ON CONFLICT (player_id, blocked_player_id)
         DO UPDATE SET kind = EXCLUDED.kind, created_at = now()`,
        [playerId, otherPlayerId, kind],
      );
      return 'added';
    });
  }

  /** Takes `otherPlayerId` off the list of `kind`; one not on it changes nothing. */
  async remove(
    playerId: string,
    otherPlayerId: string,
    kind: PlayerListKind = 'block',
  ): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM player_blocks WHERE player_id = $1 AND blocked_player_id = $2 AND kind = $3`,
      [playerId, otherPlayerId, kind],
    );
  }

  /**
   * Each of `playerIds`' own lists (whom it blocked, whom it avoids; one direction), for those
   * that have any: what an operator's capture of queue arrivals carries (the simulator reads both
   * directions from them, as {@link listsAround} does).
   */
  async listsOf(playerIds: readonly string[]): Promise<ListsAround> {
    if (playerIds.length === 0) return listsFrom([]);
    const rows = await this.dataSource.query<AroundRow[]>(
      `SELECT player_id, blocked_player_id AS other_id, kind FROM player_blocks
        WHERE player_id = ANY($1::uuid[])
        ORDER BY player_id, blocked_player_id`,
      [playerIds],
    );
    return listsFrom(rows);
  }

  /**
   * For each of `playerIds` that has any, the players it must not share a match with (blocked
   * and blocked by) and those it would rather not (avoided and avoided by): one statement, both
   * directions by index. A pair blocked one way and avoided the other counts as blocked.
   */
  async listsAround(
    playerIds: readonly string[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<ListsAround> {
    if (playerIds.length === 0) return listsFrom([]);
    const rows = await manager.query<AroundRow[]>(
      `SELECT player_id, blocked_player_id AS other_id, kind FROM player_blocks
        WHERE player_id = ANY($1::uuid[])
       UNION
       SELECT blocked_player_id, player_id, kind FROM player_blocks
        WHERE blocked_player_id = ANY($1::uuid[])`,
      [playerIds],
    );
    const blockedPairs = new Set(
      rows.filter((row) => row.kind === 'block').map((row) => `${row.player_id} ${row.other_id}`),
    );
    return listsFrom(
      rows.filter(
        (row) => row.kind === 'block' || !blockedPairs.has(`${row.player_id} ${row.other_id}`),
      ),
    );
  }
}

/**
 * Groups `rows` into each player's blocked and avoided lists, each list sorted so a reader gets
 * the same lists whatever order PostgreSQL answered in.
 */
function listsFrom(rows: readonly AroundRow[]): ListsAround {
  const lists: ListsAround = { blocked: new Map(), avoided: new Map() };
  for (const { player_id: playerId, other_id: otherId, kind } of rows) {
    const byPlayer = kind === 'block' ? lists.blocked : lists.avoided;
    const list = byPlayer.get(playerId);
    if (list) list.push(otherId);
    else byPlayer.set(playerId, [otherId]);
  }
  for (const list of [...lists.blocked.values(), ...lists.avoided.values()]) list.sort();
  return lists;
}
