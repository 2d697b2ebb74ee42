import { Inject, Injectable } from '@nestjs/common';
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
import { RULE_VARIABLES } from '@matchplane/rule-sets';
import { ruleSetFromFile } from './simulation/rule-sets';

/** The proposed rules by mode (MATCHER_SHADOW_RULES_FILE), or none. */
export const SHADOW_RULES = Symbol('SHADOW_RULES');
export type ShadowRules = ReadonlyMap<string, ModeRules> | null;

/**
 * The proposed rule set the matcher runs in shadow, read like `npm run simulate --proposed`
 * (docs/SIMULATOR.md), laid over the active configuration's own rule variables (which need not be
 * the process environment's); a file the matcher would refuse stops it at start-up naming the
 * variable.
 */
export function shadowRules(config: MatcherConfig): ShadowRules {
  const file = config.MATCHER_SHADOW_RULES_FILE;
  if (file === undefined) return null;
  const active: Record<string, string | undefined> = {};
  for (const name of RULE_VARIABLES) active[name] = config[name];
  try {
    return new Map(ruleSetFromFile(file, active).rules.map((rule) => [rule.mode, rule]));
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
  private readonly matches: Counter<'mode' | 'rule_set'>;
  private readonly players: Counter<'mode' | 'rule_set'>;
  private readonly worstRtt: Histogram<'mode' | 'rule_set'>;
  private readonly ratingGap: Histogram<'mode' | 'rule_set'>;

  constructor(
    @Inject(SHADOW_RULES) private readonly rules: ShadowRules,
    @Inject(MATCHING_FUNCTION) private readonly matching: MatchingFunction,
    @Inject(MetricsRegistry) registry: MetricsRegistry,
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
    const proposedRules = this.rules?.get(mode);
    if (!proposedRules) return;
    this.record(mode, 'active', active);
    this.record(mode, 'proposed', this.matching(pool, [proposedRules], now));
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
