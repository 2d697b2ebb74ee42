import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sleep } from '../bench/bench.processes';
import { freePortFrom, PrivateRedis, run } from '../chaos/private-services';

const READY_TIMEOUT_MS = 30_000;
/** Redis Cluster's bus listens this far above a node's port. */
const BUS_OFFSET = 10_000;

/** A port whose cluster bus port is free too, from `preferred` up. */
async function clusterPort(preferred: number): Promise<number> {
  for (let port = await freePortFrom(preferred); ; port = await freePortFrom(port + 1))
    if ((await freePortFrom(port + BUS_OFFSET)) === port + BUS_OFFSET) return port;
}

/**
 * A Redis Cluster of `masters` masters (no replicas) on loopback ports in a temporary directory,
 * made with `redis-cli --cluster create`; `stop` ends its servers and removes the directory.
 */
export class RedisClusterNodes {
  private constructor(
    private readonly root: string,
    private readonly servers: readonly PrivateRedis[],
  ) {}

  static async start(masters = 3, preferredPort = 7400): Promise<RedisClusterNodes> {
    const root = mkdtempSync(path.join(tmpdir(), 'matchplane-redis-cluster-'));
    const servers: PrivateRedis[] = [];
    const cluster = new RedisClusterNodes(root, servers);
    try {
      let next = preferredPort;
      for (let index = 0; index < masters; index += 1) {
        const port = await clusterPort(next);
        next = port + 1;
        servers.push(
          await PrivateRedis.create(root, port, `node-${index}`, () => [
            ...['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`],
            ...['--cluster-node-timeout', '5000'],
          ]),
        );
      }
      await run('redis-cli', [
        '--cluster',
        'create',
        ...cluster.addresses,
        ...['--cluster-replicas', '0', '--cluster-yes'],
      ]);
      await cluster.untilEveryNodeSeesOk();
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  /** "127.0.0.1:port" of every master. */
  get addresses(): string[] {
    return this.servers.map((server) => `127.0.0.1:${server.port}`);
  }

  /** Every master's port, in start order. */
  get ports(): number[] {
    return this.servers.map((server) => server.port);
  }

  /**
   * SIGKILLs master `index`, runs `whileDown`, and starts it again on its port and directory: it
   * rejoins with its slots from its nodes file (within the cluster's node timeout: no failover).
   */
  async restart(index: number, whileDown: () => Promise<void> = async () => {}): Promise<void> {
    const server = this.servers[index];
    if (server === undefined) throw new Error(`no master ${index}`);
    await server.crash();
    await whileDown();
    await server.start();
    await this.untilEveryNodeSeesOk();
  }

  /** As REDIS_CLUSTER_NODES takes them. */
  get nodesVariable(): string {
    return this.addresses.join(',');
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((server) => server.destroy()));
    rmSync(this.root, { recursive: true, force: true });
  }

  /** Slots are assigned and every node has heard of the others. */
  private async untilEveryNodeSeesOk(): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (const server of this.servers) {
      for (;;) {
        const info = await run('redis-cli', ['-p', String(server.port), 'CLUSTER', 'INFO']);
        if (info.includes('cluster_state:ok')) break;
        if (Date.now() > deadline) throw new Error(`cluster on ${server.port} not ok: ${info}`);
        await sleep(100);
      }
    }
  }
}
