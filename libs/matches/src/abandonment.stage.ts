import type { DataSource } from 'typeorm';
import { RowsEndedOneByOneStage, type UnitOfWork } from '@matchplane/persistence';
import type { MatchReconciliationOptions } from './match-reconciliation.options';
import type { MatchLifecycle } from './match-lifecycle.service';
import type { MatchPresenceService } from './match-presence.service';

interface OverdueLeaver {
  match_id: string;
  player_id: string;
}

/**
 * Players of a running match whose rejoin deadline passed, oldest deadline first, `skip` left
 * alone (`matchId/playerId`); match_participants_rejoin_deadline_idx narrows them to those away.
 * The match row is locked (the presence writers take it first too), its roster row with it.
 */
const OVERDUE_LEAVERS_SQL = `SELECT p.match_id, p.player_id
  FROM match_participants p JOIN matches m ON m.id = p.match_id
 WHERE p.rejoin_deadline <= $1::timestamptz
   AND p.abandoned_at IS NULL
   AND m.state = 'IN_PROGRESS'
   AND (p.match_id::text || '/' || p.player_id::text) <> ALL ($2::text[])
 ORDER BY p.rejoin_deadline
 LIMIT 1
   FOR UPDATE OF m SKIP LOCKED`;

/**
 * Abandons the players who left a running match and did not rejoin within their mode's grace
 * window (QUEUE_REJOIN_GRACE), one short transaction each through MatchPresenceService.abandon:
 * `match.presence_changed` ABANDONED to every participant, the ticket FAILED ABANDONED, the
 * offence cooldown; the rated loss follows when the match completes.
 */
export class AbandonmentStage extends RowsEndedOneByOneStage<OverdueLeaver> {
  protected readonly claimSql = OVERDUE_LEAVERS_SQL;

  constructor(
    dataSource: DataSource,
    private readonly lifecycle: MatchLifecycle,
    private readonly presence: MatchPresenceService,
    private readonly options: Pick<MatchReconciliationOptions, 'batchSize' | 'noShowPenalty'>,
  ) {
    // After the stuck-match rules (21-24) and silent_servers (25): a match that ended takes its leavers with it.
    super('abandoned_players', 'player_abandoned', 26, dataSource, options.batchSize);
  }

  protected keyOf(row: OverdueLeaver): string {
    return `${row.match_id}/${row.player_id}`;
  }

  protected async end(unit: UnitOfWork, row: OverdueLeaver, now: Date): Promise<void> {
    const match = await this.lifecycle.matches.load(unit.manager, row.match_id);
    const current = await this.presence.presenceOf(unit.manager, row.match_id, row.player_id);
    if (match?.state !== 'IN_PROGRESS' || current?.presence !== 'LEFT') return;
    await this.presence.abandon(unit, match, row.player_id, this.options.noShowPenalty, now);
  }
}
