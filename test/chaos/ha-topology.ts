import type { Fault } from './chaos.args';
import type { ChaosTopology } from './chaos-topology';
import { sleep } from '../bench/bench.processes';
import { PrivatePostgres } from './private-services';
import { RedisSentinelGroup, SENTINEL_MASTER } from '../support/redis-sentinel-group';

/*
 * `--topology=ha`: a Redis master, its replica and three sentinels (quorum 2), and a PostgreSQL
 * primary with a synchronous streaming standby, all on loopback in the run's directory. The apps
 * reach them only through the HA variables (REDIS_SENTINELS, a DATABASE_URL listing both hosts
 * with target_session_attrs=read-write), two matchers share duel's two shards.
 *
 * Faults: `redis-master` SIGKILLs whichever server is master (the sentinels promote the other)
 * and starts it again after --down ms, when the sentinels make it the new master's replica.
 * `postgres-primary` crashes the primary for good and, --down ms later (standing for the time an
 * operator's controller takes to decide, as Patroni's or CloudNativePG's would), the run promotes
 * the standby. The lost primary is not rebuilt (that needs pg_rewind or a new base backup), so the
 * rest of the run has no standby.
 */

const SENTINELS = 3;
/**
 * Region groups (the journeys probe every region, so each ticket is offered in both shards and
 * the commit-time row check settles which match gets it: the case the check exists for).
 */
const MATCHER_SHARDS = JSON.stringify({
  duel: { regions: { west: ['eu-west', 'us-west'], east: ['us-east', 'ap-southeast'] } },
});
const PRIMARY_FAILOVER_STALL_TARGET_MS = 15_000;
const STALL_TARGET_MS = 2_000;

export class HaTopology implements ChaosTopology {
  readonly name = 'ha';
  readonly matchers = 2;
  readonly appEnv = { MATCHER_SHARDS };
  private primaryLost = false;

  private constructor(
    private readonly redis: RedisSentinelGroup,
    private readonly primary: PrivatePostgres,
    private readonly standby: PrivatePostgres,
  ) {}

  static async create(scratch: string): Promise<HaTopology> {
    const redis = await RedisSentinelGroup.create(scratch, undefined, SENTINELS);
    let primary: PrivatePostgres | undefined;
    try {
      // Synchronous replication: a commit the apps saw is on the standby too, so promoting it
      // loses nothing (asynchronous, the last commits before the crash could vanish after being
      // delivered, and their revisions be reused).
      primary = await PrivatePostgres.create(scratch, 55432, [
        `synchronous_standby_names = '*'`,
        `synchronous_commit = on`,
      ]);
      // Once promoted it is alone: waiting for a standby of its own would block every commit.
      const standby = await PrivatePostgres.standbyOf(primary, scratch, 55442, 'pg-standby', [
        `synchronous_standby_names = ''`,
      ]);
      await standby.waitReady();
      return new HaTopology(redis, primary, standby);
    } catch (error) {
      await primary?.destroy();
      await redis.destroy();
      throw error;
    }
  }

  connectionEnv(database: string): Record<string, string> {
    const hosts = [this.primary, this.standby].map((server) => `127.0.0.1:${server.port}`);
    return {
      DATABASE_URL: `postgres://postgres@${hosts.join(',')}/${database}?target_session_attrs=read-write`,
      REDIS_SENTINELS: this.redis.sentinelServicePorts.map((port) => `127.0.0.1:${port}`).join(),
      REDIS_SENTINEL_MASTER: SENTINEL_MASTER,
    };
  }

  databasePort(): number {
    return this.primaryLost ? this.standby.port : this.primary.port;
  }

  describe(): string {
    return (
      `Redis master :${this.redis.master.redis.port}, replica :${this.redis.replica.redis.port}, ` +
      `sentinels :${this.redis.sentinelPorts.join(', :')}; PostgreSQL primary :${this.primary.port}, ` +
      `synchronous standby :${this.standby.port}; ${this.matchers} matchers on MATCHER_SHARDS ${MATCHER_SHARDS}`
    );
  }

  async inject(fault: Fault, downMs: number, progress: (line: string) => void): Promise<boolean> {
    if (fault === 'redis-master') {
      const killedAt = Date.now();
      const survivor = await this.redis.killMaster();
      const dead = survivor === this.redis.master ? this.redis.replica : this.redis.master;
      progress(
        `redis-master: :${dead.redis.port} killed, :${survivor.redis.port} promoted by the sentinels after ${Date.now() - killedAt} ms`,
      );
      await sleep(downMs);
      await dead.redis.start();
      return true;
    }
    if (fault === 'postgres-primary') {
      if (this.primaryLost) throw new Error('postgres-primary: the primary was already lost');
      await this.primary.crash();
      await sleep(downMs);
      const promoting = Date.now();
      await this.standby.promote();
      this.primaryLost = true;
      progress(
        `postgres-primary: :${this.primary.port} crashed, :${this.standby.port} promoted ${downMs} ms later (pg_ctl promote took ${Date.now() - promoting} ms)`,
      );
      return true;
    }
    if (fault === 'redis' || fault === 'postgres')
      throw new Error(`${fault} is a fault of the default topology`);
    return false;
  }

  stallTargetMs(fault: string): number {
    return fault === 'postgres-primary' ? PRIMARY_FAILOVER_STALL_TARGET_MS : STALL_TARGET_MS;
  }

  async destroy(): Promise<void> {
    await this.redis.destroy().catch(() => undefined);
    await this.standby.destroy().catch(() => undefined);
    await this.primary.destroy().catch(() => undefined);
  }

  destroySync(): void {
    this.redis.destroySync();
    this.standby.destroySync();
    this.primary.destroySync();
  }
}
