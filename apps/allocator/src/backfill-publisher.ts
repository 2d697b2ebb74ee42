import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AllocationStore, RosterStore, type Assignment } from '@matchplane/allocation';
import { canonicalRosterOrder, JoinTokenSigner, manifestRevision } from '@matchplane/join-auth';
import { BackfillStore, MatchStore } from '@matchplane/matches';
import { runInTransaction } from '@matchplane/persistence';
import { AllocatorConfig } from './allocator.config';

/** What a backfill job did. */
export type BackfillPublishOutcome =
  /** The roster revision carrying the added players is published; the request is PUBLISHED. */
  | 'published'
  /** Nothing to do: the request is no longer MATCHED (published before, cancelled, match over). */
  | 'skipped';

/**
 * Publishes the roster revision of a filled backfill request, in one transaction under the
 * match's and the request's row locks: a join token for each added player (the active key, the
 * match's server and endpoint), the players already in keeping the tokens they hold (a token
 * does not bind to a roster, so theirs stay valid), and the manifest over the whole roster as
 * revision n + 1. `RosterStore.publish` re-checks in its statement that the revision lists exactly
 * the durable participants and is the next one; the request goes PUBLISHED with it.
 */
@Injectable()
export class BackfillPublisher {
  private readonly logger = new Logger(BackfillPublisher.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly matches: MatchStore,
    private readonly backfills: BackfillStore,
    private readonly allocations: AllocationStore,
    private readonly rosters: RosterStore,
    private readonly signer: JoinTokenSigner,
    @Inject(AllocatorConfig) private readonly config: AllocatorConfig,
  ) {}

  async run(matchId: string, requestId: string): Promise<BackfillPublishOutcome> {
    return runInTransaction(this.dataSource, async (manager, unit) => {
      const match = await this.matches.load(manager, matchId, { forUpdate: true });
      const request = await this.backfills.load(manager, requestId, { forUpdate: true });
      if (request?.state !== 'MATCHED' || match?.state !== 'IN_PROGRESS') return 'skipped';
      const allocation = await this.allocations.load(manager, matchId);
      if (allocation?.state !== 'ALLOCATED' || allocation.endpoint === undefined) {
        throw new Error(`match ${matchId} has no allocated server to backfill`);
      }
      const { endpoint, serverId } = allocation;
      const progress = await this.allocations.progress(manager, matchId);
      const signed = await this.rosters.signedRoster(manager, matchId);
      if (!signed) throw new Error(`match ${matchId} has no roster to revise`);
      // The newest revision's players keep their tokens; a durable participant it does not list
      // is one this backfill added (a dropped no-show's ticket has ended, so it is not durable).
      const tokens = new Map(signed.assignments.map((a) => [a.playerId, a.joinToken]));
      const issuedAt = Date.now();
      const added: Assignment[] = [];
      for (const { playerId } of progress.durable) {
        if (tokens.has(playerId)) continue;
        const seat = { matchId, playerId, serverId, endpoint };
        const issued = this.signer.issue(seat, issuedAt, this.config.JOIN_TOKEN_TTL_MS);
        tokens.set(playerId, issued.joinToken);
        added.push({ ...seat, ...issued });
      }
      const entries = canonicalRosterOrder(
        progress.durable.map(({ playerId }) => ({ playerId, token: tokens.get(playerId) ?? '' })),
      );
      const revision = manifestRevision(signed.manifest) + 1;
      const manifest = this.signer.signRoster({ matchId, serverId, entries, issuedAt, revision });
      const outcome = await this.rosters.publish(manager, {
        manifest,
        assignments: added,
        playerIds: entries.map((entry) => entry.playerId),
      });
      if (outcome !== 'published') {
        // A player left (or another revision won) between the reads and the insert: retried.
        throw new Error(
          `roster revision ${revision} of match ${matchId} not published: ${outcome}`,
        );
      }
      await this.backfills.transition(
        unit,
        request,
        { to: 'PUBLISHED', rosterRevision: revision },
        new Date(issuedAt),
      );
      this.logger.log(
        `match ${matchId}: roster revision ${revision} published with ${added.length} added player(s) for backfill ${requestId}`,
      );
      return 'published';
    });
  }
}
