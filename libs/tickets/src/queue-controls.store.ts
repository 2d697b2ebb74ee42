import { Injectable, Module } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { QueueControl, QueueControlScope, QueueControlState } from '@matchplane/domain';

interface ControlRow {
  scope: QueueControlScope;
  name: string;
  state: QueueControlState;
  reason: string;
  retry_after_seconds: number | null;
  set_by: string;
  set_at: Date;
}

const COLUMNS = 'scope, name, state, reason, retry_after_seconds, set_by, set_at';

function toControl(row: ControlRow): QueueControl {
  return {
    scope: row.scope,
    name: row.name,
    state: row.state,
    reason: row.reason,
    ...(row.retry_after_seconds === null ? {} : { retryAfterSeconds: row.retry_after_seconds }),
    setBy: row.set_by,
    setAt: row.set_at,
  };
}

/**
 * Owns `queue_controls`: the operator holds on modes and regions (libs/domain queue-control.ts
 * says what each means). The enqueue routes and the matcher read them; the operator routes and
 * CLI set and clear them, each in the caller's transaction with its audit row.
 */
@Injectable()
export class QueueControls {
  async list(manager: EntityManager): Promise<QueueControl[]> {
    const rows = await manager.query<ControlRow[]>(
      `SELECT ${COLUMNS} FROM queue_controls ORDER BY scope, name`,
    );
    return rows.map(toControl);
  }

  /** Sets (or replaces) the hold on one mode or region; answers it as stored. */
  async set(manager: EntityManager, control: Omit<QueueControl, 'setAt'>): Promise<QueueControl> {
    const rows = await manager.query<ControlRow[]>(
      `INSERT INTO queue_controls (scope, name, state, reason, retry_after_seconds, set_by)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (scope, name) DO UPDATE
         SET state = EXCLUDED.state, reason = EXCLUDED.reason,
             retry_after_seconds = EXCLUDED.retry_after_seconds, set_by = EXCLUDED.set_by,
             set_at = now()
       RETURNING ${COLUMNS}`,
      [
        control.scope,
        control.name,
        control.state,
        control.reason,
        control.retryAfterSeconds ?? null,
        control.setBy,
      ],
    );
    return toControl(rows[0] as ControlRow);
  }

  /** Lifts the hold on one mode or region; answers the hold lifted, if there was one. */
  async clear(
    manager: EntityManager,
    scope: QueueControlScope,
    name: string,
  ): Promise<QueueControl | undefined> {
    const rows = await manager.query<ControlRow[]>(
      `DELETE FROM queue_controls WHERE scope = $1 AND name = $2 RETURNING ${COLUMNS}`,
      [scope, name],
    );
    return rows[0] ? toControl(rows[0]) : undefined;
  }
}

/** QueueControls alone, for the operator tools (no projection, no Redis, no ticket settings). */
@Module({ providers: [QueueControls], exports: [QueueControls] })
export class QueueControlsModule {}
