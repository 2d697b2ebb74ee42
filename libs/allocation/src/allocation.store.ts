import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { MatchState } from '@matchplane/domain';
import {
  toDurable,
  type DurableParticipant,
  type DurableParticipantRow,
} from '@matchplane/matches';
import { returnedRows, sqlStateOf } from '@matchplane/persistence';

export type AllocationState = 'REQUESTED' | 'ALLOCATED' | 'RELEASED' | 'FAILED';

/** A state in which the allocation holds its server (allocations_live_server_id_key). */
export const LIVE_ALLOCATION_STATES: readonly AllocationState[] = ['REQUESTED', 'ALLOCATED'];

/** What a provider answers for a match: the server and where players reach it. */
export interface ProvidedServer {
  readonly serverId: string;
  /** host:port players connect to (signed into every join token). */
  readonly endpoint: string;
  /** Provider-specific facts needed to resume or release (a GameServer name, a pid, a port). */
  readonly providerRef: Readonly<Record<string, unknown>>;
  /**
   * The region the server runs in: the match's own, or another after a fallback. Absent only on
   * allocations recorded before regions were (migration 1764630000000).
   */
  readonly region?: string;
}

export interface AllocationRecord extends ProvidedServer {
  readonly matchId: string;
  readonly provider: string;
  readonly state: AllocationState;
  readonly credentialHash?: Buffer;
  readonly handedOffAt?: Date;
  readonly registeredAt?: Date;
  readonly releasedAt?: Date;
}

/** Another live allocation holds that server (the partial unique index decided). */
export class ServerBusyError extends Error {
  constructor(readonly serverId: string) {
    super(`server ${serverId} already serves another live match`);
    this.name = 'ServerBusyError';
  }
}

export interface AllocationRow {
  match_id: string;
  provider: string;
  server_id: string;
  endpoint: string | null;
  provider_ref: Record<string, unknown>;
  state: AllocationState;
  region: string | null;
  credential_hash: Buffer | null;
  handed_off_at: Date | null;
  registered_at: Date | null;
  released_at: Date | null;
}

export const ALLOCATION_COLUMNS = `match_id, provider, server_id, endpoint, provider_ref, state, region, credential_hash,
  handed_off_at, registered_at, released_at`;

const QUALIFIED_COLUMNS = ALLOCATION_COLUMNS.split(',')
  .map((column) => `a.${column.trim()}`)
  .join(', ');

const LIVE = `('REQUESTED', 'ALLOCATED')`;

/**
 * Match $1's durable participants (libs/matches' `durable_participants` view), as
 * {@link DurableParticipantRow}s: a subquery of this module's statements, so what the allocator
 * signs against, publishes against and re-validates against is read in their own snapshot.
 */
export const DURABLE_PARTICIPANTS_OF_MATCH = `SELECT d.player_id, d.ticket_id, d.team
  FROM durable_participants d
 WHERE d.match_id = $1`;

/**
 * Live allocations whose match has ended, oldest ending first: a bounded read without locks.
 * Live allocations are few (one per live match at most, plus these) and the partial unique index
 * allocations_live_server_id_key holds exactly them; each one's match is then looked up by key
 * (a correlated subquery, so the planner cannot turn it into a scan of the weeks of finished
 * matches kept for retention). A match cannot be gone while its allocation is there:
 * allocations.match_id cascades, and retention keeps a match whose allocation is live.
 * `$1` = the batch size, `$2` = ids to leave alone.
 */
export const FINISHED_ALLOCATIONS_SQL = `SELECT live.match_id
  FROM (SELECT a.match_id,
               (SELECT e.finished_at FROM ended_matches e WHERE e.match_id = a.match_id) AS finished_at
          FROM allocations a
         WHERE a.state IN ('REQUESTED', 'ALLOCATED')
           AND a.match_id <> ALL ($2::uuid[])) live
 WHERE live.finished_at IS NOT NULL
 ORDER BY live.finished_at, live.match_id
 LIMIT $1`;

/**
 * One of them, locked and re-checked: SKIP LOCKED, so of two replicas walking the same list each
 * allocation is released by the one that locked it; the other skips it, or finds it released.
 */
export const CLAIM_FINISHED_ALLOCATION_SQL = `SELECT a.match_id, a.provider, a.server_id, a.endpoint,
       a.provider_ref, a.state, e.state AS match_state
  FROM allocations a
  JOIN ended_matches e ON e.match_id = a.match_id
 WHERE a.match_id = $1
   AND a.state IN ('REQUESTED', 'ALLOCATED')
   FOR UPDATE OF a SKIP LOCKED`;

/** A live allocation (REQUESTED or ALLOCATED) of a match that has ended. */
export interface EndedMatchAllocation {
  readonly matchId: string;
  readonly provider: string;
  readonly serverId: string;
  /** Null while REQUESTED: the provider had not answered yet. */
  readonly endpoint: string | null;
  /** The provider's own handle on the server (e.g. an Agones GameServer name). */
  readonly providerRef: Readonly<Record<string, unknown>>;
  readonly state: 'REQUESTED' | 'ALLOCATED';
  readonly matchState: MatchState;
}

/** Where an allocation run stands, read in one statement (one snapshot). */
export interface AllocationProgress {
  readonly allocation?: AllocationRecord;
  /** The match's roster is published (an earlier attempt's stands). */
  readonly published: boolean;
  /** {@link DURABLE_PARTICIPANTS_OF_MATCH}, in canonical roster order (ascending player id). */
  readonly durable: readonly DurableParticipant[];
}

export function toAllocationRecord(row: AllocationRow): AllocationRecord {
  return {
    matchId: row.match_id,
    provider: row.provider,
    serverId: row.server_id,
    endpoint: row.endpoint ?? '',
    providerRef: row.provider_ref,
    state: row.state,
    ...(row.region !== null ? { region: row.region } : {}),
    ...(row.credential_hash ? { credentialHash: row.credential_hash } : {}),
    ...(row.handed_off_at ? { handedOffAt: row.handed_off_at } : {}),
    ...(row.registered_at ? { registeredAt: row.registered_at } : {}),
    ...(row.released_at ? { releasedAt: row.released_at } : {}),
  };
}

/**
 * Owns `allocations`: which server a match got, its endpoint, the hash of the server's workload
 * credential and the server's lease. Every write is keyed by match id, so each allocator step can
 * run again after a crash without a second allocation.
 */
@Injectable()
export class AllocationStore {
  async load(
    manager: EntityManager,
    matchId: string,
    options: { forUpdate?: boolean } = {},
  ): Promise<AllocationRecord | undefined> {
    const rows = await manager.query<AllocationRow[]>(
      `SELECT ${ALLOCATION_COLUMNS} FROM allocations WHERE match_id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`,
      [matchId],
    );
    return rows[0] ? toAllocationRecord(rows[0]) : undefined;
  }

  /**
   * An allocation run's starting point: the match's allocation, whether its roster is published
   * and its durable participants, in one statement.
   */
  async progress(manager: EntityManager, matchId: string): Promise<AllocationProgress> {
    const rows = await manager.query<
      (Omit<AllocationRow, 'match_id'> & {
        match_id: string | null;
        published: boolean;
        durable: DurableParticipantRow[];
      })[]
    >(
      `SELECT ${QUALIFIED_COLUMNS},
              EXISTS (SELECT 1 FROM roster_manifests r WHERE r.match_id = $1) AS published,
              (SELECT COALESCE(json_agg(d ORDER BY d.player_id), '[]'::json)
                 FROM (${DURABLE_PARTICIPANTS_OF_MATCH}) d) AS durable
         FROM (SELECT $1::uuid AS match_id) k
         LEFT JOIN allocations a ON a.match_id = k.match_id`,
      [matchId],
    );
    const row = rows[0];
    if (!row) throw new Error(`no progress row for match ${matchId}`);
    const { match_id, published, durable, ...allocation } = row;
    return {
      ...(match_id ? { allocation: toAllocationRecord({ ...allocation, match_id }) } : {}),
      published,
      durable: durable.map(toDurable),
    };
  }

  /**
   * Persists the provider's answer, with the hash of this run's fresh credential, before anything
   * else is done with it. An allocation already recorded for the match (a concurrent attempt's)
   * wins: it is answered with this run's credential in place of its own, so the run goes on
   * with the server it names. A server another live match holds throws {@link ServerBusyError}.
   */
  async record(
    manager: EntityManager,
    matchId: string,
    provider: string,
    server: ProvidedServer,
    credentialHash: Buffer,
  ): Promise<AllocationRecord> {
    let rows: AllocationRow[];
    try {
      // The match id is the only arbiter: a conflict there updates the credential and never
      // inserts, so only a fresh row can collide with another live match's server (23505).
      rows = await manager.query<AllocationRow[]>(
        `INSERT INTO allocations (match_id, provider, server_id, endpoint, provider_ref, state, credential_hash, region)
         VALUES ($1, $2, $3, $4, $5::jsonb, 'ALLOCATED', $6, $7)
         ON CONFLICT (match_id) DO UPDATE
           SET credential_hash = EXCLUDED.credential_hash, handed_off_at = NULL, updated_at = now()
           WHERE allocations.state IN ${LIVE}
         RETURNING ${ALLOCATION_COLUMNS}`,
        [
          matchId,
          provider,
          server.serverId,
          server.endpoint,
          JSON.stringify(server.providerRef),
          credentialHash,
          server.region ?? null,
        ],
      );
    } catch (error) {
      if (sqlStateOf(error) === '23505') throw new ServerBusyError(server.serverId);
      throw error;
    }
    if (!rows[0]) {
      throw new Error(`match ${matchId} already has an allocation that is no longer live`);
    }
    return toAllocationRecord(rows[0]);
  }

  /** Up to `limit` ended matches with a live allocation, oldest ending first ({@link FINISHED_ALLOCATIONS_SQL}). */
  async endedMatchesWithLiveAllocation(
    manager: EntityManager,
    limit: number,
    skip: readonly string[],
  ): Promise<string[]> {
    const rows = await manager.query<{ match_id: string }[]>(FINISHED_ALLOCATIONS_SQL, [
      limit,
      skip,
    ]);
    return rows.map((row) => row.match_id);
  }

  /** Locks (SKIP LOCKED) that match's live allocation if its match has ended ({@link CLAIM_FINISHED_ALLOCATION_SQL}). */
  async lockEndedMatchAllocation(
    manager: EntityManager,
    matchId: string,
  ): Promise<EndedMatchAllocation | undefined> {
    const [row] = await manager.query<
      (AllocationRow & { state: 'REQUESTED' | 'ALLOCATED'; match_state: MatchState })[]
    >(CLAIM_FINISHED_ALLOCATION_SQL, [matchId]);
    if (!row) return undefined;
    return {
      matchId: row.match_id,
      provider: row.provider,
      serverId: row.server_id,
      endpoint: row.endpoint,
      providerRef: row.provider_ref,
      state: row.state,
      matchState: row.match_state,
    };
  }

  /** Marks a live allocation RELEASED at the database's clock (a releaser that gave the server back itself). */
  async markReleased(manager: EntityManager, matchId: string): Promise<void> {
    await manager.query(
      `UPDATE allocations SET state = 'RELEASED', released_at = now(), updated_at = now()
        WHERE match_id = $1 AND state IN ('REQUESTED', 'ALLOCATED')`,
      [matchId],
    );
  }

  /** Which of these servers a live allocation holds. */
  async liveServerIds(manager: EntityManager, serverIds: readonly string[]): Promise<Set<string>> {
    const rows = await manager.query<{ server_id: string }[]>(
      `SELECT server_id FROM allocations WHERE server_id = ANY($1::text[]) AND state IN ${LIVE}`,
      [serverIds],
    );
    return new Set(rows.map((row) => row.server_id));
  }

  /**
   * Stores a fresh credential's hash, replacing any earlier one (which stops working) and
   * clearing the hand-off mark: the new secret has not reached the server yet.
   */
  async replaceCredential(manager: EntityManager, matchId: string, hash: Buffer): Promise<void> {
    const result: unknown = await manager.query(
      `UPDATE allocations SET credential_hash = $2, handed_off_at = NULL, updated_at = now()
        WHERE match_id = $1 AND state IN ${LIVE} RETURNING match_id`,
      [matchId, hash],
    );
    if (returnedRows(result).length !== 1) {
      throw new Error(`match ${matchId} has no live allocation to issue a credential for`);
    }
  }

  /**
   * Merges the provider facts learnt at hand-off (e.g. a launched process id, kept whatever else
   * changed, so that process can be stopped) and marks the credential with this hash as handed
   * over; false if it was replaced meanwhile (or the allocation ended). One statement.
   */
  async markHandedOff(
    manager: EntityManager,
    matchId: string,
    hash: Buffer,
    learnt: Readonly<Record<string, unknown>> = {},
  ): Promise<boolean> {
    const result: unknown = await manager.query(
      `UPDATE allocations
          SET provider_ref = provider_ref || $3::jsonb, updated_at = now(),
              handed_off_at = CASE WHEN credential_hash = $2 AND state IN ${LIVE} THEN now()
                                   ELSE handed_off_at END
        WHERE match_id = $1
        RETURNING credential_hash = $2 AND state IN ${LIVE} AS marked`,
      [matchId, hash, JSON.stringify(learnt)],
    );
    return returnedRows<{ marked: boolean }>(result)[0]?.marked === true;
  }

  /** The allocation a workload credential was issued for (any state: it stays bound to it). */
  async byCredentialHash(
    manager: EntityManager,
    hash: Buffer,
  ): Promise<AllocationRecord | undefined> {
    const rows = await manager.query<AllocationRow[]>(
      `SELECT ${ALLOCATION_COLUMNS} FROM allocations WHERE credential_hash = $1`,
      [hash],
    );
    return rows[0] ? toAllocationRecord(rows[0]) : undefined;
  }

  /** Records the server's registration; a repeated one keeps the first. */
  async markRegistered(
    manager: EntityManager,
    matchId: string,
    registration: { protocolVersion: number; imageDigest: string; now: Date },
  ): Promise<void> {
    await manager.query(
      `UPDATE allocations
          SET registered_at = COALESCE(registered_at, $2), server_protocol_version = COALESCE(server_protocol_version, $3),
              server_image_digest = COALESCE(server_image_digest, $4), updated_at = $2
        WHERE match_id = $1`,
      [matchId, registration.now, registration.protocolVersion, registration.imageDigest],
    );
  }

  /**
   * Ends the lease (a static server is free again once no live allocation names it); false when
   * it had already ended.
   */
  async release(
    manager: EntityManager,
    matchId: string,
    options: {
      state: 'RELEASED' | 'FAILED';
      now: Date;
      result?: Readonly<Record<string, unknown>>;
    },
  ): Promise<boolean> {
    const result: unknown = await manager.query(
      `UPDATE allocations
          SET state = $2, released_at = CASE WHEN $2 = 'RELEASED' THEN $3::timestamptz ELSE released_at END,
              reported_result = COALESCE($4::jsonb, reported_result), updated_at = $3
        WHERE match_id = $1 AND state IN ${LIVE} RETURNING match_id`,
      [matchId, options.state, options.now, options.result ? JSON.stringify(options.result) : null],
    );
    return returnedRows(result).length === 1;
  }
}
