import { ConfigError, loadConfig } from '@matchplane/config';
import { MaintenanceConfig } from '../maintenance.config';
import { retentionPurgerOptions } from './retention.module';
import { cutoffOf, retentionWindowProblems, type RetentionPolicy } from './retention-policy';
import { RETENTION_POLICY_NAMES } from '../../../../test/support/retention-policies';
import { discoverRetentionPolicies } from './retention-policy.registry';

describe('retention policies', () => {
  const defaults = loadConfig(MaintenanceConfig, {});
  let RETENTION_POLICIES: readonly RetentionPolicy[];
  const retentionPolicy = (name: string) =>
    RETENTION_POLICIES.find((policy) => policy.name === name)!;

  beforeAll(async () => {
    RETENTION_POLICIES = await discoverRetentionPolicies();
  });

  it('has one policy per name, in an order that deletes matches before their tickets', () => {
    const names = RETENTION_POLICIES.map((policy) => policy.name);
    expect(names).toEqual([...RETENTION_POLICY_NAMES]);
    const order = names.indexOf.bind(names);
    expect(order('matches')).toBeLessThan(order('queue_tickets'));
    // A dead letter leaving its window releases the idempotency keys it held in the same pass.
    expect(order('outbox_dead_letters')).toBeLessThan(order('idempotency_keys'));
  });

  it('locks every batch SKIP LOCKED and bounds it by $2', () => {
    for (const policy of RETENTION_POLICIES) {
      const { purgeSql } = policy.owner.statements(policy.name);
      expect(purgeSql).toMatch(/LIMIT \$2\s+FOR UPDATE OF \w+ SKIP LOCKED\)\)$/);
      expect(purgeSql.startsWith(`DELETE FROM ${policy.table}\n`)).toBe(true);
    }
  });

  it('measures cutoffs back from now by the window', () => {
    const now = new Date('2026-06-01T12:00:00.000Z');
    expect(cutoffOf(retentionPolicy('idempotency_keys'), defaults, now)).toEqual(
      new Date('2026-05-30T12:00:00.000Z'),
    );
  });

  it('keeps dead letters longest by default', () => {
    expect(retentionWindowProblems(defaults)).toEqual([]);
    for (const policy of RETENTION_POLICIES) {
      expect(defaults.RETENTION_OUTBOX_DEAD_LETTERS_SECONDS).toBeGreaterThanOrEqual(
        defaults[policy.window],
      );
    }
  });

  it('refuses windows that would delete dead letters before other rows, naming each', () => {
    // loadConfig refuses this combination (maintenance.config.spec.ts); the policy's own check here.
    const config = {
      ...defaults,
      RETENTION_OUTBOX_DEAD_LETTERS_SECONDS: 86_400,
      RETENTION_MATCHES_SECONDS: 86_401,
    };

    expect(retentionWindowProblems(config)).toEqual([
      'RETENTION_OUTBOX_DEAD_LETTERS_SECONDS must be at least RETENTION_OUTBOX_PUBLISHED_SECONDS (604800): dead letters are kept longest (got 86400)',
      'RETENTION_OUTBOX_DEAD_LETTERS_SECONDS must be at least RETENTION_IDEMPOTENCY_KEYS_SECONDS (172800): dead letters are kept longest (got 86400)',
      'RETENTION_OUTBOX_DEAD_LETTERS_SECONDS must be at least RETENTION_SESSIONS_SECONDS (604800): dead letters are kept longest (got 86400)',
      'RETENTION_OUTBOX_DEAD_LETTERS_SECONDS must be at least RETENTION_MATCHES_SECONDS (86401): dead letters are kept longest (got 86400)',
      'RETENTION_OUTBOX_DEAD_LETTERS_SECONDS must be at least RETENTION_TICKETS_SECONDS (604800): dead letters are kept longest (got 86400)',
    ]);
    expect(() => retentionPurgerOptions(config)).toThrow(ConfigError);
  });

  it("refuses an idempotency window shorter than a session or the clients' retry horizon, naming both variables", () => {
    const config = {
      ...defaults,
      RETENTION_IDEMPOTENCY_KEYS_SECONDS: 1_800,
      SESSION_TTL_SECONDS: 86_400,
      CLIENT_RETRY_HORIZON_SECONDS: 3_600,
    };

    expect(retentionWindowProblems(config)).toEqual([
      'RETENTION_IDEMPOTENCY_KEYS_SECONDS must be at least SESSION_TTL_SECONDS (86400): a client that logs in again may replay with its old key (got 1800)',
      'RETENTION_IDEMPOTENCY_KEYS_SECONDS must be at least CLIENT_RETRY_HORIZON_SECONDS (3600): a client may still replay until then (got 1800)',
    ]);
    expect(() => retentionPurgerOptions(config)).toThrow(ConfigError);
  });

  it('accepts an idempotency window equal to the longer horizon', () => {
    const config = loadConfig(MaintenanceConfig, {
      RETENTION_IDEMPOTENCY_KEYS_SECONDS: '7200',
      SESSION_TTL_SECONDS: '7200',
      CLIENT_RETRY_HORIZON_SECONDS: '600',
    });
    expect(retentionWindowProblems(config)).toEqual([]);
  });

  it('takes the purger settings from the configuration', () => {
    expect(retentionPurgerOptions(defaults)).toEqual({
      windows: defaults,
      batchSize: 1_000,
      passBudgetMs: 20_000,
      batchPauseMs: 10,
      pressurePauseMs: 1_000,
      pressureLockWaiters: 3,
    });
  });
});
