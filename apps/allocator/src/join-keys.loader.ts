import type { AllocatorConfig } from './allocator.config';
import {
  activeKeyIdOf,
  JoinAuthError,
  JoinTokenSigner,
  loadKeyFile,
  type ConfiguredKeyFile,
} from '@matchplane/join-auth';

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
  const file: ConfiguredKeyFile = {
    variable: 'JOIN_KEYS_FILE',
    path: config.JOIN_KEYS_FILE,
    purpose: 'join',
    fail: (message) => new JoinKeyMaterialError(message),
  };
  const keys = loadKeyFile(file);
  const active = activeKeyIdOf(file, keys, 'JOIN_ACTIVE_KEY_ID', config.JOIN_ACTIVE_KEY_ID);
  try {
    return new JoinTokenSigner(keys, active);
  } catch (error) {
    const reason = error instanceof JoinAuthError ? error.message : String(error);
    throw new JoinKeyMaterialError(`JOIN_ACTIVE_KEY_ID: ${reason}`);
  }
}
