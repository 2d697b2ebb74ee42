import { ValidatedAgainstQueueModes } from './queue-attributes';
import { readModeTimeouts } from './search-timeouts';

/** The shortest and longest rejoin grace window a mode may have (ms). */
export const REJOIN_GRACE_RANGE_MS = { min: 1_000, max: 600_000 } as const;

/**
 * QUEUE_REJOIN_GRACE: `mode=ms` entries, comma-separated, `*=ms` for every mode not named (e.g.
 * `*=60000,ranked=120000`). Answers each configured mode's window; a mode with neither gives a
 * player who leaves no time to come back (abandoned at the next reconciliation pass).
 */
export function parseRejoinGrace(raw: string, modes: readonly string[]): Map<string, number> {
  const { timeouts, problems } = readModeTimeouts(raw, modes, REJOIN_GRACE_RANGE_MS);
  if (problems.length > 0) throw new Error(problems.join('; '));
  return timeouts;
}

/** Validates QUEUE_REJOIN_GRACE against the object's QUEUE_MODES, naming every problem. */
export function IsRejoinGrace(): PropertyDecorator {
  return ValidatedAgainstQueueModes(
    'isRejoinGrace',
    (raw, modes) => readModeTimeouts(raw, modes, REJOIN_GRACE_RANGE_MS).problems,
  );
}
