/**
 * Operator holds on the queue (docs/architecture/live-operations.md). A mode or a region is
 * either open (no control), PAUSED (a hold: nothing new enters, nothing is matched there, searching
 * tickets wait) or DRAINING (taken out of service: nothing new enters; what is already queued or
 * matched finishes).
 */
export type QueueControlScope = 'mode' | 'region';
export type QueueControlState = 'PAUSED' | 'DRAINING';

export interface QueueControl {
  readonly scope: QueueControlScope;
  readonly name: string;
  readonly state: QueueControlState;
  readonly reason: string;
  /** How long the operator expects the hold to last: the Retry-After of a refused enqueue. */
  readonly retryAfterSeconds?: number;
  readonly setBy: string;
  readonly setAt: Date;
}

/** Why a new ticket may not enter the queue now, or undefined when it may. */
export interface AdmissionRefusal {
  readonly state: QueueControlState;
  readonly detail: string;
  readonly retryAfterSeconds?: number;
}

function refusal(control: QueueControl, what: string): AdmissionRefusal {
  const verb = control.state === 'PAUSED' ? 'paused' : 'draining';
  return {
    state: control.state,
    detail: `${what} is ${verb} by an operator (${control.reason}); nothing new may queue now`,
    ...(control.retryAfterSeconds === undefined
      ? {}
      : { retryAfterSeconds: control.retryAfterSeconds }),
  };
}

/**
 * A new ticket of `mode` from a player who measured `regions` enters unless the mode is held, or
 * every region it could be placed in is.
 */
export function admissionRefusal(
  controls: readonly QueueControl[],
  mode: string,
  regions: readonly string[],
): AdmissionRefusal | undefined {
  const modeControl = controls.find((c) => c.scope === 'mode' && c.name === mode);
  if (modeControl) return refusal(modeControl, `Mode ${mode}`);
  const closed = closedRegions(controls);
  const open = regions.filter((region) => !closed.has(region));
  if (regions.length === 0 || open.length > 0) return undefined;
  const first = controls.find((c) => c.scope === 'region' && c.name === regions[0]);
  return first ? refusal(first, `Every region you measured (${regions.join(', ')})`) : undefined;
}

/** Regions no new match may be placed in: paused or draining. */
export function closedRegions(controls: readonly QueueControl[]): Set<string> {
  return new Set(controls.filter((c) => c.scope === 'region').map((c) => c.name));
}

/** The pause holding `mode` (nothing is matched in it), if any; a draining mode still matches. */
export function modePause(
  controls: readonly QueueControl[],
  mode: string,
): QueueControl | undefined {
  return controls.find((c) => c.scope === 'mode' && c.name === mode && c.state === 'PAUSED');
}
