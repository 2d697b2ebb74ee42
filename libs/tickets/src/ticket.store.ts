import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  createTicket,
  DEFAULT_SKILL,
  isTerminalTicketState,
  transitionTicket,
  type NewTicket,
  type TicketChange,
  type TicketCommand,
  type TicketSnapshot,
} from '@matchplane/domain';
import { activeTraceparent } from '@matchplane/observability';
import { envelopesFor, OutboxSignal, OutboxWriter } from '@matchplane/outbox';
import { returnedRows, type UnitOfWork } from '@matchplane/persistence';
import { CandidateProjection } from './candidate.projection';
import {
  checkpointBeats,
  COLUMNS,
  endReasonOf,
  EXPIRED_TICKETS_SQL,
  LIVE_STATES,
  searchingTickets,
  toTicket,
  type StoredTicket,
  type TicketParty,
  type RecordedBeat,
  type TicketRow,
  StaleTicketRevisionError,
} from './ticket.rows';

export {
  EXPIRED_TICKETS_SQL,
  StaleTicketRevisionError,
  type RecordedBeat,
  type StoredTicket,
  type TicketParty,
} from './ticket.rows';

/**
 * The queue-ticket aggregate: owns `queue_tickets`. State changes are libs/domain transitions
 * written with their envelopes in the caller's transaction (revision + 1 under
 * `WHERE revision = $n`); heartbeats and latency updates touch no state and emit no event.
 *
 * Every write takes the caller's {@link UnitOfWork} and finishes itself there: it registers the
 * relay's wake-up (when it wrote an event) and the written tickets' candidate projection refresh
 * (which also drops the matcher's explanation of a ticket that left the queue) for after the
 * commit. No caller refreshes the projection; a rolled-back write refreshes nothing.
 */
@Injectable()
export class TicketStore {
  constructor(
    private readonly outbox: OutboxWriter,
    private readonly signal: OutboxSignal,
    private readonly projection: CandidateProjection,
  ) {}

  /** `ratingSigma`: the rating uncertainty (default openskill's prior); `party`: its party ticket. */
  /** `origin`: 'lobby' for a lobby member's ticket, matched at once (no queue arrival). */
  async create(
    unit: UnitOfWork,
    input: NewTicket & { readonly ratingSigma?: number; readonly origin?: 'queue' | 'lobby' },
    now: Date,
    party?: TicketParty,
  ): Promise<{ change: TicketChange; ticket: StoredTicket }> {
    const change = createTicket(input, now);
    const { ticket } = change;
    const parameters = [
      ticket.id,
      ticket.playerId,
      ticket.mode,
      ticket.state,
      ticket.revision,
      JSON.stringify(ticket.predictedRtt),
      ticket.rating,
      now,
      activeTraceparent(),
      JSON.stringify(ticket.attributes ?? {}),
      input.ratingSigma ?? DEFAULT_SKILL.sigma,
      party?.id ?? null,
      party?.size ?? null,
      ticket.enqueuedAt,
      input.origin ?? 'queue',
    ];
    const events = this.outbox.appendSql(envelopesFor(change.events), parameters);
    // The ticket and its event in one statement.
    const rows = await unit.manager.query<TicketRow[]>(
      `WITH created AS (
         INSERT INTO queue_tickets (id, player_id, mode, state, revision, predicted_rtt, rating, enqueued_at,
                                    last_heartbeat_at, created_at, updated_at, traceparent, attributes, rating_sigma,
                                    party_ticket_id, party_size, origin)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $14, $8, $8, clock_timestamp(), $9, $10::jsonb, $11, $12, $13, $15)
         RETURNING ${COLUMNS}
       ), appended AS (${events.sql})
       SELECT * FROM created`,
      [...parameters, ...events.parameters],
    );
    return { change, ticket: this.written(unit, toTicket(rows[0] as TicketRow), true) };
  }

  async load(
    manager: EntityManager,
    ticketId: string,
    options: { forUpdate?: boolean } = {},
  ): Promise<StoredTicket | undefined> {
    const rows = await manager.query<TicketRow[]>(
      `SELECT ${COLUMNS} FROM queue_tickets WHERE id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`,
      [ticketId],
    );
    return rows[0] ? toTicket(rows[0]) : undefined;
  }

  /**
   * Locks (SKIP LOCKED) up to `limit` searching tickets last heartbeating before `cutoff`, oldest
   * first, leaving `skip` alone; their ids ({@link EXPIRED_TICKETS_SQL}).
   */
  async lockSilent(
    manager: EntityManager,
    cutoff: Date,
    limit: number,
    skip: readonly string[],
  ): Promise<string[]> {
    const rows = await manager.query<{ id: string }[]>(EXPIRED_TICKETS_SQL, [cutoff, limit, skip]);
    return rows.map((row) => row.id);
  }

  /**
   * Locks these tickets (FOR UPDATE, in id order, so two lockers of overlapping sets cannot
   * deadlock) and answers them as they are once locked; missing ids are left out.
   */
  async lockMany(manager: EntityManager, ticketIds: readonly string[]): Promise<StoredTicket[]> {
    if (ticketIds.length === 0) return [];
    const rows = await manager.query<TicketRow[]>(
      `SELECT ${COLUMNS} FROM queue_tickets WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
      [ticketIds],
    );
    return rows.map(toTicket);
  }

  /**
   * Ends a searching ticket, and with it its party's other searching tickets (a party searches
   * whole or not at all): `own` for the ticket, `mates` for the rest, one statement and one event
   * per ticket. A solo ticket is just transitioned. Answers every ticket it moved.
   */
  async endWithParty(
    unit: UnitOfWork,
    current: StoredTicket,
    own: TicketCommand,
    mates: TicketCommand,
    now: Date,
  ): Promise<StoredTicket[]> {
    const party = current.party
      ? await this.lockSearchingParty(unit.manager, current.party.id)
      : [current];
    const { tickets } = await this.transitionMany(
      unit,
      party,
      (ticket) => (ticket.id === current.id ? own : mates),
      now,
    );
    return tickets;
  }

  /**
   * Locks the searching tickets of party ticket `partyTicketId` (FOR UPDATE, in id order, as
   * {@link lockMany}) and answers them: what a member's cancel or expiry takes out with it.
   */
  private async lockSearchingParty(
    manager: EntityManager,
    partyTicketId: string,
  ): Promise<StoredTicket[]> {
    const rows = await manager.query<TicketRow[]>(
      `SELECT ${COLUMNS} FROM queue_tickets
        WHERE party_ticket_id = $1 AND state = 'SEARCHING' ORDER BY id FOR UPDATE`,
      [partyTicketId],
    );
    return rows.map(toTicket);
  }

  async liveTicketOf(manager: EntityManager, playerId: string): Promise<StoredTicket | undefined> {
    const rows = await manager.query<TicketRow[]>(
      `SELECT ${COLUMNS} FROM queue_tickets WHERE player_id = $1 AND state IN ${LIVE_STATES}`,
      [playerId],
    );
    return rows[0] ? toTicket(rows[0]) : undefined;
  }

  /**
   * Applies one transition to `current` (read in this transaction), with its envelope. Throws
   * StaleTicketRevisionError when another writer moved the ticket first.
   */
  async transition(
    unit: UnitOfWork,
    current: TicketSnapshot,
    command: TicketCommand,
    now: Date,
  ): Promise<{ change: TicketChange; ticket: StoredTicket }> {
    const change = transitionTicket(current, command, now);
    const next = change.ticket;
    // The change and its event in one statement; a lost race appends nothing.
    const parameters = [
      current.id,
      current.revision,
      next.state,
      next.matchId ?? null,
      isTerminalTicketState(next.state),
      now,
      endReasonOf(change),
    ];
    const events = this.outbox.appendSql(envelopesFor(change.events), parameters, 'changed');
    const rows = await unit.manager.query<TicketRow[]>(
      `WITH changed AS (
         UPDATE queue_tickets
            SET state = $3, revision = revision + 1, match_id = $4, updated_at = clock_timestamp(),
                finished_at = CASE WHEN $5 THEN $6::timestamptz ELSE NULL END,
                end_reason = $7
          WHERE id = $1 AND revision = $2
          RETURNING ${COLUMNS}
       ), appended AS (${events.sql})
       SELECT * FROM changed`,
      [...parameters, ...events.parameters],
    );
    const row = rows[0];
    if (!row) throw new StaleTicketRevisionError(current.id, current.revision);
    return { change, ticket: this.written(unit, toTicket(row), true) };
  }

  /**
   * {@link transition} for several tickets (each read in this transaction) in one UPDATE and one
   * outbox insert, in the order given: what the matcher does to a match's roster. Throws
   * StaleTicketRevisionError when any of them moved first; the caller's transaction (or savepoint)
   * must then be rolled back, since the others were updated.
   */
  async transitionMany(
    unit: UnitOfWork,
    currents: readonly TicketSnapshot[],
    command: (current: TicketSnapshot) => TicketCommand,
    now: Date,
  ): Promise<{ changes: TicketChange[]; tickets: StoredTicket[] }> {
    if (currents.length === 0) return { changes: [], tickets: [] };
    const changes = currents.map((current) => transitionTicket(current, command(current), now));
    const parameters = [
      currents.map((current) => current.id),
      currents.map((current) => current.revision),
      changes.map((change) => change.ticket.state),
      changes.map((change) => change.ticket.matchId ?? null),
      changes.map((change) => isTerminalTicketState(change.ticket.state)),
      now,
      changes.map(endReasonOf),
    ];
    const events = this.outbox.appendSql(
      envelopesFor(changes.flatMap((change) => change.events)),
      parameters,
      'changed',
    );
    // The changes and their events in one statement. When some ticket moved first the events
    // are appended all the same, with the other tickets' changes: the caller rolls them all back.
    const rows = await unit.manager.query<TicketRow[]>(
      // The unnest columns are named apart from the table's, so COLUMNS reads queue_tickets.
      `WITH changed AS (
         UPDATE queue_tickets AS q
            SET state = u.next_state, revision = q.revision + 1, match_id = u.next_match_id,
                updated_at = clock_timestamp(),
                finished_at = CASE WHEN u.terminal THEN $6::timestamptz ELSE NULL END,
                end_reason = u.next_end_reason
           FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::uuid[], $5::boolean[], $7::text[])
             AS u(ticket_id, expected_revision, next_state, next_match_id, terminal, next_end_reason)
          WHERE q.id = u.ticket_id AND q.revision = u.expected_revision
          RETURNING ${COLUMNS}
       ), appended AS (${events.sql})
       SELECT * FROM changed`,
      [...parameters, ...events.parameters],
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    const missing = currents.find((current) => !byId.has(current.id));
    if (missing) throw new StaleTicketRevisionError(missing.id, missing.revision);
    return {
      changes,
      tickets: currents.map((current) =>
        this.written(unit, toTicket(byId.get(current.id) as TicketRow), true),
      ),
    };
  }

  /**
   * Records heartbeats (no event: not a state change) of many tickets in one statement: the
   * tickets among them that are live and belong to the player named with them, by id. A ticket
   * named twice is updated once. Their projection refresh is not waited for by the transaction's
   * caller (decision 2026-12-05): an index the matcher re-checks, repaired by the next heartbeat.
   */
  async heartbeatMany(
    unit: UnitOfWork,
    beats: readonly { ticketId: string; playerId: string }[],
    now: Date,
  ): Promise<Map<string, StoredTicket>> {
    if (beats.length === 0) return new Map();
    // In id order, so two batches naming the same tickets lock them in the same order.
    const ordered = [...beats].sort((a, b) =>
      a.ticketId < b.ticketId ? -1 : a.ticketId > b.ticketId ? 1 : 0,
    );
    const result: unknown = await unit.manager.query(
      // The unnest columns are named apart from the table's, so COLUMNS reads queue_tickets.
      `UPDATE queue_tickets AS q SET last_heartbeat_at = $3, updated_at = clock_timestamp()
         FROM unnest($1::uuid[], $2::uuid[]) AS b(ticket_id, owner_id)
        WHERE q.id = b.ticket_id AND q.player_id = b.owner_id AND q.state IN ${LIVE_STATES}
        RETURNING ${COLUMNS}`,
      [ordered.map((beat) => beat.ticketId), ordered.map((beat) => beat.playerId), now],
    );
    const beaten = returnedRows<TicketRow>(result).map(toTicket);
    for (const ticket of beaten)
      this.projection.refreshAfterCommit(unit, ticket, { awaited: false });
    return new Map(beaten.map((ticket) => [ticket.id, ticket]));
  }

  /** Liveness beats into the searching tickets' rows, one statement ({@link checkpointBeats}). */
  checkpointHeartbeats(manager: EntityManager, beats: ReadonlyMap<string, RecordedBeat>) {
    return checkpointBeats(manager, beats);
  }

  /** The tickets of these ids that exist, by id. */
  async loadMany(
    manager: EntityManager,
    ticketIds: readonly string[],
  ): Promise<Map<string, StoredTicket>> {
    if (ticketIds.length === 0) return new Map();
    const rows = await manager.query<TicketRow[]>(
      `SELECT ${COLUMNS} FROM queue_tickets WHERE id = ANY($1::uuid[])`,
      [ticketIds],
    );
    return new Map(rows.map((row) => [row.id, toTicket(row)]));
  }

  /**
   * Writes a region's latency estimate into the player's searching ticket. The CASE normalises a
   * non-object predicted_rtt (a JSON null from an older writer would make jsonb_set fail or
   * return null) instead of failing every later probe. The matcher's candidate follows once the
   * transaction commits.
   */
  async applyLatency(
    unit: UnitOfWork,
    playerId: string,
    region: string,
    estimateMs: number,
  ): Promise<StoredTicket | undefined> {
    const result: unknown = await unit.manager.query(
      `UPDATE queue_tickets
          SET predicted_rtt = jsonb_set(
                CASE WHEN jsonb_typeof(predicted_rtt) = 'object' THEN predicted_rtt ELSE '{}'::jsonb END,
                ARRAY[$2::text], to_jsonb($3::float8), true),
              updated_at = clock_timestamp()
        WHERE player_id = $1 AND state = 'SEARCHING'
        RETURNING ${COLUMNS}`,
      [playerId, region, estimateMs],
    );
    const row = returnedRows<TicketRow>(result)[0];
    return row ? this.written(unit, toTicket(row), false) : undefined;
  }

  /**
   * Locks the given tickets that are still SEARCHING, for the matcher's commit. SKIP LOCKED: a
   * ticket another transaction holds (a cancel, another matcher) is left out rather than waited
   * for, so the caller drops that match for this pass instead of stalling behind it.
   */
  async lockSearching(
    manager: EntityManager,
    ticketIds: readonly string[],
  ): Promise<StoredTicket[]> {
    if (ticketIds.length === 0) return [];
    const rows = await manager.query<TicketRow[]>(
      `SELECT ${COLUMNS} FROM queue_tickets
        WHERE id = ANY($1::uuid[]) AND state = 'SEARCHING'
        FOR UPDATE SKIP LOCKED`,
      [ticketIds],
    );
    return rows.map(toTicket);
  }

  /** Every searching ticket, oldest first (the projection's rebuild source). */
  searching(manager: EntityManager): Promise<StoredTicket[]> {
    return searchingTickets(manager);
  }

  /**
   * Re-reads these tickets (in a statement of their own) and puts their rows in the projection
   * now: for a candidate the projection was found to misstate (a post-commit refresh that never
   * reached Redis), which would otherwise be proposed again at every pass until a rebuild.
   */
  async reproject(manager: EntityManager, ticketIds: readonly string[]): Promise<void> {
    const rows = await this.loadMany(manager, [...new Set(ticketIds)]).catch(() => undefined);
    if (rows && rows.size > 0) await this.projection.applyManyAfterCommit([...rows.values()]);
  }

  /** What every write does with a ticket it wrote: its after-commit effects, in `unit`. */
  private written(unit: UnitOfWork, ticket: StoredTicket, withEvent: boolean): StoredTicket {
    this.projection.refreshAfterCommit(unit, ticket);
    if (withEvent) this.signal.wakeAfter(unit);
    return ticket;
  }
}
