import { loadKeyFile, type KeySet } from '@matchplane/join-auth';
import type { ApiConfig } from '../api.config';

/**
 * The probe key set the API verifies edge-signed measurements with (PROBE_KEYS_FILE), or null
 * when none is configured. Loaded once at start-up: an unreadable or malformed file stops the API.
 */
export class ProbeMeasurementKeys {
  constructor(readonly keys: KeySet | null) {}

  static load(config: Pick<ApiConfig, 'PROBE_KEYS_FILE'>): ProbeMeasurementKeys {
    if (config.PROBE_KEYS_FILE === undefined) return new ProbeMeasurementKeys(null);
    return new ProbeMeasurementKeys(
      loadKeyFile({
        variable: 'PROBE_KEYS_FILE',
        path: config.PROBE_KEYS_FILE,
        purpose: 'probe',
        fail: (message) => new Error(message),
      }),
    );
  }
}
