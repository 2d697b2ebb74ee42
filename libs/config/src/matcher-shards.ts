import {
  attributeValueOf,
  equalRules,
  measuredRegions,
  type ModeAttributeSchema,
} from '@matchplane/domain';
import { ConfigError } from './load-config';
import { parseQueueModeAttributes } from './queue-attributes';
import { parseQueueModes, parseRegions } from './queue-policy';

/*
 * Matcher shards (issue 35 item 1): a mode's pool split so that several matchers match it at
 * once, each shard under its own lease. MATCHER_SHARDS names, per mode, what splits it:
 *   {"<mode>": {"attribute": "<name>"}}  one shard per declared value of a string attribute the
 *                                        mode has an `equal` rule on (tickets of different values
 *                                        never meet, so no match is lost by the split);
 *   {"<mode>": {"regions": {"<group>": ["<region>", ...], ...}}}  one shard per region group
 *                                        (a ticket is offered in every group it measured a region
 *                                        of, with only that group's regions).
 * A mode it does not name is one shard, WHOLE_MODE: the behaviour of an unsharded matcher.
 * Every app reads it (ServiceConfig): the candidate projection's writers index each candidate by
 * its shard, and the matcher's shard passes read only their shard's index.
 */

/** The shard of a mode that is not split: its whole pool, under the unsharded mode's lease key. */
export const WHOLE_MODE = 'all';

/** Every mode's shards (Nest token; ServiceRuntimeModule provides it from MATCHER_SHARDS). */
export const MATCHER_SHARD_PLAN = Symbol('MATCHER_SHARD_PLAN');
export type MatcherShardPlan = ReadonlyMap<string, readonly MatcherShard[]>;

/** What a shard is chosen by: a projected candidate, or the ticket row it is written from. */
export interface ShardedCandidate {
  readonly attributes: unknown;
  readonly predictedRtt: unknown;
}

const GROUP_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export interface MatcherShard {
  readonly mode: string;
  readonly name: string;
  /** The candidate as this shard's pass sees it, or undefined when another shard owns it. */
  select<C extends ShardedCandidate>(candidate: C): C | undefined;
}

export function wholeMode(mode: string): MatcherShard {
  return { mode, name: WHOLE_MODE, select: (candidate) => candidate };
}

/** The variables the plan is read from (every app's ServiceConfig has them). */
export interface MatcherShardsSource {
  readonly MATCHER_SHARDS?: string;
  readonly QUEUE_MODES: string;
  readonly QUEUE_MODE_ATTRIBUTES?: string;
  readonly PROBE_REGIONS: string;
}

// One read per configuration object: its validation and every consumer share it.
const plans = new WeakMap<MatcherShardsSource, ReturnType<typeof readMatcherShards>>();

/** The plan and its problems, read once per configuration object (its validation reads it first). */
export function readMatcherShardPlan(
  config: MatcherShardsSource,
): ReturnType<typeof readMatcherShards> {
  let read = plans.get(config);
  if (!read) {
    const modes = parseQueueModes(config.QUEUE_MODES).map(({ mode }) => mode);
    read = readMatcherShards(
      config.MATCHER_SHARDS,
      modes,
      parseQueueModeAttributes(config.QUEUE_MODE_ATTRIBUTES, modes),
      parseRegions(config.PROBE_REGIONS),
    );
    plans.set(config, read);
  }
  return read;
}

/** Every mode's shards; throws a ConfigError naming each problem of MATCHER_SHARDS. */
export function matcherShardPlan(config: MatcherShardsSource): MatcherShardPlan {
  const { shards, problems } = readMatcherShardPlan(config);
  if (problems.length > 0) throw new ConfigError(problems);
  return shards;
}

/** Whether `plan` splits `mode` (a mode it does not is one shard, WHOLE_MODE). */
export function isSplit(plan: MatcherShardPlan, mode: string): boolean {
  return (plan.get(mode) ?? []).some((shard) => shard.name !== WHOLE_MODE);
}

/**
 * The shards of `mode` whose passes see `candidate`, by the shards' own `select` (none for a mode
 * the plan does not split).
 */
export function homeShards(
  plan: MatcherShardPlan,
  mode: string,
  candidate: ShardedCandidate,
): string[] {
  if (!isSplit(plan, mode)) return [];
  return (plan.get(mode) ?? [])
    .filter((shard) => shard.select(candidate) !== undefined)
    .map((shard) => shard.name);
}

/**
 * Every mode's shards, in configuration order, and every problem of MATCHER_SHARDS against the
 * modes and their attribute declarations (`schemas`).
 */
export function readMatcherShards(
  raw: string | undefined,
  modes: readonly string[],
  schemas: ReadonlyMap<string, ModeAttributeSchema>,
  probeRegions: readonly string[],
): { shards: Map<string, MatcherShard[]>; problems: string[] } {
  const shards = new Map(modes.map((mode) => [mode, [wholeMode(mode)]]));
  if (raw === undefined) return { shards, problems: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    return { shards, problems: [`MATCHER_SHARDS is not JSON (${(error as Error).message})`] };
  }
  if (!isObject(parsed)) {
    return {
      shards,
      problems: ['MATCHER_SHARDS must be a JSON object of mode -> {"attribute"} or {"regions"}'],
    };
  }
  const problems: string[] = [];
  for (const [mode, spec] of Object.entries(parsed)) {
    const at = `MATCHER_SHARDS.${mode}`;
    if (!modes.includes(mode)) {
      problems.push(`MATCHER_SHARDS names mode "${mode}", which QUEUE_MODES does not list`);
      continue;
    }
    const read =
      isObject(spec) && Object.keys(spec).join() === 'attribute'
        ? attributeShards(mode, spec['attribute'], schemas.get(mode), at)
        : isObject(spec) && Object.keys(spec).join() === 'regions'
          ? regionShards(mode, spec['regions'], probeRegions, at)
          : {
              problems: [
                `${at} must be {"attribute": "<equal-rule attribute>"} or {"regions": {"<group>": ["<region>", ...]}}`,
              ],
            };
    problems.push(...read.problems);
    if (read.shards) shards.set(mode, read.shards);
  }
  return { shards, problems };
}

function attributeShards(
  mode: string,
  attribute: unknown,
  schema: ModeAttributeSchema | undefined,
  at: string,
): { shards?: MatcherShard[]; problems: string[] } {
  const equal = equalRules(schema?.rules).map((rule) => rule.attribute);
  if (typeof attribute !== 'string' || !equal.includes(attribute)) {
    const known = equal.length === 0 ? 'it has none' : `it has ${equal.join(', ')}`;
    return {
      problems: [
        `${at}.attribute must name an attribute of an "equal" rule of mode ${mode} in QUEUE_MODE_ATTRIBUTES (${known}; got ${JSON.stringify(attribute)})`,
      ],
    };
  }
  const declaration = schema?.attributes.find((declared) => declared.name === attribute);
  if (declaration?.type !== 'string') {
    return {
      problems: [
        `${at}.attribute ${attribute} must be a string attribute: its declared values are the shards`,
      ],
    };
  }
  const values = declaration.values;
  // A value no shard is named after (a ticket queued before the attribute was declared, or
  // with a value since removed) belongs to the first shard, so every ticket has exactly one.
  const home = (candidate: ShardedCandidate) => {
    const value = attributeValueOf(candidate.attributes, attribute);
    return typeof value === 'string' && values.includes(value) ? value : values[0];
  };
  return {
    problems: [],
    shards: values.map((name) => ({
      mode,
      name,
      select: <C extends ShardedCandidate>(candidate: C) =>
        home(candidate) === name ? candidate : undefined,
    })),
  };
}

function regionShards(
  mode: string,
  groups: unknown,
  probeRegions: readonly string[],
  at: string,
): { shards?: MatcherShard[]; problems: string[] } {
  if (!isObject(groups) || Object.keys(groups).length === 0) {
    return { problems: [`${at}.regions must be a non-empty object of group -> [region, ...]`] };
  }
  const problems: string[] = [];
  const groupOf = new Map<string, string>();
  for (const [group, regions] of Object.entries(groups)) {
    if (!GROUP_NAME.test(group) || group === WHOLE_MODE) {
      problems.push(
        `${at}.regions group "${group}" must be a name of letters, digits, "_", "." or "-" (not "${WHOLE_MODE}")`,
      );
    }
    if (!Array.isArray(regions) || regions.length === 0) {
      problems.push(`${at}.regions.${group} must be a non-empty list of regions`);
      continue;
    }
    for (const region of regions as unknown[]) {
      if (typeof region !== 'string' || region === '') {
        problems.push(`${at}.regions.${group} must list region names`);
      } else if (!probeRegions.includes(region)) {
        problems.push(
          `${at}.regions.${group} names region ${region}, which PROBE_REGIONS does not list (${probeRegions.join(', ')})`,
        );
      } else if (groupOf.has(region)) {
        problems.push(
          `${at}.regions: region ${region} is in groups ${groupOf.get(region)} and ${group}; a region belongs to one group`,
        );
      } else {
        groupOf.set(region, group);
      }
    }
  }
  if (problems.length > 0) return { problems };
  const first = Object.keys(groups)[0];
  // A region no group lists belongs to the first group, and so does a ticket with no measured
  // region (its NO_REGION explanation is then written once).
  const ownerOf = (region: string) => groupOf.get(region) ?? first;
  return {
    problems: [],
    shards: Object.keys(groups).map((name) => ({
      mode,
      name,
      select: <C extends ShardedCandidate>(candidate: C): C | undefined => {
        const measured = measuredRegions(candidate.predictedRtt);
        if (measured.length === 0) return name === first ? candidate : undefined;
        const mine = measured.filter((region) => ownerOf(region) === name);
        if (mine.length === 0) return undefined;
        const rtt = candidate.predictedRtt as Readonly<Record<string, unknown>>;
        return {
          ...candidate,
          predictedRtt: Object.fromEntries(mine.map((region) => [region, rtt[region]])),
        };
      },
    })),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
