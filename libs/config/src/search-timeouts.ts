import { ValidatedAgainstQueueModes } from './queue-attributes';

/** The shortest and longest search timeout a mode may have (ms). */
export const SEARCH_TIMEOUT_RANGE_MS = { min: 5_000, max: 86_400_000 } as const;

/**
 * QUEUE_SEARCH_TIMEOUTS: `mode=ms` entries, comma-separated, `*=ms` for every mode not named
 * (e.g. `*=600000,ranked=1200000`); a mode with neither searches until it is matched or leaves.
 * Answers each configured mode's timeout.
 */
export function parseSearchTimeouts(raw: string, modes: readonly string[]): Map<string, number> {
  const { timeouts, problems } = readModeTimeouts(raw, modes, SEARCH_TIMEOUT_RANGE_MS);
  if (problems.length > 0) throw new Error(problems.join('; '));
  return timeouts;
}

/** `mode=ms` entries (`*` for every mode not named), each within `range`; see parseSearchTimeouts. */
export function readModeTimeouts(
  raw: string,
  modes: readonly string[] | undefined,
  range: { readonly min: number; readonly max: number },
): { timeouts: Map<string, number>; problems: string[] } {
  const named = new Map<string, number>();
  const problems: string[] = [];
  for (const entry of raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)) {
    const [mode, value, ...rest] = entry.split('=');
    const ms = Number(value);
    if (!mode || value === undefined || rest.length > 0) {
      problems.push(`"${entry}" is not mode=ms`);
    } else if (!Number.isInteger(ms) || ms < range.min || ms > range.max) {
      problems.push(`"${entry}": the timeout must be whole ms from ${range.min} to ${range.max}`);
    } else if (named.has(mode)) {
      problems.push(`names ${mode} twice`);
    } else if (mode !== '*' && modes && !modes.includes(mode)) {
      problems.push(`names mode ${JSON.stringify(mode)}, which QUEUE_MODES does not list`);
    } else {
      named.set(mode, ms);
    }
  }
  const fallback = named.get('*');
  const timeouts = new Map<string, number>();
  for (const mode of modes ?? []) {
    const ms = named.get(mode) ?? fallback;
    if (ms !== undefined) timeouts.set(mode, ms);
  }
  return { timeouts, problems };
}

/** Validates QUEUE_SEARCH_TIMEOUTS against the object's QUEUE_MODES, naming every problem. */
export function IsSearchTimeouts(): PropertyDecorator {
  return ValidatedAgainstQueueModes(
    'isSearchTimeouts',
    (raw, modes) => readModeTimeouts(raw, modes, SEARCH_TIMEOUT_RANGE_MS).problems,
  );
}
