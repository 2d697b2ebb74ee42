import { redisKeyPrefix } from '@matchplane/config';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Worker, type Job } from 'bullmq';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import {
  ALLOCATION_RELEASE_QUEUE,
  AllocationStore,
  LIVE_ALLOCATION_STATES,
  type AllocationReleaseJobData,
} from '@matchplane/allocation';
import { AllocatorConfig } from './allocator.config';
import { isTerminalMatchState } from '@matchplane/domain';
import { MatchStore } from '@matchplane/matches';
import { MetricsRegistry } from '@matchplane/observability';
import { bullConnection, runInTransaction } from '@matchplane/persistence';
import { AllocationProvider } from './providers/allocation.provider';

/** Releases at once are few (matches that ended without their server reporting). */
const RELEASE_CONCURRENCY = 4;

export type ReleaseOutcome = 'released' | 'already-released' | 'match-live';

/**
 * Gives the server of an ended match back to its provider, as reconciliation asks
 * (ALLOCATION_RELEASE_QUEUE): Agones deletes the GameServer, local stops the launched process,
 * static returns the server to the pool (the live row is the lease). In one transaction holding the
 * allocation row: re-read it (a row no longer live was released meanwhile: nothing to do), check
 * the match has ended, release at the provider (idempotent: a server already gone is fine), and
 * only then mark the row RELEASED, so a failed release leaves it live and the next reconciliation
 * pass asks again. Failures are counted (`allocation_releases_total{outcome="failed"}`).
 */
@Injectable()
export class AllocationReleaseWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AllocationReleaseWorker.name);
  private worker?: Worker<AllocationReleaseJobData, ReleaseOutcome>;
  private readonly releases: Counter;

  constructor(
    private readonly dataSource: DataSource,
    private readonly allocations: AllocationStore,
    private readonly matches: MatchStore,
    private readonly provider: AllocationProvider,
    @Inject(AllocatorConfig) private readonly config: AllocatorConfig,
    @Inject(MetricsRegistry) registry: MetricsRegistry,
  ) {
    this.releases = new Counter({
      name: 'allocation_releases_total',
      help: 'Servers of ended matches released at their provider on request of reconciliation, by outcome (released, failed)',
      labelNames: ['provider', 'outcome'],
      registers: [registry],
    });
  }

  onApplicationBootstrap(): void {
    this.worker = new Worker<AllocationReleaseJobData, ReleaseOutcome>(
      ALLOCATION_RELEASE_QUEUE,
      (job) => this.process(job),
      {
        connection: bullConnection(this.config),
        prefix: redisKeyPrefix(this.config),
        concurrency: RELEASE_CONCURRENCY,
      },
    );
    this.worker.on('error', (error) => this.logger.warn(`release worker: ${error.message}`));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.worker?.close();
  }

  async release(matchId: string): Promise<ReleaseOutcome> {
    try {
      const outcome = await runInTransaction(this.dataSource, async (manager) => {
        const allocation = await this.allocations.load(manager, matchId, { forUpdate: true });
        if (!allocation || !LIVE_ALLOCATION_STATES.includes(allocation.state)) {
          return 'already-released';
        }
        const match = await this.matches.load(manager, matchId);
        if (match && !isTerminalMatchState(match.state)) return 'match-live';
        if (allocation.provider !== this.provider.name) {
          throw new Error(
            `it was allocated by provider ${allocation.provider}, and this allocator runs ${this.provider.name}`,
          );
        }
        await this.provider.release(allocation);
        await this.allocations.release(manager, matchId, { state: 'RELEASED', now: new Date() });
        this.logger.log(`released server ${allocation.serverId} of ended match ${matchId}`);
        return 'released';
      });
      if (outcome === 'released') this.releases.inc({ provider: this.provider.name, outcome });
      if (outcome === 'match-live') {
        this.logger.warn(`release of match ${matchId} asked while the match is live; left alone`);
      }
      return outcome;
    } catch (error) {
      this.releases.inc({ provider: this.provider.name, outcome: 'failed' });
      this.logger.warn(
        `release of the server of match ${matchId} failed (reconciliation asks again): ${error instanceof Error ? error.message : String(error)}`,
      );
      throw error;
    }
  }

  private process(job: Job<AllocationReleaseJobData>): Promise<ReleaseOutcome> {
    return this.release(job.data.matchId);
  }
}
