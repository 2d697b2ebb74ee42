import type { Fault, Topology } from './chaos.args';
import { sleep } from '../bench/bench.processes';
import { PrivatePostgres, PrivateRedis } from './private-services';

/*
 * What the chaos run's apps stand on: the PostgreSQL and Redis servers it starts, how the apps
 * reach them, and the faults that hit those servers rather than an app. `default` is one of
 * each; `ha` (ha-topology.ts) a Sentinel group and a primary with a streaming standby.
 */

export interface ChaosTopology {
  readonly name: Topology;
  /** How many matcher processes the stack runs. */
  readonly matchers: number;
  /** How the apps reach the servers (ChaosStackOptions.connectionEnv). */
  connectionEnv(database: string): Record<string, string>;
  /** More environment for every app (the HA topology's MATCHER_SHARDS). */
  readonly appEnv: Readonly<Record<string, string>>;
  /** Where the run's own queries go: the primary now. */
  databasePort(): number;
  /** One line for the log: what runs where. */
  describe(): string;
  /**
   * Injects `fault` if it is one of the servers' (resolving once it is over); false for an app's.
   */
  inject(fault: Fault, downMs: number, progress: (line: string) => void): Promise<boolean>;
  /** The longest notification stall the targets allow around `fault` (ms). */
  stallTargetMs(fault: string): number;
  destroy(): Promise<void>;
  /** At process exit (no awaiting there). */
  destroySync(): void;
}

/** Today's topology: one PostgreSQL, one Redis, each crashed and restarted by its fault. */
export class DefaultTopology implements ChaosTopology {
  readonly name = 'default';
  readonly matchers = 1;
  readonly appEnv = {};

  private constructor(
    private readonly pg: PrivatePostgres,
    private readonly redis: PrivateRedis,
  ) {}

  static async create(scratch: string): Promise<DefaultTopology> {
    const pg = await PrivatePostgres.create(scratch, 55432);
    try {
      return new DefaultTopology(pg, await PrivateRedis.create(scratch, 56379));
    } catch (error) {
      await pg.destroy();
      throw error;
    }
  }

  connectionEnv(database: string): Record<string, string> {
    return {
      DATABASE_HOST: '127.0.0.1',
      DATABASE_PORT: String(this.pg.port),
      DATABASE_USER: 'postgres',
      DATABASE_NAME: database,
      REDIS_HOST: '127.0.0.1',
      REDIS_PORT: String(this.redis.port),
    };
  }

  databasePort(): number {
    return this.pg.port;
  }

  describe(): string {
    return `private PostgreSQL on :${this.pg.port}, Redis on :${this.redis.port}`;
  }

  async inject(fault: Fault, downMs: number): Promise<boolean> {
    const server = fault === 'redis' ? this.redis : fault === 'postgres' ? this.pg : undefined;
    if (!server) return false;
    await server.crash();
    await sleep(downMs);
    await server.start();
    return true;
  }

  stallTargetMs(): number {
    return 5_000;
  }

  async destroy(): Promise<void> {
    await this.redis.destroy().catch(() => undefined);
    await this.pg.destroy().catch(() => undefined);
  }

  destroySync(): void {
    this.redis.destroySync();
    this.pg.destroySync();
  }
}
