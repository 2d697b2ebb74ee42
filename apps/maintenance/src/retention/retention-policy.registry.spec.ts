import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { MatchRetentionModule } from '@matchplane/matches';
import { SessionRetentionModule } from '@matchplane/players';
import { TicketRetentionModule } from '@matchplane/tickets';
import { inRoundOrder, RetentionRegistrationError } from './retention-policy';
import {
  discoverRetentionPolicies,
  RetentionOwnersModule,
  RetentionPolicyRegistry,
} from './retention-policy.registry';

/** The owner modules the app imports (DiscoveryModule aside), so a test can leave one out. */
const OWNERS = (Reflect.getMetadata('imports', RetentionOwnersModule) as unknown[]).filter(
  (imported) => imported !== DiscoveryModule,
);

async function registryOf(owners: readonly unknown[]): Promise<RetentionPolicyRegistry> {
  @Module({
    imports: [DiscoveryModule, ...(owners as never[])],
    providers: [RetentionPolicyRegistry],
  })
  class Host {}
  const moduleRef = await Test.createTestingModule({ imports: [Host] }).compile();
  const registry = moduleRef.get(RetentionPolicyRegistry);
  await moduleRef.close();
  return registry;
}

const declared = (name: string, ...after: string[]) => ({ definition: { name, after } });
const namesOf = (entries: readonly { definition: { name: string } }[]) =>
  entries.map(({ definition }) => definition.name);

describe(RetentionPolicyRegistry.name, () => {
  it('discovers the owners’ policies, each run by its owner over its own table', async () => {
    const registry = await registryOf(OWNERS);
    const statements = (policies: RetentionPolicyRegistry['policies']) =>
      policies.map(({ name, table, owner }) => ({ name, table, ...owner.statements(name) }));
    expect(statements(registry.policies)).toEqual(statements(await discoverRetentionPolicies()));
    // What another module still refers to stays, read through that module's view: a match whose
    // allocation is live, a ticket a match lists.
    const purgeOf = (name: string) =>
      registry.policies.find((policy) => policy.name === name)?.owner.statements(name).purgeSql;
    expect(purgeOf('matches')).toContain('FROM live_allocations l');
    expect(purgeOf('queue_tickets')).toContain('FROM listed_tickets l');
  });

  it('refuses to start when an owner’s policies are missing', async () => {
    await expect(
      registryOf(OWNERS.filter((owner) => owner !== SessionRetentionModule)),
    ).rejects.toThrow(RetentionRegistrationError);
    await expect(
      registryOf(OWNERS.filter((owner) => owner !== TicketRetentionModule)),
    ).rejects.toThrow(/no module declares a policy over RETENTION_TICKETS_SECONDS/);
    await expect(
      registryOf(OWNERS.filter((owner) => owner !== MatchRetentionModule)),
    ).rejects.toThrow(/policy queue_tickets goes after matches, which no module declares/);
  });

  it('takes each policy after those it names, otherwise in the order the owners are found', () => {
    const problems: string[] = [];
    const entries = [declared('b', 'c'), declared('a'), declared('c'), declared('d', 'a')];
    expect(namesOf(inRoundOrder(entries, problems))).toEqual(['a', 'c', 'b', 'd']);
    expect(problems).toEqual([]);

    expect(inRoundOrder([declared('a', 'b'), declared('b', 'a'), declared('c')], problems)).toEqual(
      [],
    );
    expect(problems).toEqual(['policies a, b go after each other']);
  });
});
