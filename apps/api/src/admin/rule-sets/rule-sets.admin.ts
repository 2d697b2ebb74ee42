import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { AuditWriter, runInTransaction } from '@matchplane/persistence';
import {
  ActiveRuleSet,
  RuleSetStore,
  ruleVariablesFromBody,
  type RuleSetProblem,
  type RuleSetStatus,
  type RuleVariables,
  type StoredRuleSet,
} from '@matchplane/rule-sets';

/** A rule set version as the operator routes, console and CLI show it. */
export interface RuleSetView {
  version: number;
  status: RuleSetStatus;
  /** The rule variables it sets over each app's environment (version 1: none). */
  rules: RuleVariables;
  reason: string;
  createdBy: string;
  createdAt: string;
  activatedAt?: string;
  retiredAt?: string;
}

/** A dry run's answer: what a create would refuse, with nothing stored. */
export interface RuleSetCheck {
  dryRun: true;
  valid: boolean;
  problems: RuleSetProblem[];
  rules: RuleVariables;
}

export interface RuleSetList {
  /** The version the apps run (within RULE_SET_POLL_INTERVAL_MS of its activation). */
  activeVersion?: number;
  ruleSets: RuleSetView[];
}

function viewOf(ruleSet: StoredRuleSet): RuleSetView {
  return {
    version: ruleSet.version,
    status: ruleSet.status,
    rules: ruleSet.rules,
    reason: ruleSet.reason,
    createdBy: ruleSet.createdBy,
    createdAt: ruleSet.createdAt.toISOString(),
    ...(ruleSet.activatedAt ? { activatedAt: ruleSet.activatedAt.toISOString() } : {}),
    ...(ruleSet.retiredAt ? { retiredAt: ruleSet.retiredAt.toISOString() } : {}),
  };
}

/** 400 VALIDATION_FAILED naming each offending variable as `rules.<VARIABLE>`. */
function refuse(problems: readonly RuleSetProblem[]): never {
  const byField = new Map<string, string[]>();
  for (const { field, problem } of problems) {
    const name = field === 'rules' ? 'rules' : `rules.${field}`;
    byField.set(name, [...(byField.get(name) ?? []), problem]);
  }
  const errors = [...byField].map(([field, fieldProblems]) => ({ field, problems: fieldProblems }));
  throw new CodedError(
    ErrorCode.VALIDATION_FAILED,
    errors.map(({ field, problems: p }) => `${field}: ${p.join(', ')}`).join('; '),
    { errors },
  );
}

/**
 * Operators create, check, activate and roll back rule set versions (REST, CLI and console alike):
 * every change one transaction with its audit row. A version is checked as this API would run it
 * (and every matcher checks it again before switching: one that cannot keeps its rules and logs why).
 */
@Injectable()
export class RuleSetsAdmin {
  constructor(
    private readonly dataSource: DataSource,
    private readonly store: RuleSetStore,
    private readonly ruleSet: ActiveRuleSet,
    private readonly audit: AuditWriter,
  ) {}

  async list(): Promise<RuleSetList> {
    const ruleSets = (await this.store.list(this.dataSource.manager)).map(viewOf);
    const active = ruleSets.find((ruleSet) => ruleSet.status === 'active');
    return { ...(active ? { activeVersion: active.version } : {}), ruleSets };
  }

  /** Checks `body` (the rule variables); `dryRun` answers the check, otherwise stores a draft. */
  async create(
    body: unknown,
    operator: string,
    reason: string,
    dryRun: boolean,
  ): Promise<RuleSetView | RuleSetCheck> {
    const parsed = ruleVariablesFromBody(body);
    const rules = 'variables' in parsed ? parsed.variables : {};
    const problems = 'problems' in parsed ? parsed.problems : this.ruleSet.problemsOf(rules);
    if (dryRun) return { dryRun: true, valid: problems.length === 0, problems, rules };
    if (problems.length > 0) refuse(problems);
    return runInTransaction(this.dataSource, async (manager) => {
      const created = await this.store.create(manager, { rules, reason, createdBy: operator });
      await this.record(manager, operator, 'rule_set.created', created.version, reason, { rules });
      return viewOf(created);
    });
  }

  /** Makes `version` the active one (activating the active one changes nothing). */
  async activate(version: number, operator: string, reason: string): Promise<RuleSetView> {
    return runInTransaction(this.dataSource, async (manager) => {
      const target = await this.store.lockedVersion(manager, version);
      if (!target) {
        throw new CodedError(ErrorCode.NOT_FOUND, `Rule set version ${version} does not exist`);
      }
      if (target.status === 'active') return viewOf(target);
      return this.switchTo(manager, target, operator, reason, 'rule_set.activated');
    });
  }

  /** Back to the version active before the active one. */
  async rollback(operator: string, reason: string): Promise<RuleSetView> {
    return runInTransaction(this.dataSource, async (manager) => {
      const previous = await this.store.lockedPrevious(manager);
      if (!previous) {
        throw new CodedError(
          ErrorCode.CONFLICT,
          'No rule set version was active before the active one: nothing to roll back to',
        );
      }
      return this.switchTo(manager, previous, operator, reason, 'rule_set.rolled_back');
    });
  }

  private async switchTo(
    manager: EntityManager,
    target: StoredRuleSet,
    operator: string,
    reason: string,
    action: string,
  ): Promise<RuleSetView> {
    // Checked again: the deployment's environment may have changed since it was created.
    const problems = this.ruleSet.problemsOf(target.rules);
    if (problems.length > 0) {
      throw new CodedError(
        ErrorCode.CONFLICT,
        `Rule set version ${target.version} does not fit this deployment: ${problems.map((p) => p.problem).join('; ')}`,
      );
    }
    const retired = await this.store.activate(manager, target.version);
    await this.record(manager, operator, action, target.version, reason, {
      previousVersion: retired ?? null,
    });
    // Read again for its activation time (the lock is this transaction's already).
    return viewOf((await this.store.lockedVersion(manager, target.version)) ?? target);
  }

  private record(
    manager: EntityManager,
    operator: string,
    action: string,
    version: number,
    reason: string,
    details: Record<string, unknown>,
  ): Promise<string> {
    return this.audit.record(manager, {
      actor: operator,
      action,
      targetType: 'rule_set',
      targetId: String(version),
      reason,
      details,
    });
  }
}
