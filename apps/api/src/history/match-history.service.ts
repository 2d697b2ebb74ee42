import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isUUID } from 'class-validator';
import { ReportedResults } from '@matchplane/allocation';
import type { MatchHistoryEntry, MatchHistoryResponse } from '@matchplane/contracts';
import { MatchHistoryReader, type FinishedMatch } from '@matchplane/matches';
import { decodeCursor, encodeCursor } from '@matchplane/persistence';
import { MatchRatingChanges, type MatchRatingChange } from '@matchplane/players';
import type { RecordedResult } from '@matchplane/domain';

/**
 * A player's own match history: each owner answers its part (the matches module the matches and
 * teams, the allocation module the reported result, the players module the rating change).
 */
@Injectable()
export class MatchHistoryService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly matches: MatchHistoryReader,
    private readonly results: ReportedResults,
    private readonly ratingChanges: MatchRatingChanges,
  ) {}

  async page(playerId: string, limit: number, cursor?: string): Promise<MatchHistoryResponse> {
    const after = cursor === undefined ? undefined : decodeCursor(cursor, (id) => isUUID(id));
    const manager = this.dataSource.manager;
    const found = await this.matches.finishedMatchesOf(manager, playerId, {
      limit: limit + 1,
      ...(after ? { after: { finishedAt: after.at, id: after.id } } : {}),
    });
    const shown = found.slice(0, limit);
    const ids = shown.map((match) => match.id);
    const [results, changes] = await Promise.all([
      this.results.of(manager, ids),
      this.ratingChanges.ofPlayer(manager, playerId, ids),
    ]);
    const last = shown[shown.length - 1];
    return {
      matches: shown.map((match) =>
        entryOf(match, playerId, results.get(match.id), changes.get(match.id)),
      ),
      ...(found.length > limit && last
        ? { nextCursor: encodeCursor(last.position.finishedAt, last.position.id) }
        : {}),
    };
  }
}

function entryOf(
  match: FinishedMatch,
  playerId: string,
  result: RecordedResult | undefined,
  change: MatchRatingChange | undefined,
): MatchHistoryEntry {
  const team = match.teams.find((t) => t.playerIds.includes(playerId))?.team ?? -1;
  return {
    matchId: match.id,
    mode: match.mode,
    region: match.region,
    state: match.state,
    ...(match.endReason === undefined ? {} : { endReason: match.endReason }),
    startedAt: match.startedAt.toISOString(),
    finishedAt: match.finishedAt.toISOString(),
    team,
    teams: match.teams.map((t) => ({ team: t.team, playerIds: [...t.playerIds] })),
    ...(result
      ? {
          result: {
            outcome: result.outcome,
            ...(result.winningTeam === undefined ? {} : { winningTeam: result.winningTeam }),
            ...(result.scores === undefined ? {} : { scores: { ...result.scores } }),
          },
        }
      : {}),
    ...(result?.outcome === 'COMPLETED' && match.state === 'COMPLETED'
      ? {
          outcome:
            result.winningTeam === undefined
              ? ('DRAW' as const)
              : result.winningTeam === team
                ? ('WIN' as const)
                : ('LOSS' as const),
        }
      : {}),
    ...(change
      ? {
          ratingChange: {
            before: change.previousRating,
            after: change.rating,
            delta: change.rating - change.previousRating,
          },
        }
      : {}),
  };
}
