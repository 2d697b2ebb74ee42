import type { AllocatorConfig } from './allocator.config';
import { JoinAuthError, JoinTokenSigner, KeySet, RAW_KEY_ID } from '@matchplane/join-auth';

/** The allocator cannot do its job without key material; this says why in one line. */
export class JoinKeyMaterialError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JoinKeyMaterialError';
  }
}

/**
 * The signer over JOIN_KEYS_FILE's key set and the active key id, or a one-line
 * {@link JoinKeyMaterialError}: file missing, unreadable, empty or malformed, active key id
 * absent. Key material is never part of the message.
 */
export function loadJoinSigner(
  config: Pick<AllocatorConfig, 'JOIN_KEYS_FILE' | 'JOIN_ACTIVE_KEY_ID'>,
): JoinTokenSigner {
  const path = config.JOIN_KEYS_FILE;
  let keys: KeySet;
  try {
    keys = KeySet.loadFile(path);
  } catch (error) {
    const reason = error instanceof JoinAuthError ? error.message : String(error);
    throw new JoinKeyMaterialError(
      `JOIN_KEYS_FILE ${JSON.stringify(path)} holds no usable join keys: ${reason}`,
    );
  }
  const ids = keys.ids();
  const active =
    config.JOIN_ACTIVE_KEY_ID ??
    (ids.length === 1 && ids[0] === RAW_KEY_ID ? RAW_KEY_ID : undefined);
  if (active === undefined) {
    throw new JoinKeyMaterialError(
      `JOIN_ACTIVE_KEY_ID is not set; it must name one of the keys of ${JSON.stringify(path)} (${ids.map((id) => JSON.stringify(id)).join(', ')})`,
    );
  }
  try {
    return new JoinTokenSigner(keys, active);
  } catch (error) {
    const reason = error instanceof JoinAuthError ? error.message : String(error);
    throw new JoinKeyMaterialError(`JOIN_ACTIVE_KEY_ID: ${reason}`);
  }
}
