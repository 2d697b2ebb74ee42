import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { returnedRows } from '@matchplane/persistence';
import {
  ALLOCATION_COLUMNS,
  toAllocationRecord,
  type AllocationRecord,
  type AllocationRow,
} from './allocation.store';

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
    const row = returnedRows<AllocationRow>(result)[0];
    return row ? toAllocationRecord(row) : undefined;
  }
}
