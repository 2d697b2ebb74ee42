import { Logger } from '@nestjs/common';
import { randomInt } from 'node:crypto';
import type { DataSource, QueryRunner } from 'typeorm';
import { trySessionLock, type ModeLease } from './mode-lease';

/** First key of every matcher's presence lock ("matp"), beside the leases' "matc". */
export const MATCHER_PRESENCE_CLASS = 0x6d617470;

/**
 * How many shards of each mode this matcher should hold: a fair share, ceil(shards / live
 * matchers), where the live matchers are those holding a presence lock in this database (a
 * session-level advisory lock on a dedicated connection, so a matcher that dies leaves the count
 * when its leases are freed, at the same moment). A matcher under its share takes free shards; one
 * over it gives shards up between passes, for the newcomer to take. Without its presence (the
 * connection failed) a matcher takes whatever it can, as an unsharded matcher does.
 */
export class ShardBalance {
  private readonly logger = new Logger(ShardBalance.name);
  private presence?: QueryRunner;
  private live = 0;
  private readonly taking = new Set<ModeLease>();

  /**
   * `poolSize`: the DataSource's connections. Leases never take the last two (the presence and
   * the passes' reads), or every pass would wait for a connection forever.
   */
  constructor(
    private readonly dataSource: DataSource,
    private readonly leasesByMode: ReadonlyMap<string, readonly ModeLease[]>,
    private readonly poolSize: number,
  ) {}

  /** Live matchers, this one included, as of the last refresh (0 before one succeeded). */
  get liveMatchers(): number {
    return this.live;
  }

  /** Re-takes the presence lock if its session ended, then counts the live matchers. */
  async refresh(): Promise<void> {
    if (!this.presence || this.presence.isReleased) await this.announce();
    const [row] = await this.dataSource.query<{ live: number }[]>(
      `SELECT count(*)::int AS live FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND classid = $1::oid AND objsubid = 2
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [MATCHER_PRESENCE_CLASS],
    );
    this.live = this.presence && !this.presence.isReleased ? (row?.live ?? 0) : 0;
  }

  /** The most shards of `mode` this matcher should hold. */
  share(mode: string): number {
    const total = this.leasesByMode.get(mode)?.length ?? 0;
    return this.live > 0 ? Math.ceil(total / this.live) : total;
  }

  /**
   * What `lease`'s loop should do before its next pass: `pass` (it holds the lease), `take` (try
   * to, through take()), `release` (this matcher holds more than its share) or `idle` (its share
   * is held already, or the pool has no connection to spare). Decided synchronously from the
   * leases held and being taken, so two shard loops never both give up the same excess nor both
   * take the last place.
   */
  decide(lease: ModeLease): 'pass' | 'take' | 'release' | 'idle' {
    const mine = (l: ModeLease) => l.held || this.taking.has(l);
    const held = (this.leasesByMode.get(lease.mode) ?? []).filter(mine).length;
    const share = this.share(lease.mode);
    if (lease.held) return held > share ? 'release' : 'pass';
    const heldInAllModes = [...this.leasesByMode.values()].flat().filter(mine).length;
    return held < share && heldInAllModes < this.poolSize - 2 ? 'take' : 'idle';
  }

  /** Tries to take `lease` (after decide() said `take`), its place reserved meanwhile. */
  async take(lease: ModeLease): Promise<boolean> {
    this.taking.add(lease);
    try {
      return await lease.tryAcquire();
    } finally {
      this.taking.delete(lease);
    }
  }

  async close(): Promise<void> {
    const presence = this.presence;
    this.presence = undefined;
    // The connection goes back to the pool, so not with the lock on it.
    if (presence && !presence.isReleased) {
      await presence.query(`SELECT pg_advisory_unlock_all()`).catch(() => undefined);
      await presence.release();
    }
  }

  private async announce(): Promise<void> {
    const runner = this.dataSource.createQueryRunner();
    try {
      // A random key per process; a clash (one in four billion) just tries another.
      for (let attempt = 0; attempt < 3; attempt += 1) {
        if ((await trySessionLock(runner, MATCHER_PRESENCE_CLASS, randomInt(2 ** 31))).locked) {
          this.presence = runner;
          return;
        }
      }
      await runner.release();
    } catch (error) {
      if (!runner.isReleased) await runner.release().catch(() => undefined);
      this.logger.warn(`matcher presence not announced: ${(error as Error).message}`);
    }
  }
}
