import type { AllocatorConfig } from './allocator.config';
import { JoinTokenSigner, loadSigningKeys } from '@matchplane/join-auth';

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
 * absent or not in the file. Key material is never part of the message.
 */
export function loadJoinSigner(
  config: Pick<AllocatorConfig, 'JOIN_KEYS_FILE' | 'JOIN_ACTIVE_KEY_ID'>,
): JoinTokenSigner {
  const { keys, activeKeyId } = loadSigningKeys(
    {
      variable: 'JOIN_KEYS_FILE',
      path: config.JOIN_KEYS_FILE,
      purpose: 'join',
      fail: (message) => new JoinKeyMaterialError(message),
    },
    config.JOIN_ACTIVE_KEY_ID,
    'JOIN_ACTIVE_KEY_ID',
  );
  return new JoinTokenSigner(keys, activeKeyId);
}
