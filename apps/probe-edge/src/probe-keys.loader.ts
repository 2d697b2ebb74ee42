import { JoinAuthError, KeySet, RAW_KEY_ID } from '@matchplane/join-auth';
import type { ProbeEdgeConfig } from './probe-edge.config';

/** The edge cannot sign without key material; this says why in one line. */
export class ProbeKeyMaterialError extends Error {
  override name = 'ProbeKeyMaterialError';
}

export interface ProbeSigningKeys {
  readonly keys: KeySet;
  readonly activeKeyId: string;
}

/**
 * PROBE_KEYS_FILE's key set and the active key id, or a one-line {@link ProbeKeyMaterialError}
 * (file missing, unreadable, malformed, active key id absent), as the allocator does for join keys.
 * Key material is never part of the message.
 */
export function loadProbeSigningKeys(
  config: Pick<ProbeEdgeConfig, 'PROBE_KEYS_FILE' | 'PROBE_ACTIVE_KEY_ID'>,
): ProbeSigningKeys {
  const path = config.PROBE_KEYS_FILE;
  let keys: KeySet;
  try {
    keys = KeySet.loadFile(path);
  } catch (error) {
    const reason = error instanceof JoinAuthError ? error.message : String(error);
    throw new ProbeKeyMaterialError(
      `PROBE_KEYS_FILE ${JSON.stringify(path)} holds no usable probe keys: ${reason}`,
    );
  }
  const ids = keys.ids();
  const activeKeyId =
    config.PROBE_ACTIVE_KEY_ID ??
    (ids.length === 1 && ids[0] === RAW_KEY_ID ? RAW_KEY_ID : undefined);
  if (activeKeyId === undefined || !keys.has(activeKeyId)) {
    throw new ProbeKeyMaterialError(
      `PROBE_ACTIVE_KEY_ID ${activeKeyId === undefined ? 'is not set' : `${JSON.stringify(activeKeyId)} is not in the key file`}; it must name one of the keys of ${JSON.stringify(path)} (${ids.map((id) => JSON.stringify(id)).join(', ')})`,
    );
  }
  return { keys, activeKeyId };
}
