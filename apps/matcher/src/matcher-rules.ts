import { ConfigError, readMatcherShardPlan } from '@matchplane/config';
import { type MatcherConfig } from './matcher.config';
import type { ModeRules } from '@matchplane/domain';
import { modeRulesOf, ruleVariableProblems } from '@matchplane/rule-sets';
import { shardLockKey } from './mode-lease';

/**
 * The matcher's rules per mode from its environment's rule variables (`modeRulesOf`, which also
 * builds every later rule set version's). Throws a ConfigError naming the
 * variable when a step narrows or an override names an unknown mode, so a bad rule set stops the
 * matcher at start-up like a malformed variable does, never at its first pass.
 */
export function matcherRules(config: MatcherConfig): ModeRules[] {
  const problems = matcherRulesProblems(config);
  if (problems.length > 0) throw new ConfigError(problems);
  return modeRulesOf(config);
}

/**
 * MATCHER_SHARDS' problems (ServiceConfig's check, here too so that a rule set version the shards
 * cannot take is refused), the leases', then the rule variables' own (libs/rule-sets).
 */
export function matcherRulesProblems(config: MatcherConfig): string[] {
  const { shards, problems: shardProblems } = readMatcherShardPlan(config);
  const problems = [...shardProblems];
  const lockKeys = new Map<number, string>();
  for (const shard of [...shards.values()].flat()) {
    const key = shardLockKey(shard.mode, shard.name);
    const named = `${shard.mode}/${shard.name}`;
    const other = lockKeys.get(key);
    // Two shards sharing a lease key would leave one of them unmatched: refuse, rename one.
    if (other)
      problems.push(
        `QUEUE_MODES/MATCHER_SHARDS: ${other} and ${named} hash to the same matcher lease key`,
      );
    lockKeys.set(key, named);
  }
  // A lone matcher holds every lease, each on a pooled connection of its own (ShardBalance never
  // lets them fill the pool). Refused only with MATCHER_SHARDS set: configurations from before it
  // start as they did, and a matcher of theirs holds what the pool allows.
  const leases = [...shards.values()].flat().length;
  if (config.MATCHER_SHARDS !== undefined && config.DATABASE_POOL_SIZE < leases + 2) {
    problems.push(
      `DATABASE_POOL_SIZE ${config.DATABASE_POOL_SIZE} is too small for ${leases} matcher leases (one per shard, a shard per unsplit mode): a lone matcher holds each on a connection of its own, plus one for its presence and one for its passes' reads; set at least ${leases + 2}`,
    );
  }
  problems.push(...ruleVariableProblems(config));
  return problems;
}
