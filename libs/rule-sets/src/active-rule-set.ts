import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { parseQueueModes, type QueueMode } from '@matchplane/config';
import type { ModeAttributeSchema, ModeRules } from '@matchplane/domain';
import { MetricsRegistry } from '@matchplane/observability';
import { RuleSetStore } from './rule-set.store';
import {
  attributeSchemasOf,
  modeRulesOf,
  ruleSetProblems,
  RULE_VARIABLES,
  RuleSetVariables,
  type RuleSetProblem,
  type RuleVariables,
} from './rule-variables';

/** What an app needs to follow the active rule set. */
export interface RuleSetOptions {
  /** The app's own rule variables (its environment): what a version's variables are laid over. */
  readonly base: RuleVariables;
  /** How often the active version is read (ms). */
  readonly pollIntervalMs: number;
  /** Problems the app (not the rule set) has with a version, e.g. the matcher's shards. */
  readonly problems?: (variables: RuleVariables) => string[];
}
export const RULE_SET_OPTIONS = Symbol('RULE_SET_OPTIONS');

/** The rules an app runs under now. */
export interface ActiveRules {
  /** The version that set them; undefined until the table was first read. */
  readonly version?: number;
  /** Every rule variable as this app runs it: its environment with the version laid over it. */
  readonly variables: RuleVariables;
  readonly modes: readonly QueueMode[];
  readonly rulesByMode: ReadonlyMap<string, ModeRules>;
  readonly attributes: ReadonlyMap<string, ModeAttributeSchema>;
}

function rulesOf(variables: RuleVariables, version?: number): ActiveRules {
  const given = Object.entries(variables).filter(([, value]) => value !== undefined);
  const complete = { ...new RuleSetVariables(), ...Object.fromEntries(given) };
  return {
    ...(version === undefined ? {} : { version }),
    variables: Object.fromEntries(RULE_VARIABLES.map((name) => [name, complete[name]])),
    modes: parseQueueModes(complete.QUEUE_MODES),
    rulesByMode: new Map(modeRulesOf(complete).map((rule) => [rule.mode, rule])),
    attributes: attributeSchemasOf(complete),
  };
}

/**
 * The active rule set of this app: read at start (seeding version 1, the environment, into an
 * empty table), then every `pollIntervalMs`, so an activation or rollback reaches every API replica
 * and matcher within one interval, without a restart. A version the app cannot run (its checks
 * fail here) is logged and skipped: the app keeps the rules it has.
 */
@Injectable()
export class ActiveRuleSet implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ActiveRuleSet.name);
  private active: ActiveRules;
  private refused?: number;
  private timer?: NodeJS.Timeout;
  private readonly running?: Gauge;

  constructor(
    private readonly dataSource: DataSource,
    private readonly store: RuleSetStore,
    @Inject(RULE_SET_OPTIONS) private readonly options: RuleSetOptions,
    // Optional: a CLI's module graph has no metrics.
    @Optional() @Inject(MetricsRegistry) registry?: MetricsRegistry,
  ) {
    this.active = rulesOf(options.base);
    if (registry) {
      this.running = new Gauge({
        name: 'rule_set_version_running',
        help: 'The rule set version this process runs (0: its environment, before the table was read)',
        registers: [registry],
      });
      this.running.set(0);
    }
  }

  current(): ActiveRules {
    return this.active;
  }

  async onModuleInit(): Promise<void> {
    try {
      await this.store.seedEnvironment(this.dataSource.manager);
      await this.refresh();
    } catch (error) {
      // The environment's rules serve until the next poll reaches PostgreSQL.
      this.logger.warn(`active rule set not read: ${(error as Error).message}`);
    }
    this.timer = setInterval(() => {
      this.refresh().catch((error: Error) =>
        this.logger.warn(`active rule set not read: ${error.message}`),
      );
    }, this.options.pollIntervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /**
   * What this app has against `rules` (a version's variables): each problem naming its variable,
   * none when it would run them. The operator routes check a version with it before storing or
   * activating it.
   */
  problemsOf(rules: RuleVariables): RuleSetProblem[] {
    const problems = ruleSetProblems(this.options.base, rules);
    if (problems.length > 0) return problems;
    return (this.options.problems?.({ ...this.options.base, ...rules }) ?? []).map((problem) => ({
      field: 'rules',
      problem,
    }));
  }

  /** Reads the active version and switches to it when it changed (and this app can run it). */
  async refresh(): Promise<ActiveRules> {
    const stored = await this.store.active(this.dataSource.manager);
    if (!stored || stored.version === this.active.version || stored.version === this.refused) {
      return this.active;
    }
    const problems = this.problemsOf(stored.rules).map(({ problem }) => problem);
    if (problems.length > 0) {
      this.refused = stored.version;
      this.logger.error(
        `rule set version ${stored.version} not applied, keeping version ${this.active.version ?? 'environment'}: ${problems.join('; ')}`,
      );
      return this.active;
    }
    this.active = rulesOf({ ...this.options.base, ...stored.rules }, stored.version);
    this.refused = undefined;
    this.running?.set(stored.version);
    this.logger.log(`rule set version ${stored.version} active`);
    return this.active;
  }
}
