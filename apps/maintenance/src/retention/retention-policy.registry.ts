import { Injectable, Logger } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { RETAINS_ROWS, type RetentionContribution } from '@matchplane/persistence';
import { assembleRetentionPolicies, type RetentionPolicy } from './retention-policy';

/**
 * Every `@RetainsRows()` provider of the modules the maintenance app imports, put together into
 * the purge's policies (found the way the dispatcher finds its outbox subscribers). Built at
 * construction, so a policy missing or declared twice stops the app before its first pass.
 */
@Injectable()
export class RetentionPolicyRegistry {
  private readonly logger = new Logger(RetentionPolicyRegistry.name);
  readonly policies: readonly RetentionPolicy[];

  constructor(discovery: DiscoveryService, reflector: Reflector) {
    const contributions = new Set<RetentionContribution>();
    for (const wrapper of discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!instance || typeof instance !== 'object') continue;
      const metatype: unknown =
        !wrapper.metatype || wrapper.inject ? instance.constructor : wrapper.metatype;
      if (typeof metatype !== 'function') continue;
      if (reflector.get<boolean | undefined>(RETAINS_ROWS, metatype)) {
        contributions.add(instance);
      }
    }
    this.policies = assembleRetentionPolicies([...contributions]);
    this.logger.log(`retention policies: ${this.policies.map((policy) => policy.name).join(', ')}`);
  }
}
