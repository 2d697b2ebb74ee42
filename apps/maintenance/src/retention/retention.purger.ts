import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { sqlStateOf } from '@matchplane/persistence';
import { passOfTurns, type TurnsOutcome, type TurnsPassReport } from '../take-turns';
import { cutoffOf, type RetentionPolicy, type RetentionWindows } from './retention-policy';

export interface RetentionPurgerOptions {
  windows: RetentionWindows;
  /** Rows one batch (one transaction) deletes at most. */
  batchSize: number;
  /** No batch starts after this long into a pass (ms). */
  passBudgetMs: number;
  /** Pause after each batch (ms)... */
  batchPauseMs: number;
  /** ...or this one while the database is under pressure (ms). */
  pressurePauseMs: number;
  /** Sessions of the database waiting on a lock at which it counts as under pressure. */
  pressureLockWaiters: number;
}

export interface RetentionPassOptions {
  /** The instant windows are measured from; by default the database's clock. */
  now?: Date;
  /** Aborting stops the pass before its next batch (shutdown). */
  signal?: AbortSignal;
}

/** complete: nothing deletable was left; budget_exhausted: the budget ran out with rows left. */
export type RetentionPassOutcome = TurnsOutcome;

export interface RetentionPassError {
  policy: string;
  sqlState: string | undefined;
  message: string;
}

export interface RetentionPassReport extends TurnsPassReport {
  /** Batches followed by the longer pause. */
  pressuredBatches: number;
  /** Rows deleted by this purger (each row is counted by the one replica that deleted it). */
  purged: Record<string, number>;
  /** Per policy, seconds since the oldest row still deletable passed its window; not measured when interrupted. */
  lagSeconds?: Record<string, number>;
  /** How far dead letters hold the idempotency cutoff back (s; 0 when they do not). */
  idempotencyHoldSeconds: number;
  /** Batches that failed on their own (lock timeout, a constraint): their policy waits for the next pass. */
  errors: RetentionPassError[];
}

export interface DatabasePressure {
  /** Sessions of this database waiting on a heavyweight lock. */
  lockWaiters: number;
  /** The table has more than twice the dead tuples at which autovacuum would start on it. */
  vacuumBehind: boolean;
  underPressure: boolean;
}

/**
 * Lock waiters say live transactions are queueing (more deletes would add to it); dead tuples
 * far beyond autovacuum's own trigger say it has not caught up with what the purge deletes, and
 * index scans are wading through them. Per-table autovacuum settings are not considered.
 */
const PRESSURE_SQL = `SELECT
  (SELECT count(*)::int FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock') AS lock_waiters,
  COALESCE((
    SELECT s.n_dead_tup > 2 * (current_setting('autovacuum_vacuum_threshold')::float8
             + current_setting('autovacuum_vacuum_scale_factor')::float8 * greatest(c.reltuples, 0))
      FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
     WHERE s.relid = $1::regclass), false) AS vacuum_behind`;

/**
 * A batch never queues behind live traffic for long: the cascades of a match purge and the
 * foreign-key checks of a ticket purge take row locks SKIP LOCKED cannot skip. A batch that hits
 * either limit fails alone; its policy waits for the next pass.
 */
const BATCH_LOCK_TIMEOUT_MS = 1_000;
const BATCH_STATEMENT_TIMEOUT_MS = 30_000;

/** Failures of one batch that say nothing about the database as a whole. */
const BATCH_LOCAL_SQLSTATES = new Set([
  '55P03', // lock_not_available (lock_timeout)
  '57014', // query_canceled (statement_timeout)
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '23503', // foreign_key_violation: a row became referenced between the check and the delete
]);

/**
 * Schedules the owners' purges: each batch one short transaction in which the policy's owner
 * deletes at most `batchSize` rows `FOR UPDATE SKIP LOCKED`, policies taken in turn (one batch
 * each per round) so one table's backlog cannot starve the others, until nothing is deletable or
 * the pass budget is spent, pausing longer under database pressure. Any number of purgers may run
 * against one database. Usable without Nest:
 * `new RetentionPurger(dataSource, options, await discoverRetentionPolicies()).pass()`.
 */
export class RetentionPurger {
  private readonly logger = new Logger(RetentionPurger.name);

  constructor(
    private readonly dataSource: DataSource,
    readonly options: RetentionPurgerOptions,
    readonly policies: readonly RetentionPolicy[],
  ) {}

  async pass({ now, signal }: RetentionPassOptions = {}): Promise<RetentionPassReport> {
    const purged = this.zeroes();
    const errors: RetentionPassError[] = [];
    let pressuredBatches = 0;

    return passOfTurns(
      this.dataSource,
      { now, signal, budgetMs: this.options.passBudgetMs },
      this.policies,
      async (policy, { at, deadline, onlyOneLeft }) => {
        let deleted = 0;
        try {
          deleted = await this.purgeBatch(policy, at);
        } catch (error) {
          const sqlState = sqlStateOf(error);
          if (sqlState === undefined || !BATCH_LOCAL_SQLSTATES.has(sqlState)) throw error;
          const message = error instanceof Error ? error.message : String(error);
          errors.push({ policy: policy.name, sqlState, message });
          this.logger.warn(
            `purge of ${policy.name} stopped for this pass (${sqlState}): ${message}`,
          );
        }
        purged[policy.name] = (purged[policy.name] ?? 0) + deleted;
        const more = deleted >= this.options.batchSize;
        // An empty batch held no locks worth pausing for, nor does the pass's last one.
        if (deleted === 0 || (!more && onlyOneLeft)) return more;
        const pressure = await this.pressure(policy.table);
        if (pressure.underPressure) pressuredBatches += 1;
        const pause = pressure.underPressure
          ? this.options.pressurePauseMs
          : this.options.batchPauseMs;
        await sleep(Math.min(pause, deadline - performance.now()), signal);
        return more;
      },
      async (outcome, at) => {
        const measured = outcome === 'interrupted' ? undefined : await this.measure(at);
        return {
          pressuredBatches,
          purged,
          ...(measured && { lagSeconds: measured.lagSeconds }),
          idempotencyHoldSeconds: measured?.idempotencyHoldSeconds ?? 0,
          errors,
        };
      },
    );
  }

  /** One batch of one policy, run by its owner in a bounded transaction; returns the rows deleted. */
  async purgeBatch(policy: RetentionPolicy, now: Date): Promise<number> {
    const runner = this.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      await runner.query(
        `SELECT set_config('lock_timeout', $1, true), set_config('statement_timeout', $2, true)`,
        [`${BATCH_LOCK_TIMEOUT_MS}ms`, `${BATCH_STATEMENT_TIMEOUT_MS}ms`],
      );
      const deleted = await policy.owner.purge(runner, {
        ...this.batchOf(policy, now),
        limit: this.options.batchSize,
      });
      await runner.commitTransaction();
      return deleted;
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    } finally {
      await runner.release();
    }
  }

  async pressure(table: string): Promise<DatabasePressure> {
    const [row] = await this.dataSource.query<{ lock_waiters: number; vacuum_behind: boolean }[]>(
      PRESSURE_SQL,
      [table],
    );
    const lockWaiters = row?.lock_waiters ?? 0;
    const vacuumBehind = row?.vacuum_behind ?? false;
    return {
      lockWaiters,
      vacuumBehind,
      underPressure: vacuumBehind || lockWaiters >= this.options.pressureLockWaiters,
    };
  }

  /** Deletion lag per policy, each measured by its owner, and the dead letters' hold on idempotency keys. */
  async measure(
    now: Date,
  ): Promise<{ lagSeconds: Record<string, number>; idempotencyHoldSeconds: number }> {
    const lagSeconds = this.zeroes();
    for (const policy of this.policies) {
      lagSeconds[policy.name] = await policy.owner.lagSeconds(
        this.dataSource,
        this.batchOf(policy, now),
      );
    }
    const idempotency = this.policies.find((policy) => policy.name === 'idempotency_keys');
    const idempotencyHoldSeconds = idempotency
      ? await idempotency.owner.holdSeconds(this.dataSource, this.batchOf(idempotency, now))
      : 0;
    return { lagSeconds, idempotencyHoldSeconds };
  }

  private batchOf(policy: RetentionPolicy, now: Date) {
    return {
      policy: policy.name,
      cutoff: cutoffOf(policy, this.options.windows, now),
      windows: this.options.windows,
    };
  }

  /** Every policy at 0, in round order (the pass's log line lists them so). */
  private zeroes(): Record<string, number> {
    return Object.fromEntries(this.policies.map((policy) => [policy.name, 0]));
  }
}

/** Resolves after `ms`, or as soon as `signal` aborts; never rejects. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
