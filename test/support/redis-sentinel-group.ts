import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sleep } from '../bench/bench.processes';
import { freePortFrom, PrivateRedis, run } from '../chaos/private-services';
import type { Certificates } from './tls-certificates';

export const SENTINEL_MASTER = 'mp-main';
const READY_TIMEOUT_MS = 30_000;

async function redisCli(port: number, ...args: string[]): Promise<string> {
  return (await run('redis-cli', ['-p', String(port), ...args])).trim();
}

/** Polls `probe` until it holds; fails with `what` after READY_TIMEOUT_MS. */
async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** redis-server arguments serving TLS on `port` and replicating over TLS. */
function tlsArgs(certificates: Certificates, port: number): string[] {
  return [
    ...['--tls-port', String(port), '--tls-auth-clients', 'no', '--tls-replication', 'yes'],
    ...['--tls-cert-file', certificates.cert, '--tls-key-file', certificates.key],
    ...['--tls-ca-cert-file', certificates.ca],
  ];
}

/** One server of the group: its plain port (administration) and the port clients use. */
export interface GroupServer {
  readonly redis: PrivateRedis;
  /** Where the sentinels announce it: the TLS port in a TLS group. */
  readonly servicePort: number;
}

/**
 * A Redis master, its replica and `sentinelCount` sentinels watching them, on loopback ports in
 * `root`: one sentinel (quorum 1) is the smallest group in which Sentinel can fail over; three
 * (quorum 2) is the production shape, a majority electing the leader that promotes. redis-server
 * runs a sentinel (`--sentinel`); it rewrites its config file, so each has its own. With
 * `certificates`, the servers and the sentinels also serve TLS, replicate and monitor over it,
 * and the sentinels announce the TLS ports; the plain ports stay for the test's own commands.
 */
export class RedisSentinelGroup {
  private constructor(
    readonly master: GroupServer,
    readonly replica: GroupServer,
    /** The sentinels' plain ports (the first is the one asked for the master). */
    readonly sentinelPorts: readonly number[],
    /** The ports clients ask: the sentinels' TLS ports in a TLS group. */
    readonly sentinelServicePorts: readonly number[],
    private readonly sentinels: readonly ChildProcess[],
  ) {}

  get sentinelPort(): number {
    return this.sentinelPorts[0]!;
  }

  get sentinelServicePort(): number {
    return this.sentinelServicePorts[0]!;
  }

  static async create(
    root: string,
    certificates?: Certificates,
    sentinelCount = 1,
  ): Promise<RedisSentinelGroup> {
    const server = async (name: string, preferred: number, replicaOf?: GroupServer) => {
      const tlsPort = certificates ? await freePortFrom(preferred + 5) : undefined;
      const redis = await PrivateRedis.create(root, preferred, name, () => [
        ...(certificates && tlsPort ? tlsArgs(certificates, tlsPort) : []),
        ...(replicaOf ? ['--replicaof', '127.0.0.1', String(replicaOf.servicePort)] : []),
      ]);
      return { redis, servicePort: tlsPort ?? redis.port };
    };
    const master = await server('redis-master', 46380);
    const replica = await server('redis-replica', 46390, master);
    const quorum = Math.floor(sentinelCount / 2) + 1;
    const ports: number[] = [];
    const servicePorts: number[] = [];
    const children: ChildProcess[] = [];
    for (let i = 0; i < sentinelCount; i += 1) {
      const dir = path.join(root, i === 0 ? 'sentinel' : `sentinel-${i}`);
      mkdirSync(dir, { recursive: true });
      const port = await freePortFrom(46400 + 10 * i);
      const tlsPort = certificates ? await freePortFrom(46405 + 10 * i) : undefined;
      const configFile = path.join(dir, 'sentinel.conf');
      writeFileSync(
        configFile,
        [
          `port ${port}`,
          ...(certificates && tlsPort
            ? [
                `tls-port ${tlsPort}`,
                'tls-auth-clients no',
                'tls-replication yes',
                `tls-cert-file ${certificates.cert}`,
                `tls-key-file ${certificates.key}`,
                `tls-ca-cert-file ${certificates.ca}`,
              ]
            : []),
          'bind 127.0.0.1',
          `dir ${dir}`,
          `logfile ${path.join(dir, 'sentinel.log')}`,
          `sentinel monitor ${SENTINEL_MASTER} 127.0.0.1 ${master.servicePort} ${quorum}`,
          `sentinel down-after-milliseconds ${SENTINEL_MASTER} 1000`,
          `sentinel failover-timeout ${SENTINEL_MASTER} 10000`,
          '',
        ].join('\n'),
      );
      const child = spawn('redis-server', [configFile, '--sentinel'], {
        stdio: 'ignore',
        detached: true,
      });
      // Listening before the next port is chosen, so two sentinels never pick the same one.
      await until(`sentinel ${i} to answer`, async () => (await redisCli(port, 'PING')) === 'PONG');
      ports.push(port);
      servicePorts.push(tlsPort ?? port);
      children.push(child);
    }
    const group = new RedisSentinelGroup(master, replica, ports, servicePorts, children);
    await until('the replica to sync', async () =>
      (await redisCli(replica.redis.port, 'INFO', 'replication')).includes('master_link_status:up'),
    );
    // A failover needs every sentinel to know the replica (learnt from the master's INFO) and,
    // with several, each other (learnt over the master's hello channel) to elect a leader.
    for (const port of ports) {
      await until('the sentinels to see the replica and each other', async () => {
        const replicas = await redisCli(port, 'SENTINEL', 'REPLICAS', SENTINEL_MASTER);
        const peers = await redisCli(port, 'SENTINEL', 'SENTINELS', SENTINEL_MASTER);
        const peerCount = peers.split('\n').filter((line) => line === 'runid').length;
        return replicas.includes(String(replica.servicePort)) && peerCount === ports.length - 1;
      });
    }
    return group;
  }

  /** The service port the sentinel names as the master's now. */
  async masterPort(): Promise<number> {
    const answer = await redisCli(
      this.sentinelPort,
      'SENTINEL',
      'GET-MASTER-ADDR-BY-NAME',
      SENTINEL_MASTER,
    );
    return Number(answer.split('\n')[1]);
  }

  /**
   * SENTINEL FAILOVER: the replica is promoted, then the old master made its replica (which
   * disconnects the old master's clients). Returns once both happened: until the second, the old
   * master still takes writes, which its demotion then discards (Redis replicates asynchronously).
   */
  async failover(): Promise<void> {
    await redisCli(this.sentinelPort, 'SENTINEL', 'FAILOVER', SENTINEL_MASTER);
    await until('the replica to be master and the master its replica', async () => {
      const promoted = (await redisCli(this.replica.redis.port, 'ROLE')).startsWith('master');
      const demoted = (await redisCli(this.master.redis.port, 'ROLE')).startsWith('slave');
      return promoted && demoted && (await this.masterPort()) === this.replica.servicePort;
    });
  }

  /** At process exit (no awaiting there). */
  destroySync(): void {
    for (const sentinel of this.sentinels)
      if (sentinel.exitCode === null && sentinel.signalCode === null) sentinel.kill('SIGKILL');
    this.replica.redis.destroySync();
    this.master.redis.destroySync();
  }

  /**
   * SIGKILLs the current master: the sentinels, finding it down (after 1 s), promote the other
   * server. Resolves with the survivor.
   */
  async killMaster(): Promise<GroupServer> {
    const masterPort = await this.masterPort();
    const [dead, survivor] =
      masterPort === this.master.servicePort
        ? [this.master, this.replica]
        : [this.replica, this.master];
    await dead.redis.crash();
    await until('the survivor to be promoted', async () => {
      const promoted = (await redisCli(survivor.redis.port, 'ROLE')).startsWith('master');
      return promoted && (await this.masterPort()) === survivor.servicePort;
    });
    return survivor;
  }

  async destroy(): Promise<void> {
    for (const sentinel of this.sentinels) {
      if (sentinel.exitCode !== null || sentinel.signalCode !== null) continue;
      const exited = new Promise((resolve) => sentinel.once('exit', resolve));
      sentinel.kill('SIGKILL');
      await exited;
    }
    await this.replica.redis.destroy();
    await this.master.redis.destroy();
  }
}
