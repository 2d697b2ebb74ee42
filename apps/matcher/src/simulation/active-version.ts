import { DataSource } from 'typeorm';
import { databaseTarget, loadConfig } from '@matchplane/config';
import { dataSourceOptions, messageOf } from '@matchplane/persistence';
import {
  RULE_VARIABLES,
  RuleSetStore,
  ruleSetProblems,
  type StoredRuleSet,
} from '@matchplane/rule-sets';
import { MatcherConfig } from '../matcher.config';
import { ruleSetFromEnvironment, type SimulatedRuleSet } from './rule-sets';

/** The rule set the matcher runs now, as the simulator replays it. */
export interface ActiveSimulatedRuleSet extends SimulatedRuleSet {
  /** The stored version it is, or `environment` when none was read. */
  readonly version: number | 'environment';
}

/**
 * The active rule set as every matcher on this environment's database runs it: the active
 * version stored in `rule_sets` laid over `env`, as ActiveRuleSet lays it. With no active version
 * (a table no app has seeded yet) or no database reachable, the environment's own rules, as the
 * apps start with; `warn` says why. Reads one row and writes nothing (the apps seed version 1).
 */
export async function activeRuleSet(
  env: NodeJS.ProcessEnv,
  warn: (line: string) => void,
): Promise<ActiveSimulatedRuleSet> {
  const config = loadConfig(MatcherConfig, env);
  const stored = await storedActiveVersion(config, warn);
  if (!stored) return { ...ruleSetFromEnvironment(env), version: 'environment' };
  const refused = (problems: string) =>
    new Error(
      `active rule set version ${stored.version} is not one the matcher runs over this environment (it keeps its previous rules): ${problems}`,
    );
  const base = Object.fromEntries(RULE_VARIABLES.map((name) => [name, config[name]]));
  const problems = ruleSetProblems(base, stored.rules);
  if (problems.length > 0) throw refused(problems.map(({ problem }) => problem).join('; '));
  try {
    return { ...ruleSetFromEnvironment({ ...env, ...stored.rules }), version: stored.version };
  } catch (error) {
    throw refused((error as Error).message);
  }
}

async function storedActiveVersion(
  config: MatcherConfig,
  warn: (line: string) => void,
): Promise<StoredRuleSet | undefined> {
  const target = databaseTarget(config);
  const dataSource = new DataSource(
    dataSourceOptions(
      { ...config, DATABASE_POOL_SIZE: 1 },
      { applicationName: 'matchplane-simulate' },
    ),
  );
  try {
    await dataSource.initialize();
    const stored = await new RuleSetStore().active(dataSource.manager);
    if (!stored) warn(`no active rule set version at ${target}: the environment's rules`);
    return stored;
  } catch (error) {
    warn(`active rule set not read at ${target} (${messageOf(error)}): the environment's rules`);
    return undefined;
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
  }
}
