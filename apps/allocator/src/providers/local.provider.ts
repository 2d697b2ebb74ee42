import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { AllocatorConfig } from '../allocator.config';
import { GameServerEnv } from '@matchplane/contracts';
import type { AllocationRecord, ProvidedServer } from '@matchplane/allocation';
import { localRegions } from '../allocation-regions';
import {
  AllocationProvider,
  NoCapacityError,
  type AllocationRequest,
  type ServerHandOffInput,
} from './allocation.provider';

/** A free TCP port on `host` (the OS picks; it is free again the moment this returns). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/** Picks of a health port before giving up (the OS hands back the players' port rarely). */
const HEALTH_PORT_ATTEMPTS = 5;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Development and tests: each match's game server is a child process (LOCAL_SERVER_ENTRY) on a
 * free port of LOCAL_SERVER_HOST, handed its identity, credential and config through the
 * GameServerEnv variables. The port is chosen at allocation (it is the signed endpoint); the
 * process starts at hand-off, when its credential exists. A retried hand-off stops the match's
 * earlier process first (its credential was just replaced). The servers stop with the allocator.
 * With LOCAL_SERVER_REGIONS it launches servers only for those regions, each labelled with its
 * region (the allocation's region and `providerRef.region`), as a region's own hosts would.
 */
@Injectable()
export class LocalProvider extends AllocationProvider implements OnApplicationShutdown {
  readonly name = 'local' as const;
  override readonly regions: readonly string[] | undefined;
  private readonly logger = new Logger(LocalProvider.name);
  private readonly children = new Map<string, ChildProcess>();

  private readonly extraEnv: Record<string, string>;

  constructor(@Inject(AllocatorConfig) private readonly config: AllocatorConfig) {
    super();
    this.regions = localRegions(config.LOCAL_SERVER_REGIONS);
    this.extraEnv = Object.fromEntries(
      (config.LOCAL_SERVER_ENV ?? '')
        .split(',')
        .filter(Boolean)
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
  }

  async allocate(request: AllocationRequest): Promise<ProvidedServer> {
    if (this.regions && !this.regions.includes(request.region)) {
      throw new NoCapacityError(
        `LOCAL_SERVER_REGIONS does not list region ${request.region} (match ${request.matchId})`,
      );
    }
    const host = this.config.LOCAL_SERVER_HOST;
    const port = await this.freePort(host);
    return {
      serverId: `local-${request.matchId}`,
      endpoint: host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`,
      providerRef: { port, region: request.region },
      region: request.region,
    };
  }

  async handOff(input: ServerHandOffInput): Promise<Readonly<Record<string, unknown>>> {
    const { allocation } = input;
    await this.stop(allocation);
    const port = Number(allocation.providerRef.port);
    const healthPort = await this.healthPortBeside(port);
    const child = spawn(process.execPath, [path.resolve(this.config.LOCAL_SERVER_ENTRY)], {
      env: {
        ...this.extraEnv,
        LOG_LEVEL: this.config.LOG_LEVEL,
        LOG_FORMAT: this.config.LOG_FORMAT,
        HEALTH_HOST: this.config.LOCAL_SERVER_HOST,
        HEALTH_PORT: String(healthPort),
        [GameServerEnv.SERVER_ID]: allocation.serverId,
        [GameServerEnv.CREDENTIAL]: input.credential,
        [GameServerEnv.MATCH_ID]: allocation.matchId,
        [GameServerEnv.JOIN_KEYS_FILE]: path.resolve(this.config.JOIN_KEYS_FILE),
        [GameServerEnv.API_URL]: input.apiUrl,
        [GameServerEnv.PORT]: String(port),
      },
      stdio: ['ignore', this.config.LOCAL_SERVER_OUTPUT, this.config.LOCAL_SERVER_OUTPUT],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    this.children.set(allocation.matchId, child);
    child.once('exit', (code, signal) => {
      if (this.children.get(allocation.matchId) === child) this.children.delete(allocation.matchId);
      this.logger.log(`game server ${allocation.serverId} exited (${code ?? signal ?? '?'})`);
    });
    return { pid: child.pid, healthPort };
  }

  async release(allocation: AllocationRecord): Promise<void> {
    await this.stop(allocation);
  }

  /**
   * The server's health port: any free one but its players' port, which was chosen at allocation
   * and has been free since, so the OS may hand it out again (the server would then exit on
   * EADDRINUSE and its match wait for the allocation timeout).
   */
  private async healthPortBeside(playersPort: number): Promise<number> {
    for (let attempt = 1; ; attempt += 1) {
      const port = await this.freePort(this.config.LOCAL_SERVER_HOST);
      if (port !== playersPort) return port;
      if (attempt >= HEALTH_PORT_ATTEMPTS)
        throw new Error(`no free health port beside players' port ${playersPort}`);
    }
  }

  /** A free port the OS picks (a seam: tests steer what the OS hands out). */
  protected freePort(host: string): Promise<number> {
    return freePort(host);
  }

  onApplicationShutdown(): void {
    for (const child of this.children.values()) child.kill('SIGTERM');
    this.children.clear();
  }

  /** Stops the match's server: ours if we started it, else the pid an earlier allocator recorded. */
  private async stop(allocation: AllocationRecord): Promise<void> {
    const child = this.children.get(allocation.matchId);
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      this.children.delete(allocation.matchId);
      return;
    }
    const pid = allocation.providerRef.pid;
    if (typeof pid === 'number' && isAlive(pid)) process.kill(pid, 'SIGTERM');
  }
}
