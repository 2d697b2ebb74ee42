import type { JoinKeyUsage } from '@matchplane/allocation';

/** One join key id: whether the key set holds it, what it still signs, and whether it can go. */
export interface JoinKeyStatus {
  readonly keyId: string;
  /** The allocator's JOIN_KEYS_FILE holds the key. */
  readonly held: boolean;
  /** The allocator signs with it (JOIN_ACTIVE_KEY_ID). */
  readonly active: boolean;
  readonly unexpiredTokens: number;
  readonly liveRosters: number;
  readonly lastTokenExpiresAt: string | undefined;
  /**
   * Held, not active, and nothing live names it: removing it from the key set refuses nothing a
   * game server still has to verify (docs/JOIN-AUTH.md, step 3 of "Key rotation").
   */
  readonly retirable: boolean;
  /** Not held any more while a live token or roster still names it: those players cannot join. */
  readonly removedWhileInUse: boolean;
}

/**
 * The status of every key id that the key set holds or that a recorded token or roster names,
 * in key id order.
 */
export function joinKeyStatuses(
  usage: readonly JoinKeyUsage[],
  heldKeyIds: readonly string[],
  activeKeyId: string,
): JoinKeyStatus[] {
  const byKey = new Map(usage.map((use) => [use.keyId, use]));
  const keyIds = [...new Set([...heldKeyIds, ...byKey.keys()])].sort();
  return keyIds.map((keyId) => {
    const use = byKey.get(keyId);
    const inUse = (use?.unexpiredTokens ?? 0) > 0 || (use?.liveRosters ?? 0) > 0;
    const held = heldKeyIds.includes(keyId);
    const active = keyId === activeKeyId;
    return {
      keyId,
      held,
      active,
      unexpiredTokens: use?.unexpiredTokens ?? 0,
      liveRosters: use?.liveRosters ?? 0,
      lastTokenExpiresAt: use?.lastTokenExpiresAt?.toISOString(),
      retirable: held && !active && !inUse,
      removedWhileInUse: !held && inUse,
    };
  });
}
