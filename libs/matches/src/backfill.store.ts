import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import {
  LIVE_BACKFILL_STATES,
  openBackfill,
  readTicketAttributes,
  transitionBackfill,
  isTerminalBackfillState,
  type BackfillChange,
  type BackfillCommand,
  type BackfillNeed,
  type BackfillReason,
  type BackfillSnapshot,
  type BackfillState,
  type TicketAttributes,
} from '@matchplane/domain';
import { envelopesFor, OutboxSignal, OutboxWriter } from '@matchplane/outbox';
import { CodedError, LibraryErrorCode } from '@matchplane/errors';
import type { UnitOfWork } from '@matchplane/persistence';

/** A backfill request and what the matcher fills it against. */
export interface BackfillRecord extends BackfillSnapshot {
  readonly serverRegion: string;
  readonly teamRating: number;
  readonly attributes: TicketAttributes;
  /** The roles the team's still-present players leave open (the mode's roles rule); [] none. */
  readonly openRoles: readonly string[];
  readonly createdAt: Date;
}

/** A request to open: what the matcher will fill it against, its mode and when it expires. */
export interface NewBackfillRequest extends Pick<
  BackfillNeed,
  'matchId' | 'team' | 'slots' | 'serverRegion' | 'teamRating' | 'attributes' | 'openRoles'
> {
  readonly mode: string;
  readonly expiresAt: Date;
}

interface BackfillRow {
  id: string;
  match_id: string;
  mode: string;
  team: number;
  slots: number;
  server_region: string;
  team_rating: number;
  attributes: unknown;
  open_roles: string[];
  state: BackfillState;
  reason: BackfillReason | null;
  revision: string;
  player_ids: string[];
  roster_revision: number | null;
  created_at: Date;
  expires_at: Date;
  updated_at: Date;
}

const COLUMNS = `b.id, b.match_id, b.mode, b.team, b.slots, b.server_region, b.team_rating, b.attributes,
       b.open_roles, b.state, b.reason, b.revision, b.player_ids, b.roster_revision, b.created_at, b.expires_at, b.updated_at`;

function toRecord(row: BackfillRow): BackfillRecord {
  return {
    id: row.id,
    matchId: row.match_id,
    mode: row.mode,
    team: row.team,
    slots: row.slots,
    state: row.state,
    ...(row.reason === null ? {} : { reason: row.reason }),
    revision: Number(row.revision),
    playerIds: [...row.player_ids].sort(),
    ...(row.roster_revision === null ? {} : { rosterRevision: row.roster_revision }),
    expiresAt: row.expires_at,
    stateChangedAt: row.updated_at,
    serverRegion: row.server_region,
    teamRating: row.team_rating,
    attributes: readTicketAttributes(row.attributes),
    openRoles: row.open_roles,
    createdAt: row.created_at,
  };
}

/** The request moved on since the caller read it; nothing was written. */
export class StaleBackfillRevisionError extends CodedError<
  typeof LibraryErrorCode.STALE_BACKFILL_REVISION
> {
  constructor(readonly requestId: string) {
    super(
      LibraryErrorCode.STALE_BACKFILL_REVISION,
      `backfill request ${requestId} changed since it was read`,
    );
    this.name = 'StaleBackfillRevisionError';
  }
}

/**
 * Owns `backfill_requests`: a game server's requests to fill places on a team of its running
 * match. Every change is a libs/domain transition written with its envelope in one statement,
 * revision + 1 under `WHERE revision = $n`, as MatchStore does for matches.
 */
@Injectable()
export class BackfillStore {
  constructor(
    private readonly outbox: OutboxWriter,
    private readonly signal: OutboxSignal,
  ) {}

  /**
   * A new OPEN request; the caller holds the match's row lock (one live request per team). The
   * relay is woken once `unit` commits.
   */
  async open(unit: UnitOfWork, input: NewBackfillRequest, now: Date): Promise<BackfillRecord> {
    const change = openBackfill(
      { id: randomUUID(), ...input },
      now,
      await this.audience(unit.manager, input.matchId),
    );
    const { request } = change;
    const parameters = [
      request.id,
      request.matchId,
      request.mode,
      request.team,
      request.slots,
      input.serverRegion,
      input.teamRating,
      JSON.stringify(input.attributes),
      request.state,
      request.revision,
      request.expiresAt,
      now,
      input.openRoles ?? [],
    ];
    const events = this.outbox.appendSql(envelopesFor(change.events), parameters);
    await unit.manager.query(
      `WITH opened AS (
         INSERT INTO backfill_requests (id, match_id, mode, team, slots, server_region, team_rating,
                                        attributes, state, revision, expires_at, created_at, updated_at,
                                        open_roles)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $12, $13::text[]))
       ${events.sql}`,
      [...parameters, ...events.parameters],
    );
    this.signal.wakeAfter(unit);
    return { ...request, ...input, openRoles: input.openRoles ?? [], createdAt: now };
  }

  async load(
    manager: EntityManager,
    requestId: string,
    options: { forUpdate?: boolean } = {},
  ): Promise<BackfillRecord | undefined> {
    const rows = await manager.query<BackfillRow[]>(
      `SELECT ${COLUMNS} FROM backfill_requests b WHERE b.id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`,
      [requestId],
    );
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /** The match's requests still under way (at most one per team). */
  async liveOfMatch(manager: EntityManager, matchId: string): Promise<BackfillRecord[]> {
    const rows = await manager.query<BackfillRow[]>(
      `SELECT ${COLUMNS} FROM backfill_requests b
        WHERE b.match_id = $1 AND b.state = ANY($2::text[]) ORDER BY b.team FOR UPDATE`,
      [matchId, LIVE_BACKFILL_STATES],
    );
    return rows.map(toRecord);
  }

  /**
   * A mode's OPEN requests, oldest first, with what the matcher fills them against: the players
   * the match already has (never added twice). One read per pass (backfill_requests_open_by_mode).
   */
  async openNeeds(manager: EntityManager, mode: string, limit: number): Promise<BackfillNeed[]> {
    const rows = await manager.query<(BackfillRow & { excluded: string[] })[]>(
      `SELECT ${COLUMNS},
              ARRAY(SELECT p.player_id FROM match_participants p WHERE p.match_id = b.match_id) AS excluded
         FROM backfill_requests b
        WHERE b.mode = $1 AND b.state = 'OPEN' AND b.expires_at > now()
        ORDER BY b.created_at LIMIT $2`,
      [mode, limit],
    );
    return rows.map((row) => {
      const record = toRecord(row);
      return {
        requestId: record.id,
        matchId: record.matchId,
        team: record.team,
        slots: record.slots,
        serverRegion: record.serverRegion,
        teamRating: record.teamRating,
        attributes: record.attributes,
        openRoles: record.openRoles,
        excludedPlayerIds: row.excluded,
        createdAt: record.createdAt,
      };
    });
  }

  /**
   * Live requests past their deadline, locked `FOR UPDATE SKIP LOCKED` (two replicas never act
   * on one): OPEN ones expire, filled ones never accepted in time are cancelled.
   */
  async lockOverdue(manager: EntityManager, now: Date, limit: number): Promise<BackfillRecord[]> {
    const rows = await manager.query<BackfillRow[]>(
      `SELECT ${COLUMNS} FROM backfill_requests b
        WHERE b.state IN ('OPEN', 'MATCHED', 'PUBLISHED') AND b.expires_at <= $1
        ORDER BY b.expires_at LIMIT $2
          FOR UPDATE SKIP LOCKED`,
      [now, limit],
    );
    return rows.map(toRecord);
  }

  /** Whom a request's events concern: the match's players (its added players come with it). */
  private async audience(manager: EntityManager, matchId: string): Promise<string[]> {
    const rows = await manager.query<{ player_id: string }[]>(
      `SELECT player_id FROM match_participants WHERE match_id = $1`,
      [matchId],
    );
    return rows.map((row) => row.player_id);
  }

  /**
   * Applies one transition to `current` (read in this transaction) with its envelope; the relay is
   * woken once `unit` commits.
   */
  async transition(
    unit: UnitOfWork,
    current: BackfillRecord,
    command: BackfillCommand,
    now: Date,
  ): Promise<BackfillRecord> {
    const change: BackfillChange = transitionBackfill(
      current,
      command,
      now,
      await this.audience(unit.manager, current.matchId),
    );
    const next = change.request;
    const parameters = [
      current.id,
      current.revision,
      next.state,
      next.reason ?? null,
      next.playerIds,
      next.rosterRevision ?? null,
      now,
      isTerminalBackfillState(next.state),
    ];
    const events = this.outbox.appendSql(envelopesFor(change.events), parameters, 'changed');
    const rows = await unit.manager.query<{ id: string }[]>(
      `WITH changed AS (
         UPDATE backfill_requests
            SET state = $3, revision = revision + 1, reason = $4, player_ids = $5::uuid[],
                roster_revision = $6, updated_at = $7,
                finished_at = CASE WHEN $8 THEN $7 ELSE finished_at END
          WHERE id = $1 AND revision = $2
          RETURNING id
       ), appended AS (${events.sql})
       SELECT id FROM changed`,
      [...parameters, ...events.parameters],
    );
    if (rows.length !== 1) throw new StaleBackfillRevisionError(current.id);
    this.signal.wakeAfter(unit);
    return { ...current, ...next };
  }
}
