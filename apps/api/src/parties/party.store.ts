import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

export interface StoredParty {
  readonly id: string;
  readonly leaderId: string;
  readonly inviteExpiresAt: Date;
  /** Oldest first; the leader joined first. */
  readonly members: readonly { readonly playerId: string; readonly joinedAt: Date }[];
}

interface PartyRow {
  id: string;
  leader_id: string;
  invite_expires_at: Date;
  members: { player_id: string; joined_at: string }[];
}

const PARTY_SELECT = `SELECT p.id, p.leader_id, p.invite_expires_at,
       (SELECT json_agg(json_build_object('player_id', m.player_id, 'joined_at', m.joined_at)
                        ORDER BY m.joined_at, m.player_id)
          FROM party_members m WHERE m.party_id = p.id) AS members
  FROM parties p`;

function toParty(row: PartyRow): StoredParty {
  return {
    id: row.id,
    leaderId: row.leader_id,
    inviteExpiresAt: row.invite_expires_at,
    members: (row.members ?? []).map((member) => ({
      playerId: member.player_id,
      joinedAt: new Date(member.joined_at),
    })),
  };
}

/**
 * Owns `parties` and `party_members`: a leader, its members (a player in at most one party, by a
 * unique index) and the hash of the party's invite code. Every change runs in the caller's
 * transaction; changes to one party serialise on its row (`lock`).
 */
@Injectable()
export class PartyStore {
  /** A party led by `leaderId`, who is its first member. */
  async create(
    manager: EntityManager,
    input: { id: string; leaderId: string; inviteCodeHash: Buffer; inviteExpiresAt: Date },
  ): Promise<void> {
    await manager.query(
      `WITH party AS (
         INSERT INTO parties (id, leader_id, invite_code_hash, invite_expires_at)
         VALUES ($1, $2, $3, $4) RETURNING id, leader_id
       )
       INSERT INTO party_members (party_id, player_id) SELECT id, leader_id FROM party`,
      [input.id, input.leaderId, input.inviteCodeHash, input.inviteExpiresAt],
    );
  }

  /** The party `playerId` is in, locked (FOR UPDATE of the party row) when asked. */
  async partyOf(
    manager: EntityManager,
    playerId: string,
    options: { lock?: boolean } = {},
  ): Promise<StoredParty | undefined> {
    const membership = `(SELECT party_id FROM party_members WHERE player_id = $1)`;
    if (options.lock) return this.lockedParty(manager, `id = ${membership}`, playerId);
    const rows = await manager.query<PartyRow[]>(`${PARTY_SELECT} WHERE p.id = ${membership}`, [
      playerId,
    ]);
    return rows[0] ? toParty(rows[0]) : undefined;
  }

  /** The party whose invite code hashes to `inviteCodeHash`, locked, whether or not it expired. */
  async lockByInvite(
    manager: EntityManager,
    inviteCodeHash: Buffer,
  ): Promise<StoredParty | undefined> {
    return this.lockedParty(manager, 'invite_code_hash = $1', inviteCodeHash);
  }

  /**
   * Locks the party row first and reads its members in a second statement. In one statement the
   * members would come from the snapshot taken before the lock wait (READ COMMITTED re-checks
   * only the locked row), so joins queued on the lock each saw the party as it was before the
   * others and it grew past its size.
   */
  private async lockedParty(
    manager: EntityManager,
    predicate: string,
    parameter: unknown,
  ): Promise<StoredParty | undefined> {
    const locked = await manager.query<{ id: string }[]>(
      `SELECT id FROM parties WHERE ${predicate} FOR UPDATE`,
      [parameter],
    );
    if (!locked[0]) return undefined;
    const rows = await manager.query<PartyRow[]>(`${PARTY_SELECT} WHERE p.id = $1`, [locked[0].id]);
    return rows[0] ? toParty(rows[0]) : undefined;
  }

  async addMember(manager: EntityManager, partyId: string, playerId: string): Promise<void> {
    await manager.query(`INSERT INTO party_members (party_id, player_id) VALUES ($1, $2)`, [
      partyId,
      playerId,
    ]);
  }

  async removeMember(manager: EntityManager, partyId: string, playerId: string): Promise<void> {
    await manager.query(`DELETE FROM party_members WHERE party_id = $1 AND player_id = $2`, [
      partyId,
      playerId,
    ]);
  }

  /** Deletes the party and its memberships (ON DELETE CASCADE). */
  async disband(manager: EntityManager, partyId: string): Promise<void> {
    await manager.query(`DELETE FROM parties WHERE id = $1`, [partyId]);
  }
}
