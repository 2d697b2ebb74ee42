import { IsOptional, Matches } from 'class-validator';
import { EnvVar, IsIntInRange, WorkerConfig, healthPort } from '@matchplane/config';
import { DEFAULT_MATCH_WIDENING, IsWideningByMode, IsWideningSteps } from '@matchplane/rule-sets';
import { matcherRulesProblems } from './matcher-rules';

export class MatcherConfig extends WorkerConfig {
  /**
   * The rule set must be usable: steps only widen, overrides name listed modes, shard keys are
   * equal rules, leases differ, and the pool can hold them.
   */
  static override crossVariableProblems(config: MatcherConfig): string[] {
    // ServiceConfig's check (MATCHER_SHARDS) is part of matcherRulesProblems.
    return matcherRulesProblems(config);
  }

  @healthPort()
  HEALTH_PORT = 9102;

  // Syntax only here; that the steps only widen is crossVariableProblems' check (it needs the
  // domain's rule checks, apps/matcher/src/matcher-rules.ts).
  @EnvVar({
    description:
      'Widening steps of every mode, comma-separated afterMs:maxRttMs:ratingWindow (ratingWindow "inf": any rating). The first step is at 0 ms; later ones only widen. A ticket that has waited afterMs accepts that step\'s limits',
  })
  @IsWideningSteps()
  MATCH_WIDENING = DEFAULT_MATCH_WIDENING;

  @EnvVar({
    description:
      'Per-mode widening overriding MATCH_WIDENING: mode=steps entries separated by ";", e.g. squad=0:60:150,20000:100:300',
  })
  @IsOptional()
  @IsWideningByMode()
  MATCH_WIDENING_BY_MODE?: string = undefined;

  @EnvVar({
    description: 'Time from the end of one matching pass of a mode to the start of the next (ms)',
  })
  @IsIntInRange(10, 60_000)
  MATCHER_PASS_INTERVAL_MS = 500;

  @EnvVar({
    description:
      'How often the candidate projection in Redis is rebuilt from PostgreSQL, repairing missed updates (ms; it is also rebuilt at start-up)',
  })
  @IsIntInRange(1_000, 86_400_000)
  MATCHER_REBUILD_INTERVAL_MS = 60_000;

  @EnvVar({
    description:
      'Matches committed per PostgreSQL transaction (larger: fewer commits; smaller: shorter ticket row locks). A match whose write fails is retried alone, so it never takes the others down',
  })
  @IsIntInRange(1, 1_000)
  MATCHER_COMMIT_BATCH = 16;

  @EnvVar({
    description:
      'A proposed rule set to run in shadow beside the active one (a JSON file as `npm run simulate --proposed` takes): each pass also matches its pool under it, commits nothing, and reports both as matcher_shadow_* metrics',
  })
  @IsOptional()
  @Matches(/\S/, { message: 'must be a file path' })
  MATCHER_SHADOW_RULES_FILE?: string = undefined;
}
