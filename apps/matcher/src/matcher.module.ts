import { Module, type DynamicModule } from '@nestjs/common';
import { MatcherConfig } from './matcher.config';
import { SHADOW_RULES, ShadowMatching, shadowRules } from './shadow-matching';
import type { MatchingFunction } from '@matchplane/domain';
import { MatchesModule } from '@matchplane/matches';
import { ServiceRuntimeModule } from '@matchplane/observability';
import { OutboxModule } from '@matchplane/outbox';
import { TicketsModule } from '@matchplane/tickets';
import { MatchCommitter } from './match-committer';
import { MATCHER_SCHEDULE, MatcherLoop, type MatcherSchedule } from './matcher.loop';
import { MatcherMetrics } from './matcher.metrics';
import { matcherRules, matcherRulesProblems } from './matcher-rules';
import {
  MATCHER_RULES,
  matchingFunctionProvider,
  type MatchingFunctionFactory,
} from './matching-function';
import { MatchingPass } from './matching.pass';
import { RuleSetRecheck } from './rule-set-recheck';
import { TicketExplanations } from './ticket-explanations';
import { PlayerBlocksModule } from '@matchplane/players';
import { RULE_VARIABLES, RuleSetsModule, type RuleVariables } from '@matchplane/rule-sets';

export interface MatcherModuleOptions {
  /**
   * The matching policy: a function (a replacement of formMatches, or a wrapper around it), or a
   * factory whose `inject` names providers of the modules in `imports`. Default: formMatches.
   * It can also be replaced by overriding the MATCHING_FUNCTION provider.
   */
  readonly matchingFunction?: MatchingFunction | MatchingFunctionFactory;
  /** The studio's own modules, e.g. the one providing what the matching function's factory injects. */
  readonly imports?: DynamicModule['imports'];
  /** Default `scheduled`; `manual` runs no pass or rebuild on its own (MatcherLoop.passNow). */
  readonly schedule?: MatcherSchedule;
}

@Module({})
export class MatcherModule {
  /** Throws a ConfigError when the widening rules or the shards are inconsistent. */
  static forRoot(config: MatcherConfig, options: MatcherModuleOptions = {}): DynamicModule {
    const rules = matcherRules(config);
    return {
      module: MatcherModule,
      imports: [
        ServiceRuntimeModule.forWorker(config, { appName: 'matcher' }),
        OutboxModule.forWriters(),
        TicketsModule,
        MatchesModule,
        PlayerBlocksModule,
        RuleSetsModule.forRoot({
          base: ruleVariablesOf(config),
          pollIntervalMs: config.RULE_SET_POLL_INTERVAL_MS,
          // A version this matcher's shards or pool cannot take is refused here, not half-run.
          problems: (variables) => matcherRulesProblems({ ...config, ...variables }),
        }),
        ...(options.imports ?? []),
      ],
      providers: [
        { provide: MatcherConfig, useValue: config },
        { provide: MATCHER_RULES, useValue: rules },
        { provide: SHADOW_RULES, useValue: shadowRules(config) },
        ShadowMatching,
        { provide: MATCHER_SCHEDULE, useValue: options.schedule ?? 'scheduled' },
        matchingFunctionProvider(options.matchingFunction),
        MatcherMetrics,
        TicketExplanations,
        MatchCommitter,
        RuleSetRecheck,
        MatchingPass,
        MatcherLoop,
      ],
      exports: [MatcherLoop],
    };
  }
}

function ruleVariablesOf(config: MatcherConfig): RuleVariables {
  return Object.fromEntries(RULE_VARIABLES.map((name) => [name, config[name]]));
}
