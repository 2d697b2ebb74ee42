import { Logger } from '@nestjs/common';
import type { MatchResultRequest } from '@matchplane/contracts';
import type { JoinListener } from './join.listener';
import type { VerifiedRoster } from './roster.gate';

export interface MatchRunnerOptions {
  durationMs: number;
  tickIntervalMs: number;
}

/**
 * The reference server's trivial match: for `durationMs` it sends every connected player a tick
 * each `tickIntervalMs`, and a player scores one point per tick received. The team with the most
 * points wins; a tie goes to the lowest team index, so the outcome is deterministic. The roster
 * is the listener's: players a backfill adds during the match score and count for their team.
 */
export class MatchRunner {
  private readonly logger = new Logger(MatchRunner.name);

  constructor(
    private readonly players: JoinListener,
    private readonly options: MatchRunnerOptions,
  ) {}

  /** Plays the match to its end; undefined when `signal` aborted it first. */
  async play(signal: AbortSignal): Promise<MatchResultRequest | undefined> {
    const { durationMs, tickIntervalMs } = this.options;
    const scores = new Map<string, number>();
    this.players.broadcast({ type: 'started', durationMs });
    this.players.markStarted(durationMs);
    this.logger.log(
      `match ${this.players.currentRoster().matchId} started with ${this.players.connectedPlayerIds().length} players for ${durationMs} ms`,
    );

    const startedAt = Date.now();
    for (let seq = 1; ; seq += 1) {
      const elapsed = Date.now() - startedAt;
      const wait = Math.min(tickIntervalMs, durationMs - elapsed);
      if (wait <= 0) break;
      if (!(await sleep(wait, signal))) return undefined;
      const remainingMs = Math.max(0, durationMs - (Date.now() - startedAt));
      for (const playerId of this.players.connectedPlayerIds()) {
        if (this.players.send(playerId, { type: 'tick', seq, remainingMs })) {
          scores.set(playerId, (scores.get(playerId) ?? 0) + 1);
        }
      }
    }
    const played = this.players.playedRoster();
    for (const playerId of played.players.keys()) scores.set(playerId, scores.get(playerId) ?? 0);
    return decideResult(played, scores);
  }
}

/** COMPLETED, won by the team with the most points (ties: the lowest team index). */
export function decideResult(
  roster: VerifiedRoster,
  scores: ReadonlyMap<string, number>,
): MatchResultRequest {
  const teamPoints = new Map<number, number>(roster.teams.map((team) => [team, 0]));
  for (const player of roster.players.values()) {
    teamPoints.set(
      player.team,
      (teamPoints.get(player.team) ?? 0) + (scores.get(player.playerId) ?? 0),
    );
  }
  let winningTeam: number | undefined;
  let best = -1;
  for (const team of roster.teams) {
    const points = teamPoints.get(team) ?? 0;
    if (points > best) {
      best = points;
      winningTeam = team;
    }
  }
  return {
    outcome: 'COMPLETED',
    ...(winningTeam !== undefined ? { winningTeam } : {}),
    scores: Object.fromEntries([...scores.entries()].sort(([a], [b]) => (a < b ? -1 : 1))),
  };
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
