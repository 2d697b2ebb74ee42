import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import {
  appendFileSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { sleep } from '../bench/bench.processes';

/*
 * The chaos run's own PostgreSQL cluster and Redis server, in a temporary directory on ports of
 * their own, so killing and restarting them never disturbs the shared ones. Both are torn down
 * (processes killed, directory removed) by `destroy()`, which is safe to call more than once.
 */

const PG_BIN = process.env.CHAOS_PG_BIN ?? '/usr/local/bin';
/** pg_basebackup is not among the binaries in /usr/local/bin. */
const PG_BASEBACKUP = process.env.CHAOS_PG_BASEBACKUP ?? '/usr/lib/postgresql/15/bin/pg_basebackup';
const REDIS_SERVER = process.env.CHAOS_REDIS_SERVER ?? 'redis-server';
const START_TIMEOUT_MS = 30_000;

/** initdb and postgres refuse to run as root: as root, they run as the `postgres` OS user. */
function postgresOsUser(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined)
    throw new Error(
      'running as root needs a "postgres" OS user to run the private PostgreSQL cluster',
    );
  return { uid: Number(uid), gid: Number(gid) };
}

function asPostgresUser(): Pick<SpawnOptions, 'uid' | 'gid'> {
  return process.getuid?.() === 0 ? postgresOsUser() : {};
}

function chownToPostgres(dir: string): void {
  if (process.getuid?.() !== 0) return;
  const { uid, gid } = postgresOsUser();
  chownSync(dir, uid, gid);
}

/** Runs a command to completion; rejects with its output when it fails. */
export function run(command: string, args: string[], options: SpawnOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0
        ? resolve(output)
        : reject(
            new Error(`${command} ${args.join(' ')} failed (${code ?? signal}): ${output.trim()}`),
          ),
    );
  });
}

/** A TCP port nobody listens on now, at or after `preferred` (the 55432 / 56379). */
export async function freePortFrom(preferred: number): Promise<number> {
  for (let port = preferred; port < preferred + 200; port += 1) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free port in ${preferred}-${preferred + 199}`);
}

/** A throwaway PostgreSQL cluster (trust auth, user postgres) on 127.0.0.1:`port`. */
export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  private get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  /** `settings`: extra postgresql.conf lines (a bench's shared_preload_libraries, say). */
  static async create(
    root: string,
    preferredPort: number,
    settings: readonly string[] = [],
  ): Promise<PrivatePostgres> {
    const dir = path.join(root, 'pg');
    mkdirSync(dir, { recursive: true });
    chownToPostgres(dir);
    const port = await freePortFrom(preferredPort);
    const pg = new PrivatePostgres(dir, port);
    await run(
      path.join(PG_BIN, 'initdb'),
      ['-D', pg.dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'],
      asPostgresUser(),
    );
    // Sized for a laptop-class machine shared with other work; fsync stays on (a crash-restart
    // of this cluster must behave like a real one).
    writeFileSync(
      path.join(pg.dataDir, 'postgresql.auto.conf'),
      [
        `listen_addresses = '127.0.0.1'`,
        `port = ${port}`,
        `unix_socket_directories = '${dir}'`,
        `max_connections = 200`,
        `shared_buffers = 64MB`,
        `log_min_messages = warning`,
        ...settings,
        '',
      ].join('\n'),
    );
    await pg.start();
    return pg;
  }

  /**
   * A streaming replica of `primary` (hot standby, read-only), in `root`/`name` on a port of its
   * own: pg_basebackup -R copies the primary and writes its standby.signal and primary_conninfo.
   * `settings`: postgresql.conf lines of its own, over the ones copied from the primary.
   */
  static async standbyOf(
    primary: PrivatePostgres,
    root: string,
    preferredPort: number,
    name = 'pg-standby',
    settings: readonly string[] = [],
  ): Promise<PrivatePostgres> {
    const dir = path.join(root, name);
    mkdirSync(dir, { recursive: true });
    chownToPostgres(dir);
    const standby = new PrivatePostgres(dir, await freePortFrom(preferredPort));
    await run(
      PG_BASEBACKUP,
      [
        ...['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres'],
        ...['-D', standby.dataDir, '-R', '-X', 'stream', '--no-sync'],
      ],
      asPostgresUser(),
    );
    // The copied postgresql.auto.conf names the primary's port and socket directory: later
    // lines win.
    appendFileSync(
      path.join(standby.dataDir, 'postgresql.auto.conf'),
      [`port = ${standby.port}`, `unix_socket_directories = '${dir}'`, ...settings, ''].join('\n'),
    );
    await standby.start();
    return standby;
  }

  /** Ends recovery: the standby becomes a primary that accepts writes. */
  async promote(): Promise<void> {
    await run(path.join(PG_BIN, 'pg_ctl'), ['-D', this.dataDir, '-w', 'promote'], asPostgresUser());
  }

  async start(): Promise<void> {
    await run(
      path.join(PG_BIN, 'pg_ctl'),
      ['-D', this.dataDir, '-l', path.join(this.dir, 'postgres.log'), '-w', '-t', '60', 'start'],
      asPostgresUser(),
    );
  }

  /** A crash: `immediate` shutdown skips the checkpoint, so the next start runs WAL recovery. */
  async crash(): Promise<void> {
    await run(
      path.join(PG_BIN, 'pg_ctl'),
      ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop'],
      asPostgresUser(),
    );
  }

  /** Waits until a connection to `database` answers. */
  async waitReady(database = 'postgres', timeoutMs = START_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const client = new Client({ host: '127.0.0.1', port: this.port, user: 'postgres', database });
      try {
        await client.connect();
        await client.query('SELECT 1');
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
      } finally {
        await client.end().catch(() => undefined);
      }
      await sleep(100);
    }
  }

  async destroy(): Promise<void> {
    await run(
      path.join(PG_BIN, 'pg_ctl'),
      ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop'],
      asPostgresUser(),
    ).catch(() => undefined);
  }

  /** At process exit (no awaiting there): SIGQUIT is PostgreSQL's immediate shutdown. */
  destroySync(): void {
    try {
      const pid = Number(
        readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0],
      );
      if (Number.isInteger(pid) && pid > 0) process.kill(pid, 'SIGQUIT');
    } catch {
      // Not running.
    }
  }
}

/** A throwaway Redis with AOF (as production runs it for BullMQ) on 127.0.0.1:`port`. */
export class PrivateRedis {
  private child: ChildProcess | undefined;

  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly extraArgs: readonly string[],
  ) {}

  /**
   * `name`: its directory under `root` (several instances side by side). `extraArgs`: more
   * redis-server arguments (--replicaof, --tls-port); a function of the port it got.
   */
  static async create(
    root: string,
    preferredPort: number,
    name = 'redis',
    extraArgs: (port: number) => readonly string[] = () => [],
  ): Promise<PrivateRedis> {
    const dir = path.join(root, name);
    mkdirSync(dir, { recursive: true });
    const port = await freePortFrom(preferredPort);
    const redis = new PrivateRedis(dir, port, extraArgs(port));
    await redis.start();
    return redis;
  }

  async start(): Promise<void> {
    const child = spawn(
      REDIS_SERVER,
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'everysec',
        '--maxmemory-policy',
        'noeviction',
        '--logfile',
        path.join(this.dir, 'redis.log'),
        ...this.extraArgs,
      ],
      { stdio: 'ignore', detached: true },
    );
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`redis-server exited (${child.exitCode}); see ${this.dir}/redis.log`);
      const answered = await run(REDIS_SERVER.replace(/redis-server$/, 'redis-cli'), [
        '-p',
        String(this.port),
        'PING',
      ]).catch(() => '');
      if (answered.trim() === 'PONG') return;
      if (Date.now() > deadline)
        throw new Error(`redis-server on ${this.port} did not answer PING`);
      await sleep(50);
    }
  }

  /** SIGKILL: whatever the last second of AOF did not flush is lost, as in a real crash. */
  async crash(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  async destroy(): Promise<void> {
    await this.crash();
  }

  destroySync(): void {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null)
      this.child.kill('SIGKILL');
  }
}

/** The temporary directory holding both (and the run's logs); removed by `removeScratch`. */
export function makeScratch(prefix = 'matchplane-chaos-'): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  chownToPostgres(dir);
  return dir;
}

export function removeScratch(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
