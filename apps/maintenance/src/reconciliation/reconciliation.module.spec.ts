import { loadConfig } from '@matchplane/config';
import { MaintenanceConfig } from '../maintenance.config';
import { MATCH_STATES, isTerminalMatchState } from '@matchplane/domain';
import { ALLOCATING_MATCH_RULE } from '@matchplane/allocation';
import { STUCK_MATCH_RULES, stuckMatchRuleSql } from '@matchplane/matches';
import type { ReconciliationContribution, ReconciliationStage } from '@matchplane/persistence';
import { assembleReconciliationStages } from './reconciliation-stage.registry';
import { ReconciliationModule, reconciliationOptions } from './reconciliation.module';
import { describeReconciliationPass } from './reconciliation.scheduler';

const RULES = [ALLOCATING_MATCH_RULE, ...STUCK_MATCH_RULES];

describe(ReconciliationModule.name, () => {
  it('takes its settings from the configuration, the heartbeat timeout from the shared one', () => {
    const config = loadConfig(MaintenanceConfig, {
      TICKET_HEARTBEAT_TIMEOUT_MS: '45000',
      RECONCILE_CONNECT_DEADLINE_MS: '90000',
      NO_SHOW_COOLDOWN_BASE_SECONDS: '30',
    });
    expect(reconciliationOptions(config)).toEqual({
      batchSize: 100,
      passBudgetMs: 10_000,
      heartbeatTimeoutMs: 45_000,
      allocatingTimeoutMs: 60_000,
      connectDeadlineMs: 90_000,
      maxMatchDurationMs: 7_200_000,
      serverHeartbeatTimeoutMs: 10_000,
      searchTimeoutsMs: { duel: 600_000, squad: 600_000 },
      noShowPenalty: { baseMs: 30_000, capMs: 3_600_000, decayMs: 86_400_000 },
    });
  });

  it('has one stuck-match rule, with its own stage, for every live match state', () => {
    // AWAITING_ACCEPTANCE ends at its own per-match deadline: AcceptanceTimeoutStage's, not a rule's.
    const live = MATCH_STATES.filter(
      (state) => !isTerminalMatchState(state) && state !== 'AWAITING_ACCEPTANCE',
    );
    expect(MATCH_STATES).toContain('AWAITING_ACCEPTANCE');
    expect(RULES.map((rule) => rule.state)).toEqual(live);
    expect(new Set(RULES.map((rule) => rule.stage)).size).toBe(live.length);
    for (const rule of RULES) {
      expect(rule.cases).toEqual(
        expect.arrayContaining([rule.verdict(false).case, rule.verdict(true).case]),
      );
      expect(stuckMatchRuleSql(rule)).toMatch(/LIMIT 1\s+FOR UPDATE OF m SKIP LOCKED$/);
    }
  });

  describe(assembleReconciliationStages.name, () => {
    const options = reconciliationOptions(loadConfig(MaintenanceConfig, {}));
    const stage = (name: string, order: number, cases: string[]): ReconciliationStage => ({
      name,
      order,
      cases,
      batch: () => Promise.resolve({ reconciled: {}, taken: 0, failures: [] }),
    });
    const contributing = (...stages: ReconciliationStage[]): ReconciliationContribution => ({
      reconciliationStages: () => stages,
    });

    it('orders the contributed stages by their order, whatever module came first', () => {
      const stages = assembleReconciliationStages(
        [
          contributing(stage('finished_allocations', 90, ['released'])),
          contributing(stage('expired_tickets', 10, ['expired'])),
          contributing(stage('stuck', 20, ['failed'])),
        ],
        options,
      );
      expect(stages.map((s) => s.name)).toEqual([
        'expired_tickets',
        'stuck',
        'finished_allocations',
      ]);
    });

    it('refuses a stage or a case contributed twice, and no stage at all', () => {
      expect(() =>
        assembleReconciliationStages(
          [contributing(stage('a', 1, ['x'])), contributing(stage('a', 2, ['y']))],
          options,
        ),
      ).toThrow('stage a is contributed twice');
      expect(() =>
        assembleReconciliationStages(
          [contributing(stage('a', 1, ['x'])), contributing(stage('b', 2, ['x']))],
          options,
        ),
      ).toThrow('case x is counted by two stages');
      expect(() => assembleReconciliationStages([], options)).toThrow('no module contributes');
    });
  });

  it('fails a stuck match for the reason its facts give', () => {
    const verdicts = RULES.flatMap((rule) =>
      [false, true].map((fact) => [rule.state, fact, rule.verdict(fact)] as const),
    );
    expect(verdicts).toEqual([
      ['ALLOCATING', false, { reason: 'ALLOCATION_FAILED', case: 'allocating_allocation_failed' }],
      [
        'ALLOCATING',
        true,
        { reason: 'SERVER_REGISTRATION_TIMEOUT', case: 'allocating_registration_timeout' },
      ],
      [
        'PROCESS_READY',
        false,
        { reason: 'SERVER_REGISTRATION_TIMEOUT', case: 'process_ready_registration_timeout' },
      ],
      [
        'PROCESS_READY',
        true,
        { reason: 'SERVER_REGISTRATION_TIMEOUT', case: 'process_ready_registration_timeout' },
      ],
      [
        'ASSIGNMENT_READY',
        false,
        { reason: 'NO_SHOW', case: 'assignment_ready_no_show', nobodyConnected: true },
      ],
      [
        'ASSIGNMENT_READY',
        true,
        { reason: 'LIFECYCLE_TIMEOUT', case: 'assignment_ready_lifecycle_timeout' },
      ],
      [
        'IN_PROGRESS',
        false,
        { reason: 'LIFECYCLE_TIMEOUT', case: 'in_progress_lifecycle_timeout' },
      ],
      ['IN_PROGRESS', true, { reason: 'LIFECYCLE_TIMEOUT', case: 'in_progress_lifecycle_timeout' }],
    ]);
  });

  it('describes a pass in one line: every case counted, what was left and why', () => {
    const reconciled: Record<string, number> = Object.fromEntries(
      [
        'ticket_heartbeat_timeout',
        'allocating_allocation_failed',
        'allocating_registration_timeout',
        'process_ready_registration_timeout',
        'assignment_ready_no_show',
        'assignment_ready_lifecycle_timeout',
        'in_progress_lifecycle_timeout',
        'allocation_released',
        'allocation_release_requested',
      ].map((name) => [name, 0]),
    );
    reconciled.ticket_heartbeat_timeout = 12;
    reconciled.allocation_released = 1;
    const line = describeReconciliationPass({
      now: new Date(),
      outcome: 'budget_exhausted',
      durationMs: 10_004,
      batches: 40,
      reconciled,
      itemFailures: [{ stage: 'finished_allocations', id: 'x', sqlState: undefined, message: 'm' }],
      stageErrors: [{ stage: 'in_progress_matches', sqlState: '57014', message: 'timeout' }],
    });
    expect(line).toBe(
      'reconciliation pass budget exhausted in 10004 ms (40 batches); reconciled ticket_heartbeat_timeout=12 ' +
        'allocating_allocation_failed=0 allocating_registration_timeout=0 process_ready_registration_timeout=0 ' +
        'assignment_ready_no_show=0 assignment_ready_lifecycle_timeout=0 in_progress_lifecycle_timeout=0 ' +
        'allocation_released=1 allocation_release_requested=0; 1 left for the next pass; stopped early: in_progress_matches (57014: timeout)',
    );
  });
});
