import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import {
  changePresence,
  type MatchParticipant,
  type MatchPresence,
  type MatchPresenceChange,
  type MatchSnapshot,
} from '@matchplane/domain';
import { OutboxSignal, OutboxWriter } from '@matchplane/outbox';
import { runInTransaction, type UnitOfWork } from '@matchplane/persistence';
import type { NoShowPenaltyPolicy } from '@matchplane/players';
import { MatchLifecycle } from './match-lifecycle.service';
import { writeNextMatchRevision } from './match.rows';
import { MatchStore } from './match.store';

/** A participant's presence as its roster row keeps it. */
export interface ParticipantPresence {
  readonly playerId: string;
  /** Undefined: connected and never left. */
  readonly presence: MatchPresence | undefined;
  readonly leftAt: Date | null;
  readonly rejoinDeadline: Date | null;
  readonly leaveCount: number;
  readonly abandonedAt: Date | null;
}

export type PresenceOutcome =
  /** No such match, or the player is not on its roster. */
  | { readonly kind: 'not_found' }
  /** The match is not IN_PROGRESS: nobody leaves or rejoins it. */
  | { readonly kind: 'not_live'; readonly matchState: MatchSnapshot['state'] }
  /** The player was abandoned already: final. */
  | { readonly kind: 'abandoned'; readonly presence: ParticipantPresence }
  /** The report contradicts the recorded presence (a rejoin of a player who never left). */
  | { readonly kind: 'conflict'; readonly presence: ParticipantPresence }
  /** Recorded now, or by an identical earlier report (`changed` false). */
  | {
      readonly kind: 'recorded';
      readonly changed: boolean;
      readonly presence: ParticipantPresence;
      readonly matchRevision: number;
    };

interface PresenceRow {
  player_id: string;
  left_at: Date | null;
  rejoin_deadline: Date | null;
  leave_count: number;
  abandoned_at: Date | null;
}

/**
 * Leaves, rejoins and abandonments of the players of a running match, each under the match's row
 * lock, in one statement with the match's revision and its `match.presence_changed` event (so the
 * event is ordered among the match's others and reaches every participant). A repeat of the last
 * report answers what it answered (`changed` false) and writes nothing.
 */
@Injectable()
export class MatchPresenceService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly matches: MatchStore,
    private readonly lifecycle: MatchLifecycle,
    private readonly outbox: OutboxWriter,
    private readonly signal: OutboxSignal,
  ) {}

  /** The server reports `playerId` gone: LEFT for its mode's `graceMs`, unless LEFT already. */
  left(matchId: string, playerId: string, graceMs: (mode: string) => number, now = new Date()) {
    return this.report(matchId, playerId, 'LEFT', now, graceMs);
  }

  /**
   * The server reports `playerId` back on its team. Past its rejoin deadline the player is
   * abandoned there and then (with `policy`'s cooldown), as the abandonment stage would have.
   */
  rejoined(matchId: string, playerId: string, policy: NoShowPenaltyPolicy, now = new Date()) {
    return this.report(matchId, playerId, 'REJOINED', now, undefined, policy);
  }

  /**
   * ABANDONED, in `unit`'s transaction (the caller holds the match's row lock, read as
   * `match`): the event, the player's ticket FAILED ABANDONED, and the offence cooldown. The
   * rated loss follows when the match completes (libs/domain rateMatch).
   */
  async abandon(
    unit: UnitOfWork,
    match: MatchSnapshot,
    playerId: string,
    policy: NoShowPenaltyPolicy,
    now: Date,
  ): Promise<MatchPresenceChange> {
    const change = await this.record(unit, match, playerId, 'LEFT', 'ABANDONED', now);
    const participant = match.participants.find((p) => p.playerId === playerId);
    const ticket =
      participant &&
      (await this.lifecycle.tickets.load(unit.manager, participant.ticketId, { forUpdate: true }));
    if (ticket?.state === 'CONNECTED' && ticket.matchId === match.id) {
      const failed = { to: 'FAILED', reason: 'ABANDONED', matchId: match.id } as const;
      await this.lifecycle.tickets.transition(unit, ticket, failed, now);
    }
    await this.lifecycle.players.penaliseNoShow(unit, playerId, now, policy);
    return change;
  }

  /** The roster of a finished match as the rating rule reads it: who connected, who abandoned. */
  async finishedParticipants(
    manager: EntityManager,
    match: MatchSnapshot,
  ): Promise<(MatchParticipant & { connected: boolean; abandoned: boolean })[]> {
    const rows = await manager.query<
      { player_id: string; connected: boolean; abandoned: boolean }[]
    >(
      `SELECT player_id, connected_at IS NOT NULL AND NOT no_show AS connected, abandoned_at IS NOT NULL AS abandoned
         FROM match_participants WHERE match_id = $1`,
      [match.id],
    );
    const byPlayer = new Map(rows.map((row) => [row.player_id, row]));
    return match.participants.map((p) => ({
      ...p,
      connected: byPlayer.get(p.playerId)?.connected ?? false,
      abandoned: byPlayer.get(p.playerId)?.abandoned ?? false,
    }));
  }

  /** The presence of `playerId` in `matchId`, undefined when it is not a participant. */
  async presenceOf(
    manager: EntityManager | undefined,
    matchId: string,
    playerId: string,
  ): Promise<ParticipantPresence | undefined> {
    const [row] = await (manager ?? this.dataSource.manager).query<PresenceRow[]>(
      `SELECT player_id, left_at, rejoin_deadline, leave_count, abandoned_at
         FROM match_participants WHERE match_id = $1 AND player_id = $2`,
      [matchId, playerId],
    );
    return row && toPresence(row);
  }

  private report(
    matchId: string,
    playerId: string,
    to: 'LEFT' | 'REJOINED',
    now: Date,
    graceMs?: (mode: string) => number,
    policy?: NoShowPenaltyPolicy,
  ): Promise<PresenceOutcome> {
    return runInTransaction(this.dataSource, async (manager, unit): Promise<PresenceOutcome> => {
      const match = await this.matches.load(manager, matchId, { forUpdate: true });
      const current = match && (await this.presenceOf(manager, matchId, playerId));
      if (!match || !current) return { kind: 'not_found' };
      if (current.presence === 'ABANDONED') return { kind: 'abandoned', presence: current };
      if (current.presence === to) {
        return {
          kind: 'recorded',
          changed: false,
          presence: current,
          matchRevision: match.revision,
        };
      }
      if (match.state !== 'IN_PROGRESS') return { kind: 'not_live', matchState: match.state };
      if (to === 'REJOINED' && current.presence !== 'LEFT')
        return { kind: 'conflict', presence: current };
      if (policy && current.rejoinDeadline && current.rejoinDeadline < now) {
        await this.abandon(unit, match, playerId, policy, now);
        const abandoned = await this.presenceOf(manager, matchId, playerId);
        return { kind: 'abandoned', presence: abandoned! };
      }
      const rejoinDeadline = graceMs && new Date(now.getTime() + graceMs(match.mode));
      const change = await this.record(
        unit,
        match,
        playerId,
        current.presence,
        to,
        now,
        rejoinDeadline,
      );
      const presence = await this.presenceOf(manager, matchId, playerId);
      return {
        kind: 'recorded',
        changed: true,
        presence: presence!,
        matchRevision: change.match.revision,
      };
    });
  }

  /** The presence change and its event, revision + 1 under `WHERE revision = $n`, one statement. */
  private async record(
    unit: UnitOfWork,
    match: MatchSnapshot,
    playerId: string,
    from: MatchPresence | undefined,
    to: MatchPresence,
    now: Date,
    rejoinDeadline?: Date,
  ): Promise<MatchPresenceChange> {
    const change = changePresence(match, playerId, from, to, now, rejoinDeadline);
    await writeNextMatchRevision(unit.manager, this.outbox, match, {
      parameters: [match.id, match.revision, now, playerId, to, rejoinDeadline ?? null],
      companion: `presence AS (
         UPDATE match_participants
            SET left_at = CASE $5::text WHEN 'LEFT' THEN $3::timestamptz WHEN 'REJOINED' THEN NULL ELSE left_at END,
                rejoin_deadline = CASE $5::text WHEN 'LEFT' THEN $6::timestamptz WHEN 'REJOINED' THEN NULL ELSE rejoin_deadline END,
                leave_count = leave_count + CASE $5::text WHEN 'LEFT' THEN 1 ELSE 0 END,
                abandoned_at = CASE $5::text WHEN 'ABANDONED' THEN $3::timestamptz ELSE abandoned_at END
          WHERE match_id = $1 AND player_id = $4 AND EXISTS (SELECT 1 FROM changed)
       )`,
      events: change.events,
    });
    this.signal.wakeAfter(unit);
    return change;
  }
}

function toPresence(row: PresenceRow): ParticipantPresence {
  const presence: MatchPresence | undefined = row.abandoned_at
    ? 'ABANDONED'
    : row.left_at
      ? 'LEFT'
      : row.leave_count > 0
        ? 'REJOINED'
        : undefined;
  return {
    playerId: row.player_id,
    presence,
    leftAt: row.left_at,
    rejoinDeadline: row.rejoin_deadline,
    leaveCount: row.leave_count,
    abandonedAt: row.abandoned_at,
  };
}
