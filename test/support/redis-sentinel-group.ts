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
 * A Redis master, its replica and one sentinel watching them, on loopback ports in `root`: the
 * smallest group in which Sentinel can fail over (quorum 1). redis-server runs the sentinel
 * (`--sentinel`); it rewrites its config file, so the file is its own. With `certificates`, the
 * servers and the sentinel also serve TLS, replicate and monitor over it, and the sentinel
 * announces the TLS ports; the plain ports stay for the test's own commands.
 */
export class RedisSentinelGroup {
  private constructor(
    readonly master: GroupServer,
    readonly replica: GroupServer,
    readonly sentinelPort: number,
    /** The port clients ask: the sentinel's TLS port in a TLS group. */
    readonly sentinelServicePort: number,
    private readonly sentinel: ChildProcess,
  ) {}

  static async create(root: string, certificates?: Certificates): Promise<RedisSentinelGroup> {
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
    const dir = path.join(root, 'sentinel');
    mkdirSync(dir, { recursive: true });
    const port = await freePortFrom(46400);
    const tlsPort = certificates ? await freePortFrom(46405) : undefined;
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
        `sentinel monitor ${SENTINEL_MASTER} 127.0.0.1 ${master.servicePort} 1`,
        `sentinel down-after-milliseconds ${SENTINEL_MASTER} 1000`,
        `sentinel failover-timeout ${SENTINEL_MASTER} 10000`,
        '',
      ].join('\n'),
    );
    const sentinel = spawn('redis-server', [configFile, '--sentinel'], {
      stdio: 'ignore',
      detached: true,
    });
    const group = new RedisSentinelGroup(master, replica, port, tlsPort ?? port, sentinel);
    await until('the replica to sync', async () =>
      (await redisCli(replica.redis.port, 'INFO', 'replication')).includes('master_link_status:up'),
    );
    // A failover needs the sentinel to know the replica (it learns it from the master's INFO).
    await until('the sentinel to see the replica', async () =>
      (await redisCli(port, 'SENTINEL', 'REPLICAS', SENTINEL_MASTER)).includes(
        String(replica.servicePort),
      ),
    );
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

  /**
   * SIGKILLs the current master: the sentinel, finding it down (after 1 s), promotes the other
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
    if (this.sentinel.exitCode === null && this.sentinel.signalCode === null) {
      const exited = new Promise((resolve) => this.sentinel.once('exit', resolve));
      this.sentinel.kill('SIGKILL');
      await exited;
    }
    await this.replica.redis.destroy();
    await this.master.redis.destroy();
  }
}
