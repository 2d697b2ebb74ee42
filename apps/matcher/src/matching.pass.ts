import { Inject, Injectable, Logger } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { MatcherConfig } from './matcher.config';
import {
  candidateRejection,
  measuredRegions,
  noRegion,
  selectBackfill,
  type BackfillNeed,
  type MatchCandidate,
  type MatchingFunction,
  type ModeRules,
} from '@matchplane/domain';
import { DataSource } from 'typeorm';
import {
  CandidateProjection,
  QueueControls,
  QueueWaitEstimates,
  TicketStore,
  type ProjectedCandidate,
} from '@matchplane/tickets';
import { BackfillStore } from '@matchplane/matches';
import { PlayerBlocks } from '@matchplane/players';
import { ActiveRuleSet } from '@matchplane/rule-sets';
import {
  MatchCommitter,
  type BackfillOutcome,
  type CommittedBackfill,
  type CommittedMatch,
  type DroppedMatch,
} from './match-committer';
import { MatcherMetrics } from './matcher.metrics';
import { MATCHER_RULES, MATCHING_FUNCTION, type MatcherRules } from './matching-function';
import { WHOLE_MODE } from '@matchplane/config';
import { LeaseLostError, type CommitSession } from './mode-lease';
import { screenProposals } from './proposal-screen';
import { ShadowMatching } from './shadow-matching';
import { applyQueueHolds } from './queue-holds';
import { TicketExplanations, type Explained } from './ticket-explanations';
import { RuleSetRecheck } from './rule-set-recheck';

export interface PassReport {
  readonly mode: string;
  /** The shard passed, when the session named one. */
  readonly shard?: string;
  /** The `now` the candidates were screened and matched at. */
  readonly evaluatedAt: Date;
  /** Candidates read from the projection (the shard's sets, or the whole mode's index). */
  readonly read: number;
  /** Candidates of the shard in what was read, and those that were valid and given to the matching function. */
  readonly candidates: number;
  readonly matchable: number;
  readonly proposed: number;
  readonly committed: readonly CommittedMatch[];
  readonly dropped: readonly DroppedMatch[];
  /** Backfill requests filled before matching (their players left the pool). */
  readonly backfilled: readonly CommittedBackfill[];
  /** Proposals the screen refused (a matching function bug), with why. */
  readonly rejected: number;
  /** The pass stopped before committing everything: the lease was lost or a batch failed. */
  readonly aborted?: string;
  readonly durationMs: number;
}

/**
 * One matching pass of one shard of a mode (the whole mode when it is not split), run by the shard's
 * lease holder: read the projection, keep the shard's valid candidates, run the bound matching function, explain everyone left out, commit the
 * proposals in batches under the lease. What follows each commit (the relay's wake-up, the
 * matched tickets' removal from the projection, their explanations' clearing) is registered by the
 * writers in the lease transaction's unit of work; the pass records the waits and metrics.
 */
@Injectable()
export class MatchingPass {
  private readonly logger = new Logger(MatchingPass.name);
  /** The modes this matcher holds leases of: its environment's (a rule set keeps them). */
  private readonly initialModes: readonly string[];

  constructor(
    private readonly projection: CandidateProjection,
    private readonly committer: MatchCommitter,
    private readonly backfills: BackfillStore,
    private readonly explanations: TicketExplanations,
    private readonly metrics: MatcherMetrics,
    private readonly tickets: TicketStore,
    private readonly waits: QueueWaitEstimates,
    private readonly queueControls: QueueControls,
    private readonly dataSource: DataSource,
    private readonly shadow: ShadowMatching,
    private readonly blocks: PlayerBlocks,
    private readonly ruleSet: ActiveRuleSet,
    private readonly recheck: RuleSetRecheck,
    @Inject(MATCHING_FUNCTION) private readonly matchingFunction: MatchingFunction,
    @Inject(MATCHER_RULES) rules: MatcherRules,
    @Inject(MatcherConfig) private readonly config: MatcherConfig,
  ) {
    this.initialModes = rules.map((rule) => rule.mode);
  }

  get modes(): string[] {
    return [...this.initialModes];
  }

  /** `signal`: shutdown; the pass then stops between commit batches. */
  async run(session: CommitSession, signal?: AbortSignal): Promise<PassReport> {
    const { mode } = session;
    // The active rule set's, read once per pass: a version activated meanwhile counts from the next.
    const active = this.ruleSet.current();
    const rules = active.rulesByMode.get(mode);
    if (!rules) throw new Error(`no rules for mode ${mode}`);
    const started = performance.now();
    const now = new Date();
    // A shard's pass reads only its shard's set (and the unsharded one); `select` then keeps
    // what it owns and, for a region-group shard, only the group's regions.
    const shard = session.shard;
    const read = await this.projection.candidates(mode, shard?.name);
    this.metrics.candidatesRead(mode, shard?.name ?? WHOLE_MODE, read.length);
    const projected = shard ? read.flatMap((c) => shard.select(c) ?? []) : read;
    const screened = this.screenCandidates(projected, now);
    const { explained, byRegion } = screened;
    // Operator holds: a paused mode matches nobody; paused and draining regions get no new match.
    const controls = await this.queueControls.list(this.dataSource.manager);
    // Tickets queued under an earlier version that this one no longer takes end, not wait.
    const poolName = `${mode}/${shard?.name ?? WHOLE_MODE}`;
    const fitting = await this.recheck.keepFitting(poolName, active, mode, screened.matchable, now);
    const { pool: notHeld, held } = applyQueueHolds(controls, mode, fitting);
    explained.push(...held);
    const matchable = await this.withBlockLists(notHeld);
    const seen = new Map(matchable.map((candidate) => [candidate.ticketId, candidate]));

    // Running matches short of players first: what fills them never reaches the function.
    const backfilled: CommittedBackfill[] = [];
    let pool = matchable;
    let aborted: string | undefined;
    try {
      pool = await this.backfill(session, matchable, seen, rules, now, backfilled);
    } catch (error) {
      aborted =
        error instanceof LeaseLostError
          ? 'lease lost'
          : `backfill failed: ${(error as Error).message}`;
    }

    const formation = this.matchingFunction(pool, [rules], now);
    this.shadow.compare(mode, pool, formation, now);
    const { accepted, rejected } = screenProposals(formation.matches, rules, seen, now);
    for (const { proposal, problem } of rejected) {
      this.metrics.droppedMatch(mode, 'invalid_proposal');
      this.logger.warn(
        `matching function proposed an invalid ${mode} match in ${proposal.region}: ${problem}`,
      );
    }
    // Before the commits, so that a player sees why as soon as the pass knows.
    explained.push(
      ...formation.unmatched.map(({ ticketId, reason }) => ({
        ticketId,
        code: reason.code,
        message: reason.message,
      })),
    );
    await this.explanations.explain(explained, now).catch((error: Error) => {
      this.logger.warn(`explanations of ${mode} not written: ${error.message}`);
    });

    const committed: CommittedMatch[] = [];
    const dropped: DroppedMatch[] = [];
    for (const batch of aborted ? [] : chunks(accepted, this.config.MATCHER_COMMIT_BATCH)) {
      if (signal?.aborted) {
        aborted = 'shutting down';
        break;
      }
      try {
        const outcome = await this.committer.commit(session, batch, seen, active.version);
        committed.push(...outcome.committed);
        dropped.push(...outcome.dropped);
        await this.afterCommit(mode, outcome.committed);
        for (const drop of outcome.dropped) this.metrics.droppedMatch(mode, drop.reason);
        await this.reproject(outcome.dropped);
      } catch (error) {
        // Nothing of this batch committed; what is left waits for the next pass (or holder).
        aborted =
          error instanceof LeaseLostError
            ? 'lease lost'
            : `commit failed: ${(error as Error).message}`;
        break;
      }
    }
    const durationMs = performance.now() - started;
    this.metrics.pass(
      mode,
      shard?.name ?? WHOLE_MODE,
      durationMs / 1_000,
      matchable.length,
      byRegion,
    );
    return {
      mode,
      ...(shard ? { shard: shard.name } : {}),
      evaluatedAt: now,
      read: read.length,
      candidates: projected.length,
      matchable: matchable.length,
      proposed: formation.matches.length,
      committed,
      dropped,
      backfilled,
      rejected: rejected.length,
      durationMs,
      ...(aborted ? { aborted } : {}),
    };
  }

  /**
   * Fills the mode's OPEN backfill requests (one read per pass) from `matchable`, a request per
   * transaction; returns the candidates left for matching. A pick that could not be committed
   * leaves its request OPEN and its candidates out of this pass (re-projected from their rows).
   */
  private async backfill(
    session: CommitSession,
    matchable: readonly MatchCandidate[],
    seen: ReadonlyMap<string, MatchCandidate>,
    rules: ModeRules,
    now: Date,
    backfilled: CommittedBackfill[],
  ): Promise<MatchCandidate[]> {
    let needs: BackfillNeed[];
    try {
      needs = await this.backfills.openNeeds(
        this.dataSource.manager,
        rules.mode,
        this.config.MATCHER_COMMIT_BATCH,
      );
    } catch (error) {
      // Backfill waits for the next pass; forming new matches does not wait for it.
      this.logger.warn(
        `open backfill requests of ${rules.mode} not read: ${(error as Error).message}`,
      );
      return [...matchable];
    }
    if (needs.length === 0) return [...matchable];
    const { picks, remaining } = selectBackfill(needs, matchable, rules, now);
    for (const pick of picks) {
      let outcome: BackfillOutcome;
      try {
        outcome = await this.committer.commitBackfill(session, pick, seen);
      } catch (error) {
        if (error instanceof LeaseLostError) throw error;
        // One request that cannot be written must not stop the mode's matching: it stays OPEN.
        this.logger.warn(
          `backfill ${pick.need.requestId} of match ${pick.need.matchId} not written: ${(error as Error).message}`,
        );
        continue;
      }
      if ('committed' in outcome) {
        backfilled.push(outcome.committed);
        this.metrics.backfilled(rules.mode);
      } else if (outcome.ticketId) {
        await this.tickets.reproject(this.dataSource.manager, [outcome.ticketId]);
      }
    }
    return remaining;
  }

  /**
   * Each candidate with the players it must not meet (block lists) and would rather not (avoid
   * lists), both directions, read every pass so that a change counts from the next pass on,
   * whenever the ticket was queued.
   */
  private async withBlockLists(candidates: MatchCandidate[]): Promise<MatchCandidate[]> {
    const { blocked, avoided } = await this.blocks.listsAround(candidates.map((c) => c.playerId));
    if (blocked.size === 0 && avoided.size === 0) return candidates;
    return candidates.map((candidate) => {
      const blockedPlayerIds = blocked.get(candidate.playerId);
      const avoidedPlayerIds = avoided.get(candidate.playerId);
      if (!blockedPlayerIds && !avoidedPlayerIds) return candidate;
      return {
        ...candidate,
        ...(blockedPlayerIds ? { blockedPlayerIds } : {}),
        ...(avoidedPlayerIds ? { avoidedPlayerIds } : {}),
      };
    });
  }

  /** The candidates the matching function may see, and an explanation for each one it may not. */
  private screenCandidates(projected: readonly ProjectedCandidate[], now: Date) {
    const matchable: MatchCandidate[] = [];
    const explained: Explained[] = [];
    const byRegion = new Map<string, number>();
    const timeoutMs = this.config.TICKET_HEARTBEAT_TIMEOUT_MS;
    for (const candidate of projected) {
      const rejection = candidateRejection(candidate, now, timeoutMs);
      if (rejection === null) {
        matchable.push(toMatchCandidate(candidate));
        for (const region of measuredRegions(candidate.predictedRtt)) {
          byRegion.set(region, (byRegion.get(region) ?? 0) + 1);
        }
      } else if (rejection === 'HEARTBEAT_STALE') {
        explained.push({
          ticketId: candidate.ticketId,
          code: rejection,
          message: `no heartbeat for over ${Math.round(timeoutMs / 1_000)} s: the ticket is not matched until it heartbeats again`,
        });
      } else if (rejection === 'NO_REGION') {
        const reason = noRegion();
        explained.push({
          ticketId: candidate.ticketId,
          code: reason.code,
          message: reason.message,
        });
      }
      // NOT_SEARCHING: the projection lags a change that already left the queue; nothing to say.
    }
    return { matchable, explained, byRegion };
  }

  private async afterCommit(mode: string, committed: readonly CommittedMatch[]): Promise<void> {
    // The relay's wake-up, the projection and the explanations were registered by the writers in
    // the commit's unit of work and ran once it committed.
    if (committed.length === 0) return;
    const at = new Date();
    const records: Promise<void>[] = [];
    for (const match of committed) {
      const waitsMs = match.tickets.map((ticket) =>
        Math.max(0, at.getTime() - ticket.enqueuedAt.getTime()),
      );
      this.metrics.committed(
        mode,
        waitsMs.map((wait) => wait / 1_000),
      );
      records.push(this.waits.recordMatched(mode, match.proposal.region, waitsMs, at));
    }
    await Promise.all(records);
  }

  /**
   * The member that made a match drop is re-projected from its row: a candidate the projection
   * still shows after it left the queue (a post-commit update that never reached Redis) would
   * otherwise be proposed, and its partners dropped with it, at every pass until the next rebuild.
   */
  private async reproject(dropped: readonly DroppedMatch[]): Promise<void> {
    await this.tickets.reproject(
      this.dataSource.manager,
      dropped.flatMap((drop) => (drop.ticketId ? [drop.ticketId] : [])),
    );
  }
}

function toMatchCandidate(candidate: ProjectedCandidate): MatchCandidate {
  return {
    ticketId: candidate.ticketId,
    playerId: candidate.playerId,
    mode: candidate.mode,
    rating: candidate.rating,
    ...(candidate.ratingSigma === undefined ? {} : { ratingSigma: candidate.ratingSigma }),
    // validCandidate established it is an object with a measured region; other entries are
    // ignored by the matching function as "not measured".
    predictedRtt: candidate.predictedRtt as Readonly<Record<string, number>>,
    enqueuedAt: candidate.enqueuedAt,
    attributes: candidate.attributes,
    ...(candidate.party ? { party: candidate.party } : {}),
  };
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size)
    out.push(items.slice(start, start + size));
  return out;
}
