import { Injectable, Logger, Module } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, NestFactory, Reflector } from '@nestjs/core';
import { IdempotencyRetentionModule } from '@matchplane/idempotency';
import { ProbeRetentionModule } from '@matchplane/latency';
import { MatchRetentionModule } from '@matchplane/matches';
import { OutboxRetentionModule } from '@matchplane/outbox';
import { RETAINS_ROWS, type RetentionOwner } from '@matchplane/persistence';
import { SessionRetentionModule } from '@matchplane/players';
import { TicketRetentionModule } from '@matchplane/tickets';
import { providersMarkedWith } from '../marked-providers';
import { assembleRetentionPolicies, type RetentionPolicy } from './retention-policy';

/**
 * Every `@RetainsRows()` owner of the modules the maintenance app imports, its policies put in the
 * order a round takes them (found the way the dispatcher finds its outbox subscribers). Built at
 * construction, so a policy missing or declared twice stops the app before its first pass.
 */
@Injectable()
export class RetentionPolicyRegistry {
  private readonly logger = new Logger(RetentionPolicyRegistry.name);
  readonly policies: readonly RetentionPolicy[];

  constructor(discovery: DiscoveryService, reflector: Reflector) {
    const owners = providersMarkedWith<RetentionOwner>(discovery, reflector, RETAINS_ROWS);
    this.policies = assembleRetentionPolicies(owners);
    this.logger.log(`retention policies: ${this.policies.map((policy) => policy.name).join(', ')}`);
  }
}

/**
 * The modules whose tables the app purges, each declaring its own policies; imported in this order,
 * which is the round's order where the owners' `after` leaves it open.
 */
@Module({
  imports: [
    DiscoveryModule,
    OutboxRetentionModule,
    IdempotencyRetentionModule,
    SessionRetentionModule,
    ProbeRetentionModule,
    MatchRetentionModule,
    TicketRetentionModule,
  ],
  providers: [RetentionPolicyRegistry],
  exports: [RetentionPolicyRegistry],
})
export class RetentionOwnersModule {}

/**
 * The policies the app would discover, for callers without the app (tests, benches): the owners
 * need no database to declare them.
 */
export async function discoverRetentionPolicies(): Promise<readonly RetentionPolicy[]> {
  const context = await NestFactory.createApplicationContext(RetentionOwnersModule, {
    logger: false,
  });
  try {
    return context.get(RetentionPolicyRegistry).policies;
  } finally {
    await context.close();
  }
}
