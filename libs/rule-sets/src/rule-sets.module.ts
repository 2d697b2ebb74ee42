import { Module, type DynamicModule } from '@nestjs/common';
import { ActiveRuleSet, RULE_SET_OPTIONS, type RuleSetOptions } from './active-rule-set';
import { RuleSetStore } from './rule-set.store';

/**
 * Owns `rule_sets`. Global: an app follows one active rule set, read by whatever validates or
 * matches under it (the API's queue policy, the matcher's passes), like its one DataSource.
 */
@Module({})
export class RuleSetsModule {
  static forRoot(options: RuleSetOptions): DynamicModule {
    return {
      module: RuleSetsModule,
      global: true,
      providers: [RuleSetStore, ActiveRuleSet, { provide: RULE_SET_OPTIONS, useValue: options }],
      exports: [RuleSetStore, ActiveRuleSet],
    };
  }
}
