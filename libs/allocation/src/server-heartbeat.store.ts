import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  ALLOCATION_COLUMNS,
  toAllocationRecord,
  type AllocationRecord,
  type AllocationRow,
} from './allocation.store';

/**
 * A boolean over match row `match`: its allocated server registered and has been silent since
 * `cutoff` (an SQL expression: a parameter of the caller's statement). A server that never
 * heartbeated is silent from its registration; an allocation not yet registered (the registration
 * timeout covers it) or no longer live (nothing left to watch) is not. Silence is counted from
 * PostgreSQL's own start at the earliest: while the database restarted no server could be heard,
 * and that is not the servers' fault.
 */
export function silentServerSql(match: string, cutoff: string): string {
  return `EXISTS (SELECT 1 FROM allocations a
                   WHERE a.match_id = ${match}.id AND a.state = 'ALLOCATED' AND a.registered_at IS NOT NULL
                     AND GREATEST(COALESCE(a.last_heartbeat_at, a.registered_at), pg_postmaster_start_time()) < ${cutoff})`;
}

/**
 * Server heartbeats (libs/allocation owns `allocations`): one statement that both authenticates
 * the workload credential and stamps the heartbeat, so a live server's beat costs one index probe
 * and one HOT update.
 */
@Injectable()
export class ServerHeartbeatStore {
  /**
   * Stamps `allocations.last_heartbeat_at` with the database's clock (the sweep compares it with
   * the same clock) for the live allocation this credential (its SHA-256) was issued for, if it
   * names `serverId`. Undefined when it does not (unknown, ended, another server's id): the
   * caller finds out which the usual way.
   */
  async record(
    manager: EntityManager,
    credentialHash: Buffer,
    serverId: string,
  ): Promise<AllocationRecord | undefined> {
    const result: unknown = await manager.query(
      `UPDATE allocations SET last_heartbeat_at = clock_timestamp()
        WHERE credential_hash = $1 AND server_id = $2 AND state = 'ALLOCATED'
        RETURNING ${ALLOCATION_COLUMNS}`,
      [credentialHash, serverId],
    );
    // manager.query answers [rows, count] for UPDATE ... RETURNING.
    const rows = (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as
      AllocationRow[] | undefined;
    const row = rows?.[0];
    return row ? toAllocationRecord(row) : undefined;
  }
}
