import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AllocatorConfig } from '@matchplane/config';
import {
  AllocationStore,
  LIVE_ALLOCATION_STATES,
  newWorkloadCredential,
  RosterStore,
  ServerBusyError,
  type AllocationRecord,
} from '@matchplane/allocation';
import {
  isTerminalMatchState,
  type MatchFailureReason,
  type MatchSnapshot,
} from '@matchplane/domain';
import { canonicalRosterOrder, JoinTokenSigner } from '@matchplane/join-auth';
import { MatchLifecycle, MatchStore } from '@matchplane/matches';
import { runInTransaction } from '@matchplane/persistence';
import { AllocationMetrics } from './allocation.metrics';
import { AllocationStepHook } from './allocation-step.hook';
import { AllocationProvider } from './providers/allocation.provider';

export type AllocationOutcome =
  'allocated' | 'already-allocated' | 'not-allocating' | 'no-match' | 'participant-left';

/** A participant's ticket is no longer bound to the match: the roster cannot be complete. */
class ParticipantLeftError extends Error {
  constructor(matchId: string) {
    super(`a participant of match ${matchId} left before the roster was published`);
    this.name = 'ParticipantLeftError';
  }
}

function isLive(allocation: AllocationRecord): boolean {
  return LIVE_ALLOCATION_STATES.includes(allocation.state);
}

/**
 * Gets a match its game server, in steps that each take effect durably before the next starts
 * and each of which a retry after a crash skips or redoes safely:
 *
 * 1. allocate: the provider's answer (idempotent by match id);
 * 2. persist: the allocation with its endpoint, before anything else is done with it;
 * 3. credential: a fresh workload credential, its hash stored (replacing any earlier one);
 * 4. publish: one join token per durable participant and the signed manifest over them, in one
 *    transaction (an existing roster stands);
 * 5. hand off: the credential to the server, then marked as handed off.
 *
 * The credential is issued on every run that has not handed one off, so a crash between storing
 * a hash and handing its secret over costs a re-issue, never a server holding a credential
 * nobody can check. The hand-off comes last, so a server that registers always finds its roster.
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
    private readonly provider: AllocationProvider,
    private readonly signer: JoinTokenSigner,
    private readonly hook: AllocationStepHook,
    private readonly metrics: AllocationMetrics,
    @Inject(AllocatorConfig) private readonly config: AllocatorConfig,
  ) {}

  async run(matchId: string): Promise<AllocationOutcome> {
    const manager = this.dataSource.manager;
    const timed = this.metrics.timed.bind(this.metrics);
    const match = await timed('load', () => this.matches.load(manager, matchId));
    if (!match) return 'no-match';
    let allocation = await timed('load', () => this.allocations.load(manager, matchId));
    if (match.state !== 'ALLOCATING') {
      // A match that ended while it was being allocated gives its server back.
      if (isTerminalMatchState(match.state) && allocation && isLive(allocation)) {
        await this.releaseServer(allocation, 'RELEASED');
      }
      return 'not-allocating';
    }
    if (allocation?.handedOffAt) return 'already-allocated';
    const durable = await timed('load', () =>
      this.allocations.durableParticipants(manager, matchId),
    );
    if (durable.length !== match.participants.length) {
      await this.fail(match.id, 'PARTICIPANT_LEFT');
      return 'participant-left';
    }

    if (!allocation) allocation = await this.allocate(match);
    else if (!isLive(allocation)) {
      throw new Error(`match ${matchId} is ALLOCATING but its allocation is ${allocation.state}`);
    }

    const credential = newWorkloadCredential();
    await timed('credential', () =>
      runInTransaction(this.dataSource, (m) =>
        this.allocations.replaceCredential(m, matchId, credential.hash),
      ),
    );
    await this.hook.reached('credential', matchId);

    try {
      await timed('publish', () => this.publish(match, allocation));
    } catch (error) {
      if (!(error instanceof ParticipantLeftError)) throw error;
      await this.fail(match.id, 'PARTICIPANT_LEFT');
      return 'participant-left';
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
      runInTransaction(this.dataSource, async (m) => {
        if (Object.keys(learnt).length > 0)
          await this.allocations.updateProviderRef(m, matchId, learnt);
        return this.allocations.markHandedOff(m, matchId, credential.hash);
      }),
    );
    if (!marked)
      throw new Error(`the credential of match ${matchId} was replaced during its hand-off`);
    await this.hook.reached('handed-off', matchId);
    this.logger.log(`match ${matchId} allocated ${allocation.serverId} at ${allocation.endpoint}`);
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

  private async allocate(match: MatchSnapshot): Promise<AllocationRecord> {
    const busy = new Set<string>();
    for (;;) {
      const server = await this.metrics.timed('allocate', () =>
        this.provider.allocate({ matchId: match.id, mode: match.mode, region: match.region }, busy),
      );
      await this.hook.reached('allocated', match.id);
      try {
        const recorded = await this.metrics.timed('persist', () =>
          runInTransaction(this.dataSource, (m) =>
            this.allocations.record(m, match.id, this.provider.name, server),
          ),
        );
        await this.hook.reached('persisted', match.id);
        return recorded;
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

  private async publish(match: MatchSnapshot, allocation: AllocationRecord): Promise<void> {
    await runInTransaction(this.dataSource, async (manager) => {
      if (await this.rosters.isPublished(manager, match.id)) return;
      // The same query the roster and registration checks re-validate against.
      const durable = await this.allocations.durableParticipants(manager, match.id);
      if (durable.length !== match.participants.length) throw new ParticipantLeftError(match.id);
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
      await this.rosters.publish(manager, {
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
    });
  }

  /** Fails a still-live match with its allocation in one transaction, then releases the server. */
  private async fail(matchId: string, reason: MatchFailureReason): Promise<void> {
    const outcome = await runInTransaction(this.dataSource, async (manager) => {
      const match = await this.matches.load(manager, matchId);
      const allocation = await this.allocations.load(manager, matchId, { forUpdate: true });
      if (allocation && isLive(allocation)) {
        await this.allocations.release(manager, matchId, { state: 'FAILED', now: new Date() });
      }
      if (!match || isTerminalMatchState(match.state)) return { allocation };
      const ending = await this.lifecycle.fail(manager, matchId, reason, {
        expectedRevision: match.revision,
      });
      return { allocation, ending };
    });
    if (outcome.ending) await this.lifecycle.afterCommit(outcome.ending);
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
