import { loadSigningKeys, type SigningKeys } from '@matchplane/join-auth';
import type { ProbeEdgeConfig } from './probe-edge.config';

/** The edge cannot sign without key material; this says why in one line. */
export class ProbeKeyMaterialError extends Error {
  override name = 'ProbeKeyMaterialError';
}

/**
 * PROBE_KEYS_FILE's key set and the active key id, or a one-line {@link ProbeKeyMaterialError}
 * (file missing, unreadable, malformed, active key id absent or not in the file), as the allocator
 * does for join keys. Key material is never part of the message.
 */
export function loadProbeSigningKeys(
  config: Pick<ProbeEdgeConfig, 'PROBE_KEYS_FILE' | 'PROBE_ACTIVE_KEY_ID'>,
): SigningKeys {
  return loadSigningKeys(
    {
      variable: 'PROBE_KEYS_FILE',
      path: config.PROBE_KEYS_FILE,
      purpose: 'probe',
      fail: (message) => new ProbeKeyMaterialError(message),
    },
    config.PROBE_ACTIVE_KEY_ID,
    'PROBE_ACTIVE_KEY_ID',
  );
}
