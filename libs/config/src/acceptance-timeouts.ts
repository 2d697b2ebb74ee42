import { ValidatedAgainstQueueModes } from './queue-attributes';
import { readModeTimeouts } from './search-timeouts';

/** The shortest and longest ready check a mode may have (ms). */
export const ACCEPTANCE_TIMEOUT_RANGE_MS = { min: 1_000, max: 300_000 } as const;

/**
 * QUEUE_ACCEPTANCE_TIMEOUTS: `mode=ms` entries, comma-separated, `*=ms` for every mode not named
 * (e.g. `ranked=20000`); a mode with neither has no ready check. Answers each configured mode's
 * timeout.
 */
export function parseAcceptanceTimeouts(
  raw: string,
  modes: readonly string[],
): Map<string, number> {
  const { timeouts, problems } = readModeTimeouts(raw, modes, ACCEPTANCE_TIMEOUT_RANGE_MS);
  if (problems.length > 0) throw new Error(problems.join('; '));
  return timeouts;
}

/** Validates QUEUE_ACCEPTANCE_TIMEOUTS against the object's QUEUE_MODES, naming every problem. */
export function IsAcceptanceTimeouts(): PropertyDecorator {
  return ValidatedAgainstQueueModes(
    'isAcceptanceTimeouts',
    (raw, modes) => readModeTimeouts(raw, modes, ACCEPTANCE_TIMEOUT_RANGE_MS).problems,
  );
}
