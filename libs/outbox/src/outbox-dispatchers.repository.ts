import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/**
 * `outbox_dispatchers`: one row per running dispatcher process, its heartbeat the liveness the
 * claim statements read (a claim whose owner stopped beating is taken over). Owned by the outbox
 * module with the outbox table itself.
 */
@Injectable()
export class OutboxDispatchersRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Registers the dispatcher or refreshes its heartbeat. An upsert, so a row removed while this
   * process was silent comes back: its claims not taken over meanwhile are still its own (each
   * is fenced by its token anyway). Committed without waiting for the WAL flush: a heartbeat lost
   * in a PostgreSQL crash is replaced by the next one.
   */
  async beat(id: string, label: string): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO outbox_dispatchers (id, label)
       SELECT $1, $2 WHERE set_config('synchronous_commit', 'off', true) IS NOT NULL
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`,
      [id, label],
    );
  }

  /** On a clean shutdown: its remaining claims read as abandoned at once. */
  async retire(id: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM outbox_dispatchers WHERE id = $1`, [id]);
  }

  /** Forgets dispatchers silent for longer than `ms` (their claims are dead either way). */
  async forgetSilentFor(ms: number): Promise<number> {
    const result: unknown = await this.dataSource.query(
      `DELETE FROM outbox_dispatchers WHERE heartbeat_at < now() - make_interval(secs => $1 / 1000.0)`,
      [ms],
    );
    return Array.isArray(result) && typeof result[1] === 'number' ? result[1] : 0;
  }
}
