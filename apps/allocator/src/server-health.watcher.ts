import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AllocationStore, LIVE_ALLOCATION_STATES } from '@matchplane/allocation';
import { isTerminalMatchState } from '@matchplane/domain';
import { MatchLifecycle } from '@matchplane/matches';
import { runInTransaction } from '@matchplane/persistence';
import { AllocatorConfig } from './allocator.config';
import { AllocationProvider, type UnhealthyServer } from './providers/allocation.provider';

/**
 * A provider's own health verdict (Agones marks a GameServer Unhealthy when its SDK pings stop)
 * ends its match as a silent server does: FAILED SERVER_LOST through MatchLifecycle, often sooner
 * than the heartbeat timeout. The allocation's release follows through reconciliation's
 * `finished_allocations` stage, as for any ended match. Every replica may poll: each match is
 * failed under its row lock, only while it is live and still served by that server, so a second
 * replica finds it ended and does nothing.
 */
@Injectable()
export class ServerHealthWatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ServerHealthWatcher.name);
  private readonly stopping = new AbortController();
  private loop?: Promise<void>;

  constructor(
    private readonly provider: AllocationProvider,
    private readonly lifecycle: MatchLifecycle,
    private readonly allocations: AllocationStore,
    private readonly dataSource: DataSource,
    @Inject(AllocatorConfig) private readonly config: AllocatorConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.provider.unhealthyServers || this.config.PROVIDER_HEALTH_POLL_MS === 0) return;
    this.loop = this.run();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  /** One look at the provider; answers the ids of the matches it failed. */
  async check(): Promise<string[]> {
    const unhealthy = (await this.provider.unhealthyServers?.()) ?? [];
    const failed: string[] = [];
    for (const server of unhealthy) {
      if (await this.failMatchOf(server)) failed.push(server.matchId);
    }
    return failed;
  }

  private async failMatchOf(server: UnhealthyServer): Promise<boolean> {
    return runInTransaction(this.dataSource, async (manager, unit) => {
      // The match first, as every writer of a match and its tickets locks them.
      const match = await this.lifecycle.matches.load(manager, server.matchId, { forUpdate: true });
      if (!match || isTerminalMatchState(match.state)) return false;
      const allocation = await this.allocations.load(manager, server.matchId);
      const servedBy =
        allocation?.serverId === server.serverId &&
        LIVE_ALLOCATION_STATES.includes(allocation.state);
      if (!servedBy) return false;
      await this.lifecycle.failServerLost(unit, match.id, { expectedRevision: match.revision });
      this.logger.warn(
        `server ${server.serverId} reported unhealthy by its provider: match ${match.id} FAILED SERVER_LOST`,
      );
      return true;
    });
  }

  private async run(): Promise<void> {
    const { signal } = this.stopping;
    while (!signal.aborted) {
      try {
        await this.check();
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        this.logger.warn(
          `provider health check failed, next in ${this.config.PROVIDER_HEALTH_POLL_MS} ms: ${message}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.config.PROVIDER_HEALTH_POLL_MS);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  }
}
