import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { SessionRetentionModule } from '@matchplane/players';
import { TicketRetentionModule } from '@matchplane/tickets';
import { RETENTION_POLICIES, RetentionRegistrationError } from './retention-policy';
import { RetentionPolicyRegistry } from './retention-policy.registry';
import { RETENTION_OWNER_MODULES } from './retention.module';

const OWNERS = RETENTION_OWNER_MODULES;

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

describe(RetentionPolicyRegistry.name, () => {
  it('discovers the owners’ policies: the same statements as the assembled list', async () => {
    const registry = await registryOf(OWNERS);
    const statements = (policies: typeof RETENTION_POLICIES) =>
      policies.map(({ name, table, purgeSql, lagSql }) => ({ name, table, purgeSql, lagSql }));
    expect(statements(registry.policies)).toEqual(statements(RETENTION_POLICIES));
    // What another module still refers to stays, read through that module's view: a match whose
    // allocation is live, a ticket a match lists.
    expect(registry.policies.find((policy) => policy.name === 'matches')?.purgeSql).toContain(
      'FROM live_allocations l',
    );
    expect(registry.policies.find((policy) => policy.name === 'queue_tickets')?.purgeSql).toContain(
      'FROM listed_tickets l',
    );
  });

  it('refuses to start when an owner’s policies are missing', async () => {
    await expect(
      registryOf(OWNERS.filter((owner) => owner !== SessionRetentionModule)),
    ).rejects.toThrow(RetentionRegistrationError);
    await expect(
      registryOf(OWNERS.filter((owner) => owner !== TicketRetentionModule)),
    ).rejects.toThrow(/no module declares policy queue_tickets/);
  });
});
