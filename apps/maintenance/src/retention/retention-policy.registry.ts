import { Injectable, Logger } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { providersMarkedWith } from '../marked-providers';
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
    const contributions = providersMarkedWith<RetentionContribution>(
      discovery,
      reflector,
      RETAINS_ROWS,
    );
    this.policies = assembleRetentionPolicies(contributions);
    this.logger.log(`retention policies: ${this.policies.map((policy) => policy.name).join(', ')}`);
  }
}
