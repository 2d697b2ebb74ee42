import { ConfigError, loadConfig } from '@matchplane/config';
import { MaintenanceConfig } from './maintenance.config';

describe(MaintenanceConfig.name, () => {
  it('loads with its defaults, whose retention windows are consistent', () => {
    expect(loadConfig(MaintenanceConfig, {}).HEALTH_PORT).toBe(9104);
  });

  it('refuses at loading an idempotency window shorter than the session lifetime, naming both', () => {
    expect(() =>
      loadConfig(MaintenanceConfig, {
        RETENTION_IDEMPOTENCY_KEYS_SECONDS: '3600',
        SESSION_TTL_SECONDS: '86400',
      }),
    ).toThrow(
      new ConfigError([
        'RETENTION_IDEMPOTENCY_KEYS_SECONDS must be at least SESSION_TTL_SECONDS (86400): a client that logs in again may replay with its old key (got 3600)',
      ]),
    );
  });

  it('refuses at loading dead letters kept for less than another window', () => {
    expect(() =>
      loadConfig(MaintenanceConfig, {
        RETENTION_OUTBOX_DEAD_LETTERS_SECONDS: '600000',
      }),
    ).toThrow(/RETENTION_OUTBOX_DEAD_LETTERS_SECONDS must be at least RETENTION_/);
  });

  it('refuses at loading a liveness checkpoint interval over half the heartbeat timeout', () => {
    expect(() =>
      loadConfig(MaintenanceConfig, {
        TICKET_LIVENESS_CHECKPOINT_INTERVAL_MS: '16000',
        TICKET_HEARTBEAT_TIMEOUT_MS: '30000',
      }),
    ).toThrow(
      /TICKET_LIVENESS_CHECKPOINT_INTERVAL_MS \(16000\) must be at most half TICKET_HEARTBEAT_TIMEOUT_MS/,
    );
    expect(
      loadConfig(MaintenanceConfig, { TICKET_LIVENESS_CHECKPOINT_INTERVAL_MS: '15000' })
        .TICKET_LIVENESS_CHECKPOINT_INTERVAL_MS,
    ).toBe(15000);
  });
});
