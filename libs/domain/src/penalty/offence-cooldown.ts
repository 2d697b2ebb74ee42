/**
 * The one cooldown rule for a player's offences (a no-show, a declined or missed ready check, an
 * abandoned match): the cooldown runs `base * 2^offences` from the new offence, at most `cap`,
 * where `offences` counts the player's earlier offences still in force. Offences decay: each
 * whole `decay` period since the last offence forgives one, so a player who misbehaved once long
 * ago starts again from `base` (docs/architecture/penalties.md).
 */
export interface OffencePolicy {
  readonly baseMs: number;
  readonly capMs: number;
  /** One offence is forgiven per this much time without a new one; 0 never forgives. */
  readonly decayMs: number;
}

export interface OffenceRecord {
  /** Offences in force when the last one was recorded (that one included). */
  readonly count: number;
  /** When the last offence was recorded; undefined when there was none. */
  readonly lastAt?: Date;
}

/** The offences of `record` still in force at `now`, after decay. */
export function offencesInForce(record: OffenceRecord, now: Date, policy: OffencePolicy): number {
  if (record.count <= 0) return 0;
  // Offences recorded before decay existed carry no time: they count until the next one.
  if (record.lastAt === undefined || policy.decayMs <= 0) return record.count;
  const forgiven = Math.floor(
    Math.max(0, now.getTime() - record.lastAt.getTime()) / policy.decayMs,
  );
  return Math.max(0, record.count - forgiven);
}

/**
 * A new offence at `now`: the record after it, and the cooldown's end (never shortening one
 * already in force, `currentUntil`).
 */
export function recordOffence(
  record: OffenceRecord,
  now: Date,
  policy: OffencePolicy,
  currentUntil?: Date,
): { record: Required<OffenceRecord>; cooldownUntil: Date } {
  const earlier = offencesInForce(record, now, policy);
  const lengthMs = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(earlier, 40));
  const until = new Date(now.getTime() + lengthMs);
  return {
    record: { count: earlier + 1, lastAt: new Date(now.getTime()) },
    cooldownUntil: currentUntil && currentUntil > until ? new Date(currentUntil.getTime()) : until,
  };
}
