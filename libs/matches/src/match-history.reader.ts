import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** A finished match one player took part in, as the player's history shows it. */
export interface FinishedMatch {
  readonly id: string;
  readonly mode: string;
  readonly region: string;
  /** COMPLETED, FAILED or CANCELLED. */
  readonly state: string;
  /** Why a match that did not complete ended (NO_SHOW, SERVER_LOST, ...). */
  readonly endReason?: string;
  readonly startedAt: Date;
  readonly finishedAt: Date;
  /** Every participant, by team (backfilled players included). */
  readonly teams: readonly { readonly team: number; readonly playerIds: readonly string[] }[];
  /** Where a page ending with this match stopped. */
  readonly position: HistoryPosition;
}

/**
 * Where a page of history stopped: the last match it held. `finishedAt` is exact to the
 * microsecond (as PostgreSQL keeps it, in UTC), which a JavaScript Date would round.
 */
export interface HistoryPosition {
  readonly finishedAt: string;
  readonly id: string;
}

interface FinishedRow {
  id: string;
  mode: string;
  region: string;
  state: string;
  failure_reason: string | null;
  created_at: Date;
  finished_at: Date;
  finished_at_exact: string;
  participants: { player_id: string; team: number }[];
}

/**
 * The matches module's read model of a player's finished matches, newest first, in pages
 * (keyset on finished_at, id, so a page never repeats or skips a match that finishes meanwhile).
 * Kept as long as the matches themselves (RETENTION of matches).
 */
@Injectable()
export class MatchHistoryReader {
  async finishedMatchesOf(
    manager: EntityManager,
    playerId: string,
    page: { limit: number; after?: HistoryPosition },
  ): Promise<FinishedMatch[]> {
    const rows = await manager.query<FinishedRow[]>(
      `SELECT m.id, m.mode, m.region, m.state, m.failure_reason, m.created_at, m.finished_at,
              to_char(m.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                AS finished_at_exact,
              (SELECT json_agg(json_build_object('player_id', o.player_id, 'team', o.team)
                               ORDER BY o.team, o.player_id)
                 FROM match_participants o WHERE o.match_id = m.id) AS participants
         FROM match_participants p JOIN matches m ON m.id = p.match_id
        WHERE p.player_id = $1 AND m.finished_at IS NOT NULL
          AND ($2::timestamptz IS NULL OR (m.finished_at, m.id) < ($2::timestamptz, $3::uuid))
        ORDER BY m.finished_at DESC, m.id DESC
        LIMIT $4`,
      [playerId, page.after?.finishedAt ?? null, page.after?.id ?? null, page.limit],
    );
    return rows.map((row) => ({
      id: row.id,
      mode: row.mode,
      region: row.region,
      state: row.state,
      ...(row.failure_reason === null ? {} : { endReason: row.failure_reason }),
      startedAt: row.created_at,
      finishedAt: row.finished_at,
      teams: teamsOf(row.participants),
      position: { finishedAt: row.finished_at_exact, id: row.id },
    }));
  }
}

function teamsOf(participants: FinishedRow['participants']): FinishedMatch['teams'] {
  const teams = new Map<number, string[]>();
  for (const { player_id: playerId, team } of participants) {
    teams.set(team, [...(teams.get(team) ?? []), playerId]);
  }
  return [...teams].map(([team, playerIds]) => ({ team, playerIds }));
}
