/** A game server's end-of-match report as the allocation records it (reportedAt aside). */
export interface RecordedResult {
  readonly outcome: string;
  readonly winningTeam?: number;
  readonly scores?: Readonly<Record<string, number>>;
}

function describe(result: RecordedResult): string {
  const parts = [result.outcome];
  if (result.winningTeam !== undefined) parts.push(`winning team ${result.winningTeam}`);
  if (result.scores !== undefined) parts.push(`scores ${JSON.stringify(sortedScores(result))}`);
  return parts.join(', ');
}

function sortedScores(result: RecordedResult): [string, number][] {
  return Object.entries(result.scores ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Why `reported` conflicts with the result already recorded for the match, or undefined when it
 * repeats it exactly (outcome, winning team and every score): only an identical repeat may be
 * answered as a replay.
 */
export function resultConflict(
  recorded: RecordedResult,
  reported: RecordedResult,
): string | undefined {
  const same =
    recorded.outcome === reported.outcome &&
    recorded.winningTeam === reported.winningTeam &&
    (recorded.scores === undefined) === (reported.scores === undefined) &&
    JSON.stringify(sortedScores(recorded)) === JSON.stringify(sortedScores(reported));
  if (same) return undefined;
  return `the match has a recorded ${describe(recorded)}; this report says ${describe(reported)}`;
}

/**
 * Why a report reaching a match that has already ended conflicts with how it ended, or undefined
 * for an identical repeat of the recorded result. A match the control plane ended first (no-show,
 * server lost, operator, timeout) has no recorded result, so every report conflicts with it.
 */
export function endedMatchConflict(
  ended: { readonly state: string; readonly failureReason?: string },
  recorded: RecordedResult | undefined,
  reported: RecordedResult,
): string | undefined {
  if (recorded) return resultConflict(recorded, reported);
  const how = ended.failureReason ? `${ended.state} (${ended.failureReason})` : ended.state;
  return `the match ended ${how} before any result was reported; this report says ${describe(reported)}`;
}
