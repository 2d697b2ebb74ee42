import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Link } from '@opentelemetry/api';
import {
  parseAcceptanceTimeouts,
  parseQueueModes,
  TicketHeartbeatTimeout,
} from '@matchplane/config';
import {
  validCandidate,
  type BackfillPick,
  type MatchCandidate,
  type ProposedMatch,
  sameTicketAttributes,
} from '@matchplane/domain';
import { BackfillStore, MatchStore, ReadyCheck } from '@matchplane/matches';
import { contextFromTraceparent, inSpan, linkToTraceparent } from '@matchplane/observability';
import type { UnitOfWork } from '@matchplane/persistence';
import type { EntityManager } from 'typeorm';
import { TicketLiveness, TicketStore, type StoredTicket } from '@matchplane/tickets';
import { MatcherConfig } from './matcher.config';
import type { CommitSession } from './mode-lease';

export interface CommittedMatch {
  readonly matchId: string;
  readonly proposal: ProposedMatch;
  /** The participants' tickets as committed (MATCHED), for the projection. */
  readonly tickets: readonly StoredTicket[];
}

/** Why a proposal was not committed; its other members stay searching for the next pass. */
export type DropReason =
  /** A member is no longer SEARCHING, or another transaction holds its row (SKIP LOCKED). */
  | 'ticket_unavailable'
  /** A member still searches, but no longer fits the proposal (stale heartbeat, rating, RTT). */
  | 'ticket_changed'
  /** Writing the match failed (logged); it was retried alone, and the others committed. */
  | 'write_failed';

export interface DroppedMatch {
  readonly proposal: ProposedMatch;
  readonly reason: DropReason;
  readonly ticketId?: string;
}

/** A backfill request the matcher filled: its players joined the running match. */
export interface CommittedBackfill {
  readonly requestId: string;
  readonly matchId: string;
  /** The added players' tickets as committed (MATCHED), for the projection. */
  readonly tickets: readonly StoredTicket[];
}

/** Why a backfill pick was not committed; the request stays OPEN for the next pass. */
export type BackfillDropReason =
  /** The request is no longer OPEN (cancelled, expired) or its match no longer IN_PROGRESS. */
  'request_closed' | DropReason;

export type BackfillOutcome =
  | { readonly committed: CommittedBackfill }
  | { readonly dropped: BackfillDropReason; readonly ticketId?: string };

export interface CommitOutcome {
  readonly committed: CommittedMatch[];
  readonly dropped: DroppedMatch[];
}

/**
 * Commits proposed matches: one transaction per batch on the lease's session, every match whole
 * in it. The batch's tickets are locked `FOR UPDATE SKIP LOCKED` and every member is
 * re-checked against its PostgreSQL row (the projection is only an index), then the match is
 * created (ALLOCATING, or AWAITING_ACCEPTANCE with its deadline for a ready-check mode; revision 1, participants, envelope to every participant) and each ticket
 * moved to MATCHED with its envelope, all in that transaction. A proposal that lost a member is
 * dropped whole. What follows the commit is registered in its unit of work by the stores: the
 * relay's wake-up, and the matched tickets' removal from the projection with their explanations
 * (TicketStore's writes; one Redis pipeline for the whole transaction).
 */
@Injectable()
export class MatchCommitter {
  private readonly logger = new Logger(MatchCommitter.name);
  private readonly heartbeatTimeoutMs: number;
  /** QUEUE_ACCEPTANCE_TIMEOUTS: a mode listed creates its matches AWAITING_ACCEPTANCE. */
  private readonly acceptanceTimeoutsMs: ReadonlyMap<string, number>;

  constructor(
    private readonly matches: MatchStore,
    private readonly backfills: BackfillStore,
    private readonly tickets: TicketStore,
    private readonly liveness: TicketLiveness,
    private readonly readyCheck: ReadyCheck,
    @Inject(TicketHeartbeatTimeout) heartbeat: TicketHeartbeatTimeout,
    @Inject(MatcherConfig) config: MatcherConfig,
  ) {
    this.heartbeatTimeoutMs = heartbeat.TICKET_HEARTBEAT_TIMEOUT_MS;
    this.acceptanceTimeoutsMs = parseAcceptanceTimeouts(
      config.QUEUE_ACCEPTANCE_TIMEOUTS,
      parseQueueModes(config.QUEUE_MODES).map(({ mode }) => mode),
    );
  }

  /**
   * `seen`: the candidates the proposals were formed from, by ticket id; `ruleSetVersion`: the
   * rule set version they were formed under, recorded on each match. Throws when the
   * transaction fails as a whole (lease lost, database down): then nothing of the batch committed,
   * unless the connection died during COMMIT itself, an outcome nobody can know; the next pass
   * then finds those tickets MATCHED, drops their proposals and re-projects them.
   *
   * The batch is written without savepoints (a savepoint per match costs two more round trips,
   * and everything a write could trip on was checked first); if a write fails anyway, the batch
   * is rolled back and its matches are committed one transaction each, so only the bad one drops.
   */
  async commit(
    session: CommitSession,
    proposals: readonly ProposedMatch[],
    seen: ReadonlyMap<string, MatchCandidate>,
    ruleSetVersion?: number,
  ): Promise<CommitOutcome> {
    if (proposals.length === 0) return { committed: [], dropped: [] };
    try {
      return await session.transaction((manager, unit) =>
        this.commitIn(unit, proposals, seen, ruleSetVersion),
      );
    } catch (error) {
      if (!(error instanceof MatchWriteError)) throw error;
      if (proposals.length === 1) {
        this.logger.warn(`${describe(error.proposal)} not written: ${error.message}`);
        return { committed: [], dropped: [{ proposal: error.proposal, reason: 'write_failed' }] };
      }
    }
    const outcome: CommitOutcome = { committed: [], dropped: [] };
    for (const proposal of proposals) {
      const one = await this.commit(session, [proposal], seen, ruleSetVersion);
      outcome.committed.push(...one.committed);
      outcome.dropped.push(...one.dropped);
    }
    return outcome;
  }

  /**
   * Fills one backfill request in one transaction on the lease's session: the match row, then the
   * request, then the picked tickets are locked (the order every writer of them takes), the
   * request must still be OPEN and its match IN_PROGRESS, and every picked ticket still SEARCHING
   * and as it was picked; then the players join the match (`match.participants_added`), their
   * tickets go MATCHED and the request MATCHED, with their events. Anything else leaves the
   * request OPEN for the next pass.
   */
  async commitBackfill(
    session: CommitSession,
    pick: BackfillPick,
    seen: ReadonlyMap<string, MatchCandidate>,
  ): Promise<BackfillOutcome> {
    const { need } = pick;
    return session.transaction(async (manager, unit): Promise<BackfillOutcome> => {
      const now = new Date();
      const match = await this.matches.load(manager, need.matchId, { forUpdate: true });
      const request = await this.backfills.load(manager, need.requestId, { forUpdate: true });
      if (
        match?.state !== 'IN_PROGRESS' ||
        request?.state !== 'OPEN' ||
        request.expiresAt.getTime() <= now.getTime()
      ) {
        return { dropped: 'request_closed' };
      }
      const ids = pick.candidates.map((candidate) => candidate.ticketId);
      const locked = await this.lockSearching(manager, ids);
      const rows: StoredTicket[] = [];
      for (const id of ids) {
        const row = locked.get(id);
        const candidate = seen.get(id);
        if (!row || !candidate) return { dropped: 'ticket_unavailable', ticketId: id };
        // Any measured RTT to the running match's server region will do.
        if (!this.stillFits(row, candidate, need.serverRegion, Infinity, now)) {
          return { dropped: 'ticket_changed', ticketId: id };
        }
        rows.push(row);
      }
      await this.matches.addParticipants(
        unit,
        match,
        rows.map((row) => ({
          playerId: row.playerId,
          ticketId: row.id,
          team: need.team,
          rating: row.rating,
        })),
        request.id,
        now,
      );
      const { tickets } = await this.tickets.transitionMany(
        unit,
        rows,
        () => ({ to: 'MATCHED', matchId: match.id }),
        now,
      );
      await this.backfills.transition(
        unit,
        request,
        { to: 'MATCHED', playerIds: rows.map((row) => row.playerId) },
        now,
      );
      return { committed: { requestId: request.id, matchId: match.id, tickets } };
    });
  }

  private async commitIn(
    unit: UnitOfWork,
    proposals: readonly ProposedMatch[],
    seen: ReadonlyMap<string, MatchCandidate>,
    ruleSetVersion: number | undefined,
  ): Promise<CommitOutcome> {
    const ids = proposals.flatMap((proposal) => proposal.participants.map((p) => p.ticketId));
    const locked = await this.lockSearching(unit.manager, ids);
    const committed: CommittedMatch[] = [];
    const dropped: DroppedMatch[] = [];
    for (const proposal of proposals) {
      const now = new Date();
      const rows: StoredTicket[] = [];
      let drop: DroppedMatch | undefined;
      for (const participant of proposal.participants) {
        const row = locked.get(participant.ticketId);
        const candidate = seen.get(participant.ticketId);
        if (!row || !candidate) {
          drop = { proposal, reason: 'ticket_unavailable', ticketId: participant.ticketId };
          break;
        }
        if (
          row.mode !== proposal.mode ||
          !this.stillFits(row, candidate, proposal.region, proposal.maxRttMs, now)
        ) {
          drop = { proposal, reason: 'ticket_changed', ticketId: participant.ticketId };
          break;
        }
        rows.push(row);
      }
      if (drop) dropped.push(drop);
      else
        committed.push(
          await this.traced(proposal, rows, () =>
            this.write(unit, proposal, rows, now, ruleSetVersion),
          ),
        );
    }
    return { committed, dropped };
  }

  /**
   * TicketStore.lockSearching, by id, each row with the later of its own and the liveness store's
   * last beat: a ticket heartbeating through Redis is ahead of its row by up to a checkpoint.
   * Redis unreadable: the rows alone (at most a checkpoint behind).
   */
  private async lockSearching(
    manager: EntityManager,
    ids: readonly string[],
  ): Promise<Map<string, StoredTicket>> {
    const [rows, beats] = await Promise.all([
      this.tickets.lockSearching(manager, ids),
      this.liveness.beats(ids).catch(() => new Map<string, Date>()),
    ]);
    return new Map(
      rows.map((row) => {
        const beat = beats.get(row.id);
        const fresher = beat && beat.getTime() > row.lastHeartbeatAt.getTime();
        return [row.id, fresher ? { ...row, lastHeartbeatAt: beat } : row];
      }),
    );
  }

  /**
   * The row as locked still matches the candidate a match or backfill was formed from: a valid
   * candidate now (SEARCHING, heartbeating, a region measured), same player, rating, attributes
   * and party, and `region` still measured within `maxRttMs`.
   */
  private stillFits(
    row: StoredTicket,
    candidate: MatchCandidate,
    region: string,
    maxRttMs: number,
    now: Date,
  ): boolean {
    if (!validCandidate(row, now, this.heartbeatTimeoutMs)) return false;
    if (row.playerId !== candidate.playerId || row.rating !== candidate.rating) return false;
    // Attributes never change after creation; a difference is a projection that lies.
    if (!sameTicketAttributes(row.attributes, candidate.attributes ?? {})) return false;
    // Screened whole against the candidates; the rows must still be that same party ticket.
    if (row.party?.id !== candidate.party?.id) return false;
    const rtt: unknown = row.predictedRtt[region];
    return typeof rtt === 'number' && Number.isFinite(rtt) && rtt >= 0 && rtt <= maxRttMs;
  }

  /**
   * A match has many tickets and so many API requests behind it: its trace (the span under which
   * match.formed and the tickets' MATCHED events are written, and so the dispatcher's and the
   * allocator's work for it) continues the trace of its oldest ticket's request, the one that
   * waited longest, with a link to every other ticket's request.
   */
  private traced<T>(
    proposal: ProposedMatch,
    rows: readonly StoredTicket[],
    write: () => Promise<T>,
  ): Promise<T> {
    const oldestFirst = [...rows].sort(
      (a, b) => a.enqueuedAt.getTime() - b.enqueuedAt.getTime() || a.id.localeCompare(b.id),
    );
    const links = oldestFirst
      .slice(1)
      .map((row) => linkToTraceparent(row.traceparent))
      .filter((link): link is Link => link !== undefined);
    return inSpan(
      'form match',
      {
        parent: contextFromTraceparent(oldestFirst[0]?.traceparent),
        links,
        attributes: {
          'matchplane.mode': proposal.mode,
          'matchplane.region': proposal.region,
          'matchplane.ticket_ids': oldestFirst.map((row) => row.id),
        },
      },
      write,
    );
  }

  private async write(
    unit: UnitOfWork,
    proposal: ProposedMatch,
    rows: readonly StoredTicket[],
    now: Date,
    ruleSetVersion: number | undefined,
  ): Promise<CommittedMatch> {
    const byTicket = new Map(rows.map((row) => [row.id, row]));
    const acceptanceTimeoutMs = this.acceptanceTimeoutsMs.get(proposal.mode);
    try {
      const change = await this.matches.create(
        unit,
        {
          mode: proposal.mode,
          region: proposal.region,
          awaitingAcceptance: acceptanceTimeoutMs !== undefined,
          ...(ruleSetVersion === undefined ? {} : { ruleSetVersion }),
          participants: proposal.participants.map((p) => ({
            playerId: p.playerId,
            ticketId: p.ticketId,
            team: p.team,
            rating: byTicket.get(p.ticketId)?.rating ?? p.rating,
          })),
        },
        now,
      );
      const matchId = change.match.id;
      if (acceptanceTimeoutMs !== undefined) {
        await this.readyCheck.open(
          unit.manager,
          matchId,
          new Date(now.getTime() + acceptanceTimeoutMs),
        );
      }
      const { tickets } = await this.tickets.transitionMany(
        unit,
        rows,
        () => ({ to: 'MATCHED', matchId }),
        now,
      );
      return { matchId, proposal, tickets };
    } catch (error) {
      // A failed statement aborts the transaction: the batch is retried a match at a time.
      throw new MatchWriteError(proposal, error);
    }
  }
}

/** Writing one match failed (not the session): its batch is retried without it. */
class MatchWriteError extends Error {
  override name = 'MatchWriteError';

  constructor(
    readonly proposal: ProposedMatch,
    cause: unknown,
  ) {
    super((cause as Error)?.message ?? String(cause), { cause });
  }
}

function describe(proposal: ProposedMatch): string {
  return `${proposal.mode} match of ${proposal.participants.map((p) => p.ticketId).join(', ')}`;
}
