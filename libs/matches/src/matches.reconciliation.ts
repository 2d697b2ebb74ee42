import { Injectable, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { LiveMatchState, MatchFailureReason } from '@matchplane/domain';
import {
  cutoff,
  oneItemPerTransaction,
  ReconcilesLifecycle,
  runBoundedTransaction,
  type ReconciliationContribution,
  type ReconciliationStage,
  type StageBatch,
} from '@matchplane/persistence';
import type { MatchReconciliationOptions } from './match-reconciliation.options';
import { MatchLifecycle } from './match-lifecycle.service';
import { lockStuckMatch, stuckMatchSql, type StuckMatchFact } from './match.rows';
import { MatchesModule } from './matches.module';
import { AcceptanceTimeoutStage } from './acceptance-timeout.stage';
import { ReadyCheck } from './ready-check.service';
import { AbandonmentStage } from './abandonment.stage';
import { MatchPresenceService } from './match-presence.service';

/** A live state nothing will move a match out of once its deadline has passed, and what ends it. */
export interface StuckMatchRule {
  /** The stage's name (reconciliation_failures_total's label). */
  stage: string;
  /** Where the stage comes in a round (see ReconciliationStage.order). */
  order: number;
  /** Every case the verdicts name. */
  cases: readonly string[];
  state: LiveMatchState;
  deadlineMs(options: MatchReconciliationOptions): number;
  /** What decides the verdict (`none` when nothing does). */
  fact: StuckMatchFact;
  verdict(fact: boolean): StuckMatchVerdict;
}

export interface StuckMatchVerdict {
  reason: MatchFailureReason;
  case: string;
  /** Nobody connected: every participant is a no-show, penalised as at initial connect. */
  nobodyConnected?: true;
}

/**
 * The stuck-match rules whose facts this module owns. ALLOCATING's rule is the allocation module's
 * (whether a server was allocated is its fact, read here through its `live_allocations` view).
 */
export const STUCK_MATCH_RULES: readonly StuckMatchRule[] = [
  {
    stage: 'process_ready_matches',
    order: 21,
    cases: ['process_ready_registration_timeout'],
    state: 'PROCESS_READY',
    deadlineMs: (options) => options.allocatingTimeoutMs,
    fact: 'none',
    verdict: () => ({
      reason: 'SERVER_REGISTRATION_TIMEOUT',
      case: 'process_ready_registration_timeout',
    }),
  },
  {
    stage: 'assignment_ready_matches',
    order: 22,
    cases: ['assignment_ready_no_show', 'assignment_ready_lifecycle_timeout'],
    state: 'ASSIGNMENT_READY',
    deadlineMs: (options) => options.connectDeadlineMs,
    // The initial-connect report moves the match on; a recorded connect with the match left
    // behind is not a no-show, just a match that stalled.
    fact: 'someone_connected',
    verdict: (someoneConnected) =>
      someoneConnected
        ? { reason: 'LIFECYCLE_TIMEOUT', case: 'assignment_ready_lifecycle_timeout' }
        : { reason: 'NO_SHOW', case: 'assignment_ready_no_show', nobodyConnected: true },
  },
  {
    stage: 'in_progress_matches',
    order: 23,
    cases: ['in_progress_lifecycle_timeout'],
    state: 'IN_PROGRESS',
    deadlineMs: (options) => options.maxMatchDurationMs,
    fact: 'none',
    verdict: () => ({ reason: 'LIFECYCLE_TIMEOUT', case: 'in_progress_lifecycle_timeout' }),
  },
];

/** The claim of a rule's stuck match. */
export function stuckMatchRuleSql(rule: StuckMatchRule): string {
  return stuckMatchSql(rule.state, rule.fact);
}

/**
 * Fails matches stuck past their deadline, one short transaction per match: the claim above, then
 * MatchLifecycle.fail at the claimed revision (the match state machine, its event, and every
 * ticket moved with theirs: requeued at its original priority when the failure allows it; a match
 * nobody connected to penalises its no-shows first, as the initial-connect route does). After
 * commit the relay is woken and the tickets' candidates updated.
 */
export class StuckMatchReconciler {
  constructor(
    private readonly dataSource: DataSource,
    private readonly lifecycle: MatchLifecycle,
    private readonly options: MatchReconciliationOptions,
  ) {}

  /** One stage per rule, for the pass to take turns over. */
  stages(rules: readonly StuckMatchRule[]): ReconciliationStage[] {
    return rules.map((rule) => ({
      name: rule.stage,
      order: rule.order,
      cases: rule.cases,
      batch: (now, skip) => this.batch(rule, now, skip),
    }));
  }

  batch(rule: StuckMatchRule, now: Date, skip: ReadonlySet<string>): Promise<StageBatch> {
    return oneItemPerTransaction(
      this.dataSource,
      this.options.batchSize,
      skip,
      async (manager, unit, leftAlone, claim) => {
        const row = await lockStuckMatch(
          manager,
          rule.state,
          rule.fact,
          cutoff(now, rule.deadlineMs(this.options)),
          [...leftAlone],
        );
        if (!row) return false;
        claim(row.id);
        const verdict = rule.verdict(row.fact);
        const at = { expectedRevision: row.revision, now };
        const ending = verdict.nobodyConnected
          ? await this.lifecycle.failNobodyConnected(unit, row.id, this.options.noShowPenalty, at)
          : await this.lifecycle.fail(unit, row.id, verdict.reason, at);
        return ending ? verdict.case : false;
      },
    );
  }
}

/**
 * Backfill requests past their deadline, one transaction per batch (`FOR UPDATE SKIP LOCKED`, so
 * replicas and the live routes never act twice): an OPEN one EXPIRES (TIMED_OUT); a filled one the
 * allocator never published or the server never accepted is CANCELLED (NOT_ACCEPTED) and the
 * players it added go back to the queue with their priority.
 */
export class OverdueBackfillReconciler {
  static readonly CASES = ['backfill_expired', 'backfill_not_accepted'] as const;

  constructor(
    private readonly dataSource: DataSource,
    private readonly lifecycle: MatchLifecycle,
    private readonly options: MatchReconciliationOptions,
  ) {}

  stage(): ReconciliationStage {
    return {
      name: 'overdue_backfills',
      order: 24,
      cases: OverdueBackfillReconciler.CASES,
      batch: (now) => this.batch(now),
    };
  }

  async batch(now: Date): Promise<StageBatch> {
    return runBoundedTransaction(this.dataSource, async (manager, unit) => {
      const overdue = await this.lifecycle.backfills.lockOverdue(
        manager,
        now,
        this.options.batchSize,
      );
      const result: StageBatch = { reconciled: {}, taken: overdue.length, failures: [] };
      for (const request of overdue) {
        let ended: string;
        if (request.state === 'OPEN') {
          await this.lifecycle.backfills.transition(
            unit,
            request,
            { to: 'EXPIRED', reason: 'TIMED_OUT' },
            now,
          );
          ended = 'backfill_expired';
        } else {
          await this.lifecycle.cancelBackfill(unit, request, 'NOT_ACCEPTED', now);
          ended = 'backfill_not_accepted';
        }
        result.reconciled[ended] = (result.reconciled[ended] ?? 0) + 1;
      }
      return result;
    });
  }
}

/** Matches' reconciliation (the stuck-match rules above), for the maintenance app to discover. */
@ReconcilesLifecycle()
@Injectable()
export class MatchReconciliation implements ReconciliationContribution<MatchReconciliationOptions> {
  constructor(
    private readonly dataSource: DataSource,
    private readonly lifecycle: MatchLifecycle,
    private readonly presence: MatchPresenceService,
  ) {}

  reconciliationStages(options: MatchReconciliationOptions): readonly ReconciliationStage[] {
    return [
      new AcceptanceTimeoutStage(
        this.dataSource,
        this.lifecycle,
        new ReadyCheck(this.dataSource, this.lifecycle),
        options,
      ),
      ...new StuckMatchReconciler(this.dataSource, this.lifecycle, options).stages(
        STUCK_MATCH_RULES,
      ),
      new OverdueBackfillReconciler(this.dataSource, this.lifecycle, options).stage(),
      new AbandonmentStage(this.dataSource, this.lifecycle, this.presence, options),
    ];
  }
}

@Module({ imports: [MatchesModule], providers: [MatchReconciliation] })
export class MatchReconciliationModule {}
