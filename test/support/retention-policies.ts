import type { RetentionPolicy } from '../../apps/maintenance/src/retention/retention-policy';
import { discoverRetentionPolicies } from '../../apps/maintenance/src/retention/retention-policy.registry';

/**
 * The policies the owners declare, in the order a round takes them: what the suites expect to
 * find (retention-purge asserts the discovered list is exactly this), named before discovery so
 * that `it.each` can list them.
 */
export const RETENTION_POLICY_NAMES = [
  'outbox_dead_letters',
  'outbox_published',
  'idempotency_keys',
  'sessions_expired',
  'sessions_revoked',
  'probe_challenges',
  'probe_measurements',
  'matches',
  'queue_tickets',
] as const;
export type RetentionPolicyName = (typeof RETENTION_POLICY_NAMES)[number];

let discovered: Promise<readonly RetentionPolicy[]> | undefined;

/** The policies as the maintenance app discovers them (once per test file). */
export function retentionPolicies(): Promise<readonly RetentionPolicy[]> {
  discovered ??= discoverRetentionPolicies();
  return discovered;
}

/** One discovered policy by name; call after {@link retentionPolicies} resolved. */
export async function retentionPolicy(name: string): Promise<RetentionPolicy> {
  const policy = (await retentionPolicies()).find((candidate) => candidate.name === name);
  if (!policy) throw new Error(`no module declares retention policy ${name}`);
  return policy;
}
