import {
  ConfigError,
  parseQueueModeAttributes,
  parseQueueModes,
  parseRegions,
} from '@matchplane/config';
import { type MatcherConfig } from './matcher.config';
import {
  assertModeRules,
  DomainError,
  type ModeRules,
  type WideningStep,
} from '@matchplane/domain';
import { readMatcherShards, type MatcherShard } from './matcher-shards';
import { shardLockKey } from './mode-lease';

/** "0:50:100,10000:100:inf" -> widening steps (syntax already checked by MatcherConfig). */
export function parseWideningSteps(raw: string): WideningStep[] {
  return raw.split(',').map((step) => {
    const [afterMs, maxRttMs, ratingWindow] = step.trim().split(':');
    return {
      afterMs: Number(afterMs),
      maxRttMs: Number(maxRttMs),
      ratingWindow: ratingWindow === 'inf' ? Number.POSITIVE_INFINITY : Number(ratingWindow),
    };
  });
}

/** "squad=0:60:150,20000:100:300;duel=..." -> steps per mode. */
function parseWideningByMode(raw: string | undefined): Map<string, string> {
  const byMode = new Map<string, string>();
  for (const entry of (raw ?? '').split(';').filter((item) => item.trim() !== '')) {
    const at = entry.indexOf('=');
    byMode.set(entry.slice(0, at).trim(), entry.slice(at + 1).trim());
  }
  return byMode;
}

/**
 * The matcher's rules per mode: team shape from QUEUE_MODES (shared with the API), widening from
 * MATCH_WIDENING, overridden per mode by MATCH_WIDENING_BY_MODE, attribute rules from
 * QUEUE_MODE_ATTRIBUTES. Throws a ConfigError naming the
 * variable when a step narrows or an override names an unknown mode, so a bad rule set stops the
 * matcher at start-up like a malformed variable does, never at its first pass.
 */
export function matcherRules(config: MatcherConfig): ModeRules[] {
  const problems = matcherRulesProblems(config);
  if (problems.length > 0) throw new ConfigError(problems);
  return buildRules(config);
}

/** Every mode's shards (one, the whole mode, for a mode MATCHER_SHARDS does not split). */
export function matcherShards(config: MatcherConfig): Map<string, MatcherShard[]> {
  const { shards, problems } = readShards(config);
  if (problems.length > 0) throw new ConfigError(problems);
  return shards;
}

function readShards(config: MatcherConfig) {
  const modes = parseQueueModes(config.QUEUE_MODES).map(({ mode }) => mode);
  const schemas = parseQueueModeAttributes(config.QUEUE_MODE_ATTRIBUTES, modes);
  return readMatcherShards(
    config.MATCHER_SHARDS,
    modes,
    schemas,
    parseRegions(config.PROBE_REGIONS),
  );
}

export function matcherRulesProblems(config: MatcherConfig): string[] {
  const modes = new Set(parseQueueModes(config.QUEUE_MODES).map((mode) => mode.mode));
  const { shards, problems } = readShards(config);
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
  const overrides = parseWideningByMode(config.MATCH_WIDENING_BY_MODE);
  for (const mode of overrides.keys()) {
    if (!modes.has(mode)) {
      problems.push(`MATCH_WIDENING_BY_MODE names mode "${mode}", which QUEUE_MODES does not list`);
    }
  }
  const check = (variable: string, steps: string) => {
    try {
      assertModeRules([
        { mode: 'check', teamSize: 1, teamCount: 2, widening: parseWideningSteps(steps) },
      ]);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const details = (error.details as { problems?: string[] } | undefined)?.problems ?? [
        error.message,
      ];
      problems.push(
        `${variable} ${details.map((p) => p.replace(/^rules\[0\]\.widening/, 'step')).join(', ')} (got "${steps}")`,
      );
    }
  };
  check('MATCH_WIDENING', config.MATCH_WIDENING);
  for (const [mode, steps] of overrides) check(`MATCH_WIDENING_BY_MODE[${mode}]`, steps);
  return problems;
}

function buildRules(config: MatcherConfig): ModeRules[] {
  const overrides = parseWideningByMode(config.MATCH_WIDENING_BY_MODE);
  const modes = parseQueueModes(config.QUEUE_MODES);
  const attributes = parseQueueModeAttributes(
    config.QUEUE_MODE_ATTRIBUTES,
    modes.map(({ mode }) => mode),
  );
  const rules = modes.map(({ mode, teamSize, teamCount, teamSizes, fill }) => ({
    mode,
    teamSize,
    teamCount,
    // Only teams of different sizes name each one (hunt:4+1); equal teams stay as they were.
    ...(teamSizes.some((size) => size !== teamSize) ? { teamSizes } : {}),
    ...(fill ? { fill } : {}),
    widening: parseWideningSteps(overrides.get(mode) ?? config.MATCH_WIDENING),
    // Ticket attribute rules (QUEUE_MODE_ATTRIBUTES, shared with the API, which validates tickets).
    attributeRules: attributes.get(mode)?.rules ?? [],
  }));
  assertModeRules(rules);
  return rules;
}
