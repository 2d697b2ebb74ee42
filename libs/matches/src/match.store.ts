import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import {
  addParticipants,
  createMatch,
  MATCH_HISTORY_EVENT_TYPES,
  transitionMatch,
  TERMINAL_MATCH_STATES,
  type MatchChange,
  type MatchCommand,
  type MatchHistoryEvent,
  type MatchParticipant,
  type MatchParticipantsChange,
  type MatchSnapshot,
} from '@matchplane/domain';
import { envelopesFor, OutboxSignal, OutboxWriter, retainedEvents } from '@matchplane/outbox';
import { RETRYABLE_SQLSTATES, sqlStateOf, type UnitOfWork } from '@matchplane/persistence';
import {
  MatchNotFoundError,
  StaleMatchRevisionError,
  toMatchSnapshot,
  type MatchRow,
  type NewMatchInput,
  type NewParticipant,
  writeNextMatchRevision,
} from './match.rows';

/**
 * The match aggregate: owns `matches` and `match_participants`. Every change is a libs/domain
 * transition applied with its envelopes in the caller's transaction, revision + 1 under the
 * optimistic `WHERE revision = $n` update, so a match's revisions are gapless and in commit order.
 */
@Injectable()
export class MatchStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxWriter,
    private readonly signal: OutboxSignal,
  ) {}

  /**
   * Creates a match (ALLOCATING, revision 1) with its participants, in `unit`'s transaction; the
   * relay is woken once it commits.
   */
  async create(unit: UnitOfWork, input: NewMatchInput, now = new Date()): Promise<MatchChange> {
    const change = createMatch(
      {
        id: input.id ?? randomUUID(),
        mode: input.mode,
        region: input.region,
        awaitingAcceptance: input.awaitingAcceptance,
        participants: input.participants.map(({ playerId, ticketId, team }) => ({
          playerId,
          ticketId,
          team,
        })),
      },
      now,
    );
    const { match } = change;
    const roster = input.participants;
    const parameters = [
      match.id,
      match.mode,
      match.region,
      match.state,
      match.revision,
      now,
      roster.map((p) => p.playerId),
      roster.map((p) => p.ticketId),
      roster.map((p) => p.team),
      roster.map((p) => p.rating),
      input.rated ?? true,
      input.ruleSetVersion ?? null,
    ];
    const events = this.outbox.appendSql(envelopesFor(change.events), parameters);
    // One statement: the match, its roster and its event (the roster's foreign key to the match is
    // checked at the end of the statement, when the match row exists).
    await unit.manager.query(
      `WITH created AS (
         INSERT INTO matches (id, mode, region, state, revision, state_changed_at, created_at, updated_at, rated, rule_set_version)
         VALUES ($1, $2, $3, $4, $5, $6, $6, $6, $11, $12)
       ), roster AS (
         INSERT INTO match_participants (match_id, player_id, ticket_id, team, rating_at_match)
         SELECT $1, p.player_id, p.ticket_id, p.team, p.rating
           FROM unnest($7::uuid[], $8::uuid[], $9::int[], $10::float8[]) AS p(player_id, ticket_id, team, rating)
       )
       ${events.sql}`,
      [...parameters, ...events.parameters],
    );
    this.signal.wakeAfter(unit);
    return change;
  }

  /** Whether the match's result rates its players (false for an unranked lobby's match). */
  async isRated(manager: EntityManager, matchId: string): Promise<boolean> {
    const rows = await manager.query<{ rated: boolean }[]>(
      `SELECT rated FROM matches WHERE id = $1`,
      [matchId],
    );
    return rows[0]?.rated ?? true;
  }

  /**
   * Applies one transition in `unit`'s transaction. With `expectedRevision` the caller's view
   * must still be current (else {@link StaleMatchRevisionError}); without it the current row is
   * read and the transition computed from it.
   */
  async transition(
    unit: UnitOfWork,
    matchId: string,
    command: MatchCommand,
    options: { expectedRevision?: number; now?: Date } = {},
  ): Promise<MatchChange> {
    const current = await this.load(unit.manager, matchId);
    if (!current) throw new MatchNotFoundError(matchId);
    if (options.expectedRevision !== undefined && current.revision !== options.expectedRevision) {
      throw new StaleMatchRevisionError(matchId, options.expectedRevision);
    }
    const [change] = await this.advance(unit, current, [command], options.now ?? new Date());
    return change as MatchChange;
  }

  /**
   * Applies `commands` in turn to `current` (read in this transaction) and writes them in one
   * statement: revision + the number of commands, each revision still announced by its own
   * envelope. Throws {@link StaleMatchRevisionError} when the row is no longer at `current`'s
   * revision. The relay is woken once `unit` commits.
   */
  async advance(
    unit: UnitOfWork,
    current: MatchSnapshot,
    commands: readonly MatchCommand[],
    now: Date,
  ): Promise<MatchChange[]> {
    const changes: MatchChange[] = [];
    let match = current;
    for (const command of commands) {
      const change = transitionMatch(match, command, now);
      changes.push(change);
      match = change.match;
    }
    if (changes.length === 0) return changes;
    await this.write(unit.manager, current, changes, now);
    this.signal.wakeAfter(unit);
    return changes;
  }

  /**
   * Writes computed transitions and their events in one statement (atomic on its own, so it needs
   * no transaction around it); the UPDATE's `WHERE revision = $n` makes a concurrent writer's win a
   * {@link StaleMatchRevisionError} and appends nothing. The caller wakes the relay.
   */
  private async write(
    manager: EntityManager,
    current: MatchSnapshot,
    changes: readonly MatchChange[],
    now: Date,
  ): Promise<void> {
    const last = changes[changes.length - 1]!.match;
    const to = last.state;
    const parameters = [
      current.id,
      current.revision,
      to,
      now,
      last.failureReason ?? null,
      TERMINAL_MATCH_STATES.has(to),
      changes.length,
      last.serverRegion ?? null,
    ];
    const events = this.outbox.appendSql(
      envelopesFor(changes.flatMap((change) => change.events)),
      parameters,
      'changed',
    );
    const rows = await manager.query<{ revision: string }[]>(
      `WITH changed AS (
         UPDATE matches
            SET state = $3, revision = revision + $7, state_changed_at = $4, updated_at = $4,
                failure_reason = COALESCE($5, failure_reason),
                finished_at = CASE WHEN $6 THEN $4 ELSE finished_at END,
                server_region = COALESCE($8, server_region)
          WHERE id = $1 AND revision = $2
          RETURNING revision
       ), appended AS (${events.sql})
       SELECT revision FROM changed`,
      [...parameters, ...events.parameters],
    );
    if (rows.length !== 1) throw new StaleMatchRevisionError(current.id, current.revision);
  }

  /**
   * A backfill's players join the running match `current` (read under its row lock in this
   * transaction): their participant rows and the match's `match.participants_added`, in one
   * statement, revision + 1 under `WHERE revision = $n`. The relay is woken once `unit` commits.
   */
  async addParticipants(
    unit: UnitOfWork,
    current: MatchSnapshot,
    added: readonly NewParticipant[],
    backfillRequestId: string,
    now: Date,
  ): Promise<MatchParticipantsChange> {
    const change = addParticipants(
      current,
      added.map(({ playerId, ticketId, team }) => ({ playerId, ticketId, team })),
      backfillRequestId,
      now,
    );
    const parameters = [
      current.id,
      current.revision,
      now,
      added.map((p) => p.playerId),
      added.map((p) => p.ticketId),
      added.map((p) => p.team),
      added.map((p) => p.rating),
      backfillRequestId,
    ];
    await writeNextMatchRevision(unit.manager, this.outbox, current, {
      parameters,
      companion: `roster AS (
         INSERT INTO match_participants (match_id, player_id, ticket_id, team, rating_at_match, backfill_request_id)
         SELECT $1, p.player_id, p.ticket_id, p.team, p.rating, $8
           FROM unnest($4::uuid[], $5::uuid[], $6::int[], $7::float8[]) AS p(player_id, ticket_id, team, rating)
          WHERE EXISTS (SELECT 1 FROM changed)
       )`,
      events: change.events,
    });
    this.signal.wakeAfter(unit);
    return change;
  }

  /** The tickets of the participants backfill request `requestId` added to the match. */
  async participantsAddedBy(
    manager: EntityManager,
    matchId: string,
    requestId: string,
  ): Promise<string[]> {
    const rows = await manager.query<{ ticket_id: string }[]>(
      `SELECT ticket_id FROM match_participants
        WHERE match_id = $1 AND backfill_request_id = $2 ORDER BY ticket_id`,
      [matchId, requestId],
    );
    return rows.map((row) => row.ticket_id);
  }

  /**
   * A transition on its own: the match is read, the transition computed and written in one
   * statement (two round trips, no transaction around them), then the relay is woken. A
   * concurrent writer's win is re-read and re-computed (never double-applied: each attempt is
   * computed from the committed row), as is a deadlock.
   */
  async transitionNow(
    matchId: string,
    command: MatchCommand,
    options: { maxAttempts?: number } = {},
  ): Promise<MatchChange> {
    const maxAttempts = options.maxAttempts ?? 5;
    const manager = this.dataSource.manager;
    for (let attempt = 1; ; attempt += 1) {
      try {
        const current = await this.load(manager, matchId);
        if (!current) throw new MatchNotFoundError(matchId);
        const now = new Date();
        const change = transitionMatch(current, command, now);
        await this.write(manager, current, [change], now);
        // Committed by itself: nothing to wait for before waking the relay.
        this.signal.committed();
        return change;
      } catch (error) {
        const again =
          error instanceof StaleMatchRevisionError ||
          RETRYABLE_SQLSTATES.has(sqlStateOf(error) ?? '');
        if (!again || attempt >= maxAttempts) throw error;
      }
    }
  }

  /**
   * The game server's initial-connect report on the roster, in `manager`'s transaction: when each
   * connected player was first seen connected (a repeated report keeps the first time), and who
   * never showed. No event: the match's own transition (IN_PROGRESS or FAILED) reports it.
   */
  async recordConnections(
    manager: EntityManager,
    matchId: string,
    report: { readonly connected: readonly string[]; readonly noShows: readonly string[] },
    now: Date,
  ): Promise<void> {
    if (report.connected.length === 0 && report.noShows.length === 0) return;
    await manager.query(
      `UPDATE match_participants
          SET connected_at = CASE WHEN player_id = ANY($2::uuid[]) THEN COALESCE(connected_at, $4) ELSE connected_at END,
              no_show = no_show OR player_id = ANY($3::uuid[])
        WHERE match_id = $1 AND player_id = ANY($2::uuid[] || $3::uuid[])`,
      [matchId, report.connected, report.noShows, now],
    );
  }

  /**
   * The match with its participants, in one statement. `forUpdate` locks the match row until the
   * caller's transaction ends, so its state cannot move under the caller's checks.
   */
  async load(
    manager: EntityManager | undefined,
    matchId: string,
    options: { forUpdate?: boolean } = {},
  ): Promise<MatchSnapshot | undefined> {
    const runner = manager ?? this.dataSource.manager;
    // The match and its roster in one statement (one snapshot, one round trip).
    const rows = await runner.query<(MatchRow & { participants: MatchParticipant[] })[]>(
      `SELECT m.id, m.mode, m.region, m.server_region, m.state, m.revision, m.failure_reason, m.state_changed_at,
              coalesce((SELECT json_agg(json_build_object('playerId', p.player_id, 'ticketId', p.ticket_id, 'team', p.team)
                                        ORDER BY p.team, p.player_id)
                          FROM match_participants p WHERE p.match_id = m.id), '[]') AS participants
         FROM matches m WHERE m.id = $1${options.forUpdate ? ' FOR UPDATE OF m' : ''}`,
      [matchId],
    );
    return rows[0] && toMatchSnapshot(rows[0]);
  }

  /** A player's most recent matches (newest state change first), for operators looking a player up. */
  async recentOfPlayer(
    playerId: string,
    limit: number,
  ): Promise<{ id: string; mode: string; region: string; state: string; stateChangedAt: Date }[]> {
    const rows = await this.dataSource.query<
      { id: string; mode: string; region: string; state: string; state_changed_at: Date }[]
    >(
      `SELECT m.id, m.mode, m.region, m.state, m.state_changed_at
         FROM match_participants p JOIN matches m ON m.id = p.match_id
        WHERE p.player_id = $1
        ORDER BY m.state_changed_at DESC LIMIT $2`,
      [playerId, limit],
    );
    return rows.map((row) => ({
      id: row.id,
      mode: row.mode,
      region: row.region,
      state: row.state,
      stateChangedAt: row.state_changed_at,
    }));
  }

  /** The match's events still retained in the outbox, in revision order (after `afterRevision`). */
  async history(matchId: string, afterRevision = 0): Promise<MatchHistoryEvent[]> {
    const events = await retainedEvents(this.dataSource, 'match', matchId, afterRevision);
    return events.map((envelope) => {
      if (!MATCH_HISTORY_EVENT_TYPES.has(envelope.event))
        throw new Error(`unexpected ${envelope.event} on match ${matchId}`);
      return envelope as MatchHistoryEvent;
    });
  }

  /**
   * The matches of these players whose state changed since `since` (one read over
   * match_participants_player_id_idx): after the notification fan-out lost publishes, the ones a
   * socket never heard of.
   */
  async recentMatchesOf(
    playerIds: readonly string[],
    since: Date,
  ): Promise<{ playerId: string; matchId: string }[]> {
    if (playerIds.length === 0) return [];
    const rows = await this.dataSource.query<{ player_id: string; match_id: string }[]>(
      `SELECT p.player_id, p.match_id
         FROM match_participants p JOIN matches m ON m.id = p.match_id
        WHERE p.player_id = ANY($1::uuid[]) AND m.state_changed_at >= $2`,
      [playerIds, since],
    );
    return rows.map((row) => ({ playerId: row.player_id, matchId: row.match_id }));
  }

  /**
   * The player's matches not yet in a terminal state (match_participants_player_id_idx serves it;
   * a player has few matches): what a notification socket that just connected is told about.
   */
  async liveMatchesOf(playerId: string): Promise<string[]> {
    const rows = await this.dataSource.query<{ match_id: string }[]>(
      `SELECT p.match_id
         FROM match_participants p JOIN matches m ON m.id = p.match_id
        WHERE p.player_id = $1 AND m.state <> ALL($2::text[])`,
      [playerId, [...TERMINAL_MATCH_STATES]],
    );
    return rows.map((row) => row.match_id);
  }
}
