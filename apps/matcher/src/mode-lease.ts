import { Logger } from '@nestjs/common';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { UnitOfWork } from '@matchplane/persistence';
import { WHOLE_MODE, wholeMode, type MatcherShard } from '@matchplane/config';

/** First key of every matcher lease (two-int advisory locks, so no clash with one-bigint keys). */
export const MATCHER_LOCK_CLASS = 0x6d617463; // "matc"

/** Second key: FNV-1a of the mode name as an int4 (the matcher refuses to start on a collision). */
export function modeLockKey(mode: string): number {
  return fnv1a(`matcher:${mode}`);
}

/**
 * Second key of one shard's lease. The whole mode keeps the key it always had, so a matcher of
 * an earlier release and this one still exclude each other on an unsharded mode.
 */
export function shardLockKey(mode: string, shard: string): number {
  return shard === WHOLE_MODE ? modeLockKey(mode) : fnv1a(`matcher:${mode}:${shard}`);
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

/**
 * Takes the session-level advisory lock (classId, key) on `runner`'s connection, without waiting.
 * One statement, so no failure can leave the lock taken on a connection handed back. The
 * keepalives bound how long a holder whose host vanished keeps the lock (the server must notice
 * the dead peer); on a connection that is not kept they are harmless.
 */
export async function trySessionLock(
  runner: QueryRunner,
  classId: number,
  key: number,
): Promise<{ locked: boolean; pid: number }> {
  const [row] = await runner.manager.query<{ locked: boolean; pid: number }[]>(
    `SELECT set_config('tcp_keepalives_idle', '10', false) AS idle,
            set_config('tcp_keepalives_interval', '5', false) AS interval,
            set_config('tcp_keepalives_count', '3', false) AS count,
            pg_try_advisory_lock($1, $2) AS locked, pg_backend_pid() AS pid`,
    [classId, key],
  );
  return { locked: row?.locked === true, pid: row?.pid ?? 0 };
}

/** The lease was lost (or never held): the work did not run, or its transaction did not commit. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';

  constructor(
    readonly mode: string,
    readonly shard: string = WHOLE_MODE,
  ) {
    super(`the matcher lease of ${shardName(mode, shard)} is not held`);
  }
}

/** Runs work in one transaction under the lease, committing only while the lease is held. */
export interface CommitSession {
  readonly mode: string;
  /** The shard whose candidates the pass considers (default: the whole mode). */
  readonly shard?: MatcherShard;
  /** `unit`: the transaction's unit of work, which store writes (TicketStore's) take. */
  transaction<T>(work: (manager: EntityManager, unit: UnitOfWork) => Promise<T>): Promise<T>;
}

/** "mode duel" for the whole mode, "mode duel shard pc" for one shard (logs and errors). */
export function shardName(mode: string, shard: string): string {
  return shard === WHOLE_MODE ? `mode ${mode}` : `mode ${mode} shard ${shard}`;
}

/**
 * The right to match one shard of a mode (the whole mode when it is not split): a session-level
 * PostgreSQL advisory lock held on a dedicated connection, and that same connection is where the
 * shard's matches are committed.
 *
 * Fencing comes from PostgreSQL itself: the lock lives exactly as long as the session, and a
 * transaction can only commit on a live session, so a matcher that lost its lease (its session
 * ended: crash, network partition, pg_terminate_backend) cannot commit a match afterwards; its
 * open transaction dies with the session. Each transaction also re-reads pg_locks first, which
 * guards against the lock having been released on a live session (a code path bug). There is no
 * lease expiry to tune and no clock involved; the cost is one committing connection per shard, so
 * commits of a shard are serial (MATCHER_COMMIT_BATCH amortises them). Server-side TCP keepalives
 * on the session bound how long a vanished host keeps its lease.
 */
export class ModeLease implements CommitSession {
  private readonly logger = new Logger(ModeLease.name);
  private runner?: QueryRunner;
  private pid?: number;
  private readonly key: number;

  readonly mode: string;
  readonly shard: MatcherShard;

  constructor(
    private readonly dataSource: DataSource,
    shard: MatcherShard | string,
  ) {
    this.shard = typeof shard === 'string' ? wholeMode(shard) : shard;
    this.mode = this.shard.mode;
    this.key = shardLockKey(this.mode, this.shard.name);
  }

  private get name(): string {
    return shardName(this.mode, this.shard.name);
  }

  /** Whether this process holds the lease, as far as it can tell without a round trip. */
  get held(): boolean {
    return this.runner !== undefined && !this.runner.isReleased;
  }

  /** The PostgreSQL backend holding the lease (tests terminate it to take the lease over). */
  get backendPid(): number | undefined {
    return this.held ? this.pid : undefined;
  }

  /** Holds the lease after this call if it can be had; never waits for another holder. */
  async tryAcquire(): Promise<boolean> {
    if (this.held) return true;
    if (this.runner) this.lost();
    const runner = this.dataSource.createQueryRunner();
    try {
      const { locked, pid } = await trySessionLock(runner, MATCHER_LOCK_CLASS, this.key);
      if (!locked) {
        await runner.release();
        return false;
      }
      this.runner = runner;
      this.pid = pid;
      this.logger.log(`holding the matcher lease of ${this.name} (backend ${pid})`);
      return true;
    } catch (error) {
      if (!runner.isReleased) await runner.release().catch(() => undefined);
      throw error;
    }
  }

  async transaction<T>(work: (manager: EntityManager, unit: UnitOfWork) => Promise<T>): Promise<T> {
    const runner = this.runner;
    if (!runner || runner.isReleased) throw new LeaseLostError(this.mode, this.shard.name);
    // The connection is reused, so the unit of work ends with this transaction, whatever happens.
    const unit = UnitOfWork.open(runner.manager);
    let result: T;
    try {
      await runner.startTransaction('READ COMMITTED');
      const [fence] = await runner.manager.query<{ held: boolean }[]>(
        `SELECT EXISTS (
           SELECT 1 FROM pg_locks
            WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
              AND classid = $1::oid AND objid = $2::oid AND objsubid = 2) AS held`,
        [MATCHER_LOCK_CLASS >>> 0, this.key >>> 0],
      );
      if (!fence?.held) throw new LeaseLostError(this.mode, this.shard.name);
      result = await work(runner.manager, unit);
      await runner.commitTransaction();
    } catch (error) {
      if (!runner.isReleased && runner.isTransactionActive) {
        await runner.rollbackTransaction().catch(() => undefined);
      }
      if (runner.isReleased) {
        this.lost();
        throw new LeaseLostError(this.mode, this.shard.name);
      }
      if (error instanceof LeaseLostError) await this.release();
      throw error;
    } finally {
      unit.close();
    }
    await unit.runEffects();
    return result;
  }

  /** Gives the lease up (unlocks, then returns the connection to the pool). */
  async release(): Promise<void> {
    const runner = this.runner;
    const pid = this.pid;
    this.runner = undefined;
    this.pid = undefined;
    if (!runner || runner.isReleased) return;
    if (runner.isTransactionActive) {
      // A commit still runs on the session (a shutdown that stopped waiting for it): ending the
      // session rolls it back and frees the lock; handing it back to the pool would leak both.
      await this.dataSource.query(`SELECT pg_terminate_backend($1)`, [pid]).catch(() => undefined);
      return;
    }
    try {
      await runner.query(`SELECT pg_advisory_unlock($1, $2)`, [MATCHER_LOCK_CLASS, this.key]);
    } catch (error) {
      // Never hand a pooled connection back still holding the lock: end that session instead.
      this.logger.warn(
        `could not unlock ${this.name} (${(error as Error).message}); ending its session`,
      );
      if (!runner.isReleased && pid !== undefined) {
        await this.dataSource
          .query(`SELECT pg_terminate_backend($1)`, [pid])
          .catch(() => undefined);
      }
      return;
    }
    await runner.release();
    this.logger.log(`released the matcher lease of ${this.name}`);
  }

  private lost(): void {
    if (this.runner) this.logger.warn(`lost the matcher lease of ${this.name}`);
    this.runner = undefined;
    this.pid = undefined;
  }
}
