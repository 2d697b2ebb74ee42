import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AllocatorConfig } from './allocator.config';
import {
  AllocationStore,
  LIVE_ALLOCATION_STATES,
  newWorkloadCredential,
  RosterStore,
  ServerBusyError,
  type AllocationRecord,
  type DurableParticipant,
  type PublishOutcome,
} from '@matchplane/allocation';
import {
  isTerminalMatchState,
  rankFallbackRegions,
  type MatchFailureReason,
  type MatchSnapshot,
} from '@matchplane/domain';
import { canonicalRosterOrder, JoinTokenSigner } from '@matchplane/join-auth';
import { MatchLifecycle, MatchStore } from '@matchplane/matches';
import { runInTransaction } from '@matchplane/persistence';
import { TicketStore } from '@matchplane/tickets';
import { AllocationMetrics } from './allocation.metrics';
import { AllocationStepHook } from './allocation-step.hook';
import { AllocationProvider, NoCapacityError } from './providers/allocation.provider';

export type AllocationOutcome =
  'allocated' | 'already-allocated' | 'not-allocating' | 'no-match' | 'participant-left';

function isLive(allocation: AllocationRecord): boolean {
  return LIVE_ALLOCATION_STATES.includes(allocation.state);
}

/**
 * Gets a match its game server, in steps that each take effect durably before the next starts
 * and each of which a retry after a crash skips or redoes safely:
 *
 * 1. allocate: the provider's answer (idempotent by match id);
 * 2. persist: the allocation with its endpoint and the hash of this run's fresh workload
 *    credential, before anything else is done with it (a resumed run that finds its allocation
 *    only replaces the credential);
 * 3. publish: one join token per durable participant and the signed manifest over them, in one
 *    statement that re-checks the participants (an existing roster stands);
 * 4. hand off: the credential to the server, then marked as handed off.
 *
 * Each step is one statement (no explicit transaction): under a burst the allocator's cost is
 * its round trips. The credential is issued on every run that has not handed one off, so a crash
 * between storing a hash and handing its secret over costs a re-issue, never a server holding a
 * credential nobody can check. The hand-off comes last, so a server that registers always finds
 * its roster.
 */
@Injectable()
export class AllocationService {
  private readonly logger = new Logger(AllocationService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly matches: MatchStore,
    private readonly lifecycle: MatchLifecycle,
    private readonly allocations: AllocationStore,
    private readonly rosters: RosterStore,
    private readonly tickets: TicketStore,
    private readonly provider: AllocationProvider,
    private readonly signer: JoinTokenSigner,
    private readonly hook: AllocationStepHook,
    private readonly metrics: AllocationMetrics,
    @Inject(AllocatorConfig) private readonly config: AllocatorConfig,
  ) {}

  async run(matchId: string): Promise<AllocationOutcome> {
    const manager = this.dataSource.manager;
    const timed = this.metrics.timed.bind(this.metrics);
    // Two statements at once (two pooled connections): one round trip of latency, not two.
    const [match, progress] = await timed('load', () =>
      Promise.all([
        this.matches.load(manager, matchId),
        this.allocations.progress(manager, matchId),
      ]),
    );
    if (!match) return 'no-match';
    let allocation = progress.allocation;
    if (match.state !== 'ALLOCATING') {
      // A match that ended while it was being allocated gives its server back.
      if (isTerminalMatchState(match.state) && allocation && isLive(allocation)) {
        await this.releaseServer(allocation, 'RELEASED');
      }
      return 'not-allocating';
    }
    if (allocation?.handedOffAt) return 'already-allocated';
    if (progress.durable.length !== match.participants.length) {
      await this.fail(match.id, 'PARTICIPANT_LEFT');
      return 'participant-left';
    }

    const credential = newWorkloadCredential();
    if (!allocation) {
      allocation = await this.allocate(match, credential.hash);
    } else if (!isLive(allocation)) {
      throw new Error(`match ${matchId} is ALLOCATING but its allocation is ${allocation.state}`);
    } else {
      await timed('persist', () =>
        this.allocations.replaceCredential(manager, matchId, credential.hash),
      );
    }
    await this.hook.reached('persisted', matchId);

    if (!progress.published) {
      const published = await timed('publish', () =>
        this.publish(match, allocation, progress.durable),
      );
      if (published === 'participants-changed') {
        await this.fail(match.id, 'PARTICIPANT_LEFT');
        return 'participant-left';
      }
    }
    await this.hook.reached('published', matchId);

    const learnt = await timed('hand-off', () =>
      this.provider.handOff({
        allocation,
        credential: credential.secret,
        apiUrl: this.config.ALLOCATOR_API_URL,
      }),
    );
    const marked = await timed('mark', () =>
      this.allocations.markHandedOff(manager, matchId, credential.hash, learnt),
    );
    if (!marked)
      throw new Error(`the credential of match ${matchId} was replaced during its hand-off`);
    await this.hook.reached('handed-off', matchId);
    this.logger.log(
      `match ${matchId} allocated ${allocation.serverId} at ${allocation.endpoint} in ${allocation.region ?? match.region}`,
    );
    return 'allocated';
  }

  /**
   * The last attempt failed: the match fails with ALLOCATION_FAILED (its tickets requeued at their
   * priority, MatchLifecycle's rule) and its server, if it got one, is given back.
   */
  async giveUp(matchId: string, error: unknown): Promise<void> {
    const why = error instanceof Error ? error.message : String(error);
    this.logger.error(`allocation of match ${matchId} failed for good: ${why}`);
    await this.fail(matchId, 'ALLOCATION_FAILED');
  }

  /**
   * A server in the match's region; when that region has no free server, with
   * ALLOCATION_REGION_FALLBACK=nearest and a provider configured per region, one in the next-best
   * region for the match's players ({@link fallbackRegions}), counted per (from, to). Nowhere
   * free: NoCapacityError, so the attempt is retried and the last one fails the match.
   */
  private async allocate(match: MatchSnapshot, credentialHash: Buffer): Promise<AllocationRecord> {
    try {
      return await this.allocateIn(match, match.region, credentialHash);
    } catch (error) {
      const regions = this.provider.regions;
      if (
        !(error instanceof NoCapacityError) ||
        this.config.ALLOCATION_REGION_FALLBACK === 'none' ||
        regions === undefined
      ) {
        throw error;
      }
      const fallbacks = await this.fallbackRegions(match, regions);
      for (const region of fallbacks) {
        try {
          const allocation = await this.allocateIn(match, region, credentialHash);
          this.metrics.fellBack(match.region, region);
          this.logger.warn(
            `match ${match.id}: region ${match.region} has no free server, allocated in ${region}`,
          );
          return allocation;
        } catch (fallbackError) {
          if (!(fallbackError instanceof NoCapacityError)) throw fallbackError;
        }
      }
      this.metrics.fellBack(match.region, 'none');
      throw new NoCapacityError(
        `${error.message}; no fallback region had a free server (tried ${fallbacks.join(', ') || 'none'} of those within ${this.config.ALLOCATION_FALLBACK_MAX_RTT_MS} ms of every player)`,
      );
    }
  }

  /**
   * The regions the provider serves that every player of the match measured within
   * ALLOCATION_FALLBACK_MAX_RTT_MS, best first. The RTTs are the tickets' predictions the matcher
   * placed the match by (a matched ticket keeps them), read only when a fallback is needed.
   */
  private async fallbackRegions(
    match: MatchSnapshot,
    served: readonly string[],
  ): Promise<string[]> {
    const tickets = await this.tickets.loadMany(
      this.dataSource.manager,
      match.participants.map((participant) => participant.ticketId),
    );
    return rankFallbackRegions(
      [...tickets.values()].map((ticket) => ticket.predictedRtt),
      {
        matchRegion: match.region,
        maxWorstRttMs: this.config.ALLOCATION_FALLBACK_MAX_RTT_MS,
        served,
      },
    ).map((option) => option.region);
  }

  private async allocateIn(
    match: MatchSnapshot,
    region: string,
    credentialHash: Buffer,
  ): Promise<AllocationRecord> {
    const busy = new Set<string>();
    for (;;) {
      const server = await this.metrics.timed('allocate', () =>
        this.provider.allocate({ matchId: match.id, mode: match.mode, region }, busy),
      );
      await this.hook.reached('allocated', match.id);
      try {
        return await this.metrics.timed('persist', () =>
          this.allocations.record(
            this.dataSource.manager,
            match.id,
            this.provider.name,
            { ...server, region: server.region ?? region },
            credentialHash,
          ),
        );
      } catch (error) {
        // Another match leased that server between our read and our insert: try the next one.
        if (error instanceof ServerBusyError && busy.size < 10_000) {
          busy.add(error.serverId);
          continue;
        }
        throw error;
      }
    }
  }

  /**
   * Signs one join token per durable participant (as read at the start of the run) and the
   * manifest over them, and publishes them; the store re-checks in the same statement that those
   * are still exactly the durable participants.
   */
  private publish(
    match: MatchSnapshot,
    allocation: AllocationRecord,
    durable: readonly DurableParticipant[],
  ): Promise<PublishOutcome> {
    const issuedAt = Date.now();
    const expiresAt = issuedAt + this.config.JOIN_TOKEN_TTL_MS;
    const entries = canonicalRosterOrder(
      durable.map((participant) => ({
        playerId: participant.playerId,
        token: this.signer.sign({
          matchId: match.id,
          playerId: participant.playerId,
          serverId: allocation.serverId,
          endpoint: allocation.endpoint,
          issuedAt,
          expiresAt,
        }),
      })),
    );
    const manifest = this.signer.signRoster({
      matchId: match.id,
      serverId: allocation.serverId,
      entries,
      issuedAt,
    });
    return this.rosters.publish(this.dataSource.manager, {
      manifest,
      assignments: entries.map((entry) => ({
        matchId: match.id,
        playerId: entry.playerId,
        serverId: allocation.serverId,
        endpoint: allocation.endpoint,
        joinToken: entry.token,
        keyId: manifest.keyId,
        issuedAt: new Date(issuedAt),
        expiresAt: new Date(expiresAt),
      })),
    });
  }

  /** Fails a still-live match with its allocation in one transaction, then releases the server. */
  private async fail(matchId: string, reason: MatchFailureReason): Promise<void> {
    const outcome = await runInTransaction(this.dataSource, async (manager, unit) => {
      const match = await this.matches.load(manager, matchId);
      const allocation = await this.allocations.load(manager, matchId, { forUpdate: true });
      if (allocation && isLive(allocation)) {
        await this.allocations.release(manager, matchId, { state: 'FAILED', now: new Date() });
      }
      if (!match || isTerminalMatchState(match.state)) return { allocation };
      const ending = await this.lifecycle.fail(unit, matchId, reason, {
        expectedRevision: match.revision,
      });
      return { allocation, ending };
    });
    if (outcome.allocation && isLive(outcome.allocation)) {
      await this.provider.release(outcome.allocation).catch((error: unknown) => {
        this.logger.warn(
          `could not release ${outcome.allocation?.serverId ?? '?'}: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
    }
  }

  private async releaseServer(
    allocation: AllocationRecord,
    state: 'RELEASED' | 'FAILED',
  ): Promise<void> {
    const released = await runInTransaction(this.dataSource, (m) =>
      this.allocations.release(m, allocation.matchId, { state, now: new Date() }),
    );
    if (released) await this.provider.release(allocation);
  }
}
