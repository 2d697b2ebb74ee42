import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AllocationStore, RejoinTokenStore } from '@matchplane/allocation';
import { JoinTokenSigner } from '@matchplane/join-auth';
import { MatchPresenceService, MatchStore } from '@matchplane/matches';
import { runInTransaction } from '@matchplane/persistence';
import { AllocatorConfig } from './allocator.config';

/** What a rejoin-token job did. */
export type RejoinTokenOutcome = 'issued' | 'skipped';

/**
 * Signs a fresh join token for a player who left a running match (the active key, the match's
 * server and endpoint, JOIN_TOKEN_TTL_MS from now) and keeps it beside the assignment, which then
 * serves it: the first token may have expired by the time the player comes back. Skipped when
 * the match is over or the player is no longer away (came back, or abandoned).
 */
@Injectable()
export class RejoinTokenIssuer {
  constructor(
    private readonly dataSource: DataSource,
    private readonly matches: MatchStore,
    private readonly presence: MatchPresenceService,
    private readonly allocations: AllocationStore,
    private readonly tokens: RejoinTokenStore,
    private readonly signer: JoinTokenSigner,
    @Inject(AllocatorConfig) private readonly config: AllocatorConfig,
  ) {}

  run(matchId: string, playerId: string): Promise<RejoinTokenOutcome> {
    return runInTransaction(this.dataSource, async (manager) => {
      const match = await this.matches.load(manager, matchId);
      const away = await this.presence.presenceOf(manager, matchId, playerId);
      if (match?.state !== 'IN_PROGRESS' || away?.presence !== 'LEFT') return 'skipped';
      const allocation = await this.allocations.load(manager, matchId);
      if (allocation?.state !== 'ALLOCATED' || allocation.endpoint === undefined) return 'skipped';
      const { serverId, endpoint } = allocation;
      const seat = { matchId, playerId, serverId, endpoint };
      const issued = this.signer.issue(seat, Date.now(), this.config.JOIN_TOKEN_TTL_MS);
      await this.tokens.save(manager, { matchId, playerId, ...issued });
      return 'issued';
    });
  }
}
