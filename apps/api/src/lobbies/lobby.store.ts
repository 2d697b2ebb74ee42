import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

export type LobbyState = 'OPEN' | 'STARTED';

export interface StoredLobbyMember {
  readonly playerId: string;
  readonly joinedAt: Date;
  readonly team?: number;
  readonly ticketId?: string;
}

export interface StoredLobby {
  readonly id: string;
  readonly ownerId: string;
  readonly mode: string;
  readonly size: number;
  readonly region?: string;
  readonly ranked: boolean;
  readonly state: LobbyState;
  readonly matchId?: string;
  readonly expiresAt: Date;
  /** Oldest first; the owner joined first. */
  readonly members: readonly StoredLobbyMember[];
}

export interface NewLobby {
  readonly id: string;
  readonly ownerId: string;
  readonly inviteCodeHash: Buffer;
  readonly mode: string;
  readonly size: number;
  readonly region?: string;
  readonly ranked: boolean;
  readonly expiresAt: Date;
}

interface LobbyRow {
  id: string;
  owner_id: string;
  mode: string;
  size: number;
  region: string | null;
  ranked: boolean;
  state: LobbyState;
  match_id: string | null;
  expires_at: Date;
  members:
    | { player_id: string; joined_at: string; team: number | null; ticket_id: string | null }[]
    | null;
}

const LOBBY_SELECT = `SELECT l.id, l.owner_id, l.mode, l.size, l.region, l.ranked, l.state, l.match_id, l.expires_at,
       (SELECT json_agg(json_build_object('player_id', m.player_id, 'joined_at', m.joined_at,
                                          'team', m.team, 'ticket_id', m.ticket_id)
                        ORDER BY m.joined_at, m.player_id)
          FROM lobby_members m WHERE m.lobby_id = l.id) AS members
  FROM lobbies l`;

function toLobby(row: LobbyRow): StoredLobby {
  return {
    id: row.id,
    ownerId: row.owner_id,
    mode: row.mode,
    size: Number(row.size),
    ...(row.region === null ? {} : { region: row.region }),
    ranked: row.ranked,
    state: row.state,
    ...(row.match_id === null ? {} : { matchId: row.match_id }),
    expiresAt: row.expires_at,
    members: (row.members ?? []).map((member) => ({
      playerId: member.player_id,
      joinedAt: new Date(member.joined_at),
      ...(member.team === null ? {} : { team: member.team }),
      ...(member.ticket_id === null ? {} : { ticketId: member.ticket_id }),
    })),
  };
}

/**
 * Owns `lobbies` and `lobby_members`: an owner, its members (a player in at most one lobby, by a
 * unique index), their teams and, once started, their tickets and the match. Every change runs in
 * the caller's transaction; changes to one lobby serialise on its row (`lock`).
 */
@Injectable()
export class LobbyStore {
  /** A lobby owned by `ownerId`, who is its first member. */
  async create(manager: EntityManager, lobby: NewLobby): Promise<void> {
    await manager.query(
      `WITH lobby AS (
         INSERT INTO lobbies (id, owner_id, invite_code_hash, mode, size, region, ranked, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id, owner_id
       )
       INSERT INTO lobby_members (lobby_id, player_id) SELECT id, owner_id FROM lobby`,
      [
        lobby.id,
        lobby.ownerId,
        lobby.inviteCodeHash,
        lobby.mode,
        lobby.size,
        lobby.region ?? null,
        lobby.ranked,
        lobby.expiresAt,
      ],
    );
  }

  /** The lobby `playerId` is in (open, started or expired), locked when asked. */
  async lobbyOf(
    manager: EntityManager,
    playerId: string,
    options: { lock?: boolean } = {},
  ): Promise<StoredLobby | undefined> {
    const membership = `(SELECT lobby_id FROM lobby_members WHERE player_id = $1)`;
    if (options.lock) return this.lockedLobby(manager, `id = ${membership}`, playerId);
    const rows = await manager.query<LobbyRow[]>(`${LOBBY_SELECT} WHERE l.id = ${membership}`, [
      playerId,
    ]);
    return rows[0] ? toLobby(rows[0]) : undefined;
  }

  /** The lobby whose invite code hashes to `inviteCodeHash`, locked, whatever its state. */
  lockByInvite(manager: EntityManager, inviteCodeHash: Buffer): Promise<StoredLobby | undefined> {
    return this.lockedLobby(manager, 'invite_code_hash = $1', inviteCodeHash);
  }

  /**
   * Locks the lobby row, then reads its members in a second statement (in one, they would come
   * from the snapshot taken before the lock wait: see PartyStore.lockedParty).
   */
  private async lockedLobby(
    manager: EntityManager,
    predicate: string,
    parameter: unknown,
  ): Promise<StoredLobby | undefined> {
    const locked = await manager.query<{ id: string }[]>(
      `SELECT id FROM lobbies WHERE ${predicate} FOR UPDATE`,
      [parameter],
    );
    if (!locked[0]) return undefined;
    const rows = await manager.query<LobbyRow[]>(`${LOBBY_SELECT} WHERE l.id = $1`, [locked[0].id]);
    return rows[0] ? toLobby(rows[0]) : undefined;
  }

  async addMember(
    manager: EntityManager,
    lobbyId: string,
    playerId: string,
    expiresAt: Date,
  ): Promise<void> {
    await this.touching(
      manager,
      `INSERT INTO lobby_members (lobby_id, player_id) VALUES ($1, $3)`,
      [lobbyId, expiresAt, playerId],
    );
  }

  async removeMember(
    manager: EntityManager,
    lobbyId: string,
    playerId: string,
    expiresAt: Date,
  ): Promise<void> {
    await this.touching(
      manager,
      `DELETE FROM lobby_members WHERE lobby_id = $1 AND player_id = $3`,
      [lobbyId, expiresAt, playerId],
    );
  }

  /** Each member's team, by player id (every member is named: the caller checked). */
  async setTeams(
    manager: EntityManager,
    lobbyId: string,
    teams: ReadonlyMap<string, number>,
    expiresAt: Date,
  ): Promise<void> {
    await this.touching(
      manager,
      `UPDATE lobby_members AS m SET team = t.team
         FROM unnest($3::uuid[], $4::smallint[]) AS t(player_id, team)
        WHERE m.lobby_id = $1 AND m.player_id = t.player_id`,
      [lobbyId, expiresAt, [...teams.keys()], [...teams.values()]],
    );
  }

  /** The lobby STARTED with its match; each member's team and ticket recorded. */
  async markStarted(
    manager: EntityManager,
    lobbyId: string,
    matchId: string,
    members: readonly { playerId: string; team: number; ticketId: string }[],
    expiresAt: Date,
  ): Promise<void> {
    await manager.query(
      `WITH started AS (
         UPDATE lobbies SET state = 'STARTED', match_id = $2, expires_at = $6 WHERE id = $1
       )
       UPDATE lobby_members AS m SET team = t.team, ticket_id = t.ticket_id
         FROM unnest($3::uuid[], $4::smallint[], $5::uuid[]) AS t(player_id, team, ticket_id)
        WHERE m.lobby_id = $1 AND m.player_id = t.player_id`,
      [
        lobbyId,
        matchId,
        members.map((m) => m.playerId),
        members.map((m) => m.team),
        members.map((m) => m.ticketId),
        expiresAt,
      ],
    );
  }

  /**
   * `statement` on the members of lobby $1, in one statement with the lobby's new expiry ($2):
   * every change keeps the lobby alive.
   */
  private async touching(
    manager: EntityManager,
    statement: string,
    parameters: [lobbyId: string, expiresAt: Date, ...rest: unknown[]],
  ): Promise<void> {
    await manager.query(
      `WITH touched AS (UPDATE lobbies SET expires_at = $2 WHERE id = $1) ${statement}`,
      parameters,
    );
  }

  /** Deletes the lobby and its memberships (ON DELETE CASCADE). */
  async remove(manager: EntityManager, lobbyId: string): Promise<void> {
    await manager.query(`DELETE FROM lobbies WHERE id = $1`, [lobbyId]);
  }

  /**
   * Deletes up to `limit` lobbies past their expiry (rows another transaction holds are left for
   * the next call): the table keeps only lobbies in use without a stage of its own.
   */
  async purgeExpired(manager: EntityManager, now: Date, limit: number): Promise<number> {
    const rows = await manager.query<{ purged: number }[]>(
      `WITH purged AS (
         DELETE FROM lobbies WHERE id IN (
           SELECT id FROM lobbies WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2
              FOR UPDATE SKIP LOCKED)
         RETURNING 1)
       SELECT count(*)::int AS purged FROM purged`,
      [now, limit],
    );
    return rows[0]?.purged ?? 0;
  }
}
