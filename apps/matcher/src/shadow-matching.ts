import { Inject, Injectable, Logger } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { ConfigError } from '@matchplane/config';
import type {
  MatchCandidate,
  MatchFormation,
  MatchingFunction,
  ModeRules,
} from '@matchplane/domain';
import { MetricsRegistry } from '@matchplane/observability';
import type { MatcherConfig } from './matcher.config';
import { MATCHING_FUNCTION } from './matching-function';
import { teamRatingGap } from './simulation/match-figures';
import { ActiveRuleSet, RULE_VARIABLES, type RuleVariables } from '@matchplane/rule-sets';
import { proposedRuleSet, proposedVariablesFromFile } from './simulation/rule-sets';

/** The proposed rule set (MATCHER_SHADOW_RULES_FILE), or none. */
export const SHADOW_RULES = Symbol('SHADOW_RULES');
export type ShadowRules = { readonly file: string; readonly variables: RuleVariables } | null;

/**
 * The proposed rule set the matcher runs in shadow, read like `npm run simulate --proposed`
 * (docs/SIMULATOR.md). It is laid over the active version's rule variables each time that
 * version changes; at start-up it is checked over the configuration's own (which need not be the
 * process environment's), and a file the matcher would refuse stops it naming the variable.
 */
export function shadowRules(config: MatcherConfig): ShadowRules {
  const file = config.MATCHER_SHADOW_RULES_FILE;
  if (file === undefined) return null;
  const active: Record<string, string | undefined> = {};
  for (const name of RULE_VARIABLES) active[name] = config[name];
  try {
    const variables = proposedVariablesFromFile(file);
    proposedRuleSet(active, variables);
    return { file, variables };
  } catch (error) {
    throw new ConfigError([`MATCHER_SHADOW_RULES_FILE ${(error as Error).message}`]);
  }
}

type RuleSetLabel = 'active' | 'proposed';

/**
 * Each pass's pool matched again under the proposed rules, committing nothing: what each rule
 * set would form (matches, players, worst RTT, team rating gap) as metrics side by side, labelled
 * `rule_set`. The proposed pass costs the mode one more matching function call per pass.
 */
@Injectable()
export class ShadowMatching {
  private readonly logger = new Logger(ShadowMatching.name);
  /** The proposal laid over the active version it was last laid over. */
  private laid?: { readonly version: number | undefined; readonly rules: Map<string, ModeRules> };
  private readonly matches: Counter<'mode' | 'rule_set'>;
  private readonly players: Counter<'mode' | 'rule_set'>;
  private readonly worstRtt: Histogram<'mode' | 'rule_set'>;
  private readonly ratingGap: Histogram<'mode' | 'rule_set'>;

  constructor(
    @Inject(SHADOW_RULES) private readonly rules: ShadowRules,
    @Inject(MATCHING_FUNCTION) private readonly matching: MatchingFunction,
    @Inject(MetricsRegistry) registry: MetricsRegistry,
    private readonly ruleSet: ActiveRuleSet,
  ) {
    const registers = [registry];
    const labelNames = ['mode', 'rule_set'] as const;
    this.matches = new Counter({
      name: 'matcher_shadow_matches_total',
      help: 'Matches each rule set would form from the same pools (active: before commit checks)',
      labelNames,
      registers,
    });
    this.players = new Counter({
      name: 'matcher_shadow_players_matched_total',
      help: 'Players each rule set would match from the same pools',
      labelNames,
      registers,
    });
    this.worstRtt = new Histogram({
      name: 'matcher_shadow_worst_rtt_ms',
      help: "Per match a rule set would form, its worst participant's RTT to its region",
      labelNames,
      buckets: [10, 25, 50, 75, 100, 150, 200, 300],
      registers,
    });
    this.ratingGap = new Histogram({
      name: 'matcher_shadow_team_rating_gap',
      help: "Per match a rule set would form, the highest team's mean rating minus the lowest's",
      labelNames,
      buckets: [10, 25, 50, 100, 200, 400, 800],
      registers,
    });
  }

  /** Records the active pass's formation and the proposed rules' over the same pool. */
  compare(mode: string, pool: readonly MatchCandidate[], active: MatchFormation, now: Date): void {
    const proposedRules = this.proposedRules()?.get(mode);
    if (!proposedRules) return;
    this.record(mode, 'active', active);
    this.record(mode, 'proposed', this.matching(pool, [proposedRules], now));
  }

  /** The proposal over the active version, laid again when that version changes. */
  private proposedRules(): ReadonlyMap<string, ModeRules> | undefined {
    if (this.rules === null) return undefined;
    const active = this.ruleSet.current();
    if (this.laid === undefined || this.laid.version !== active.version) {
      let rules = new Map<string, ModeRules>();
      try {
        const proposed = proposedRuleSet(active.variables, this.rules.variables);
        rules = new Map(proposed.rules.map((rule) => [rule.mode, rule]));
      } catch (error) {
        // The active version moved where the proposal no longer fits: no shadow until either changes.
        this.logger.error(
          `shadow rules ${this.rules.file} do not fit rule set version ${active.version ?? 'environment'}: ${(error as Error).message}`,
        );
      }
      this.laid = { version: active.version, rules };
    }
    return this.laid.rules;
  }

  private record(mode: string, ruleSet: RuleSetLabel, formation: MatchFormation): void {
    const labels = { mode, rule_set: ruleSet };
    this.matches.inc(labels, formation.matches.length);
    for (const match of formation.matches) {
      this.players.inc(labels, match.participants.length);
      this.worstRtt.observe(labels, match.worstRttMs);
      this.ratingGap.observe(labels, teamRatingGap(match));
    }
    // A counter at 0 is still a series: a rule set that forms nothing shows as 0, not as absent.
    if (formation.matches.length === 0) this.players.inc(labels, 0);
  }
}
