import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { DataSource, type EntityManager } from 'typeorm';
import { RedisKeyspace, redisKeyPrefix } from '@matchplane/config';
import {
  ErrorCode,
  type PartyTicketResponse,
  type QueueOptionsResponse,
  type TicketExplanation,
  type TicketResponse,
} from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { isTerminalTicketState, type TicketAttributes } from '@matchplane/domain';
import { sqlStateOf, type UnitOfWork } from '@matchplane/persistence';
import { PlayerStore } from '@matchplane/players';
import {
  CandidateProjection,
  QueueWaitEstimates,
  readTicketExplanation,
  TicketStore,
  type StoredTicket,
  type TicketParty,
} from '@matchplane/tickets';
import { IdempotencyStore, type IdempotentOutcome } from '@matchplane/idempotency';
import { PartyService } from '../parties/party.service';
import { LatencyStore } from '@matchplane/latency';
import { QueueAdmission } from './queue-admission';
import {
  estimatedWait,
  liveTicketConflict,
  ticketFinished,
  ticketNotFound,
  ticketResponse,
} from './ticket-answers';
import { QueuePolicy } from './queue-policy';

/** What a ticket is created from: a player allowed to queue, with its rating and estimates. */
interface Entrant {
  readonly playerId: string;
  readonly rating: number;
  readonly ratingSigma: number;
  readonly predictedRtt: Record<string, number>;
  /** Requeue priority: the enqueue time a solo ticket keeps (a party's members queue at theirs). */
  readonly queuedSince?: Date;
}

/**
 * Queue tickets for players: each mutation is one transaction with its idempotency key and
 * outbox envelope; the projection update and the relay's wake-up are registered in it for after
 * commit.
 */
@Injectable()
export class QueueService {
  private readonly prefix: string;

  constructor(
    private readonly idempotency: IdempotencyStore,
    private readonly tickets: TicketStore,
    private readonly players: PlayerStore,
    private readonly latencies: LatencyStore,
    private readonly projection: CandidateProjection,
    private readonly waits: QueueWaitEstimates,
    private readonly policy: QueuePolicy,
    private readonly admission: QueueAdmission,
    private readonly parties: PartyService,
    private readonly dataSource: DataSource,
    @Inject(Redis) private readonly redis: Redis,
    @Inject(RedisKeyspace) keyspace: RedisKeyspace,
  ) {
    this.prefix = redisKeyPrefix(keyspace);
  }

  async options(): Promise<QueueOptionsResponse> {
    const depths = await this.projection.depths(this.policy.modes.map(({ mode }) => mode));
    return {
      modes: this.policy.modes.map(({ mode, teamSize, teamCount, teamSizes, fill }) => ({
        mode,
        teamSize,
        teamCount,
        teamSizes: [...teamSizes],
        ...(fill ? { fill: fill.map((step) => ({ ...step })) } : {}),
        queueDepth: depths[mode] ?? 0,
        attributes: this.policy.attributeOptions(mode),
        ...this.policy.timeoutOptions(mode),
      })),
      regions: [...this.policy.regions],
      heartbeatIntervalMs: this.policy.heartbeatIntervalMs,
      ...(this.policy.probeEdges ? { probeEdges: this.policy.probeEdges } : {}),
    };
  }

  async create(
    playerId: string,
    key: string,
    mode: string,
    givenAttributes?: unknown,
  ): Promise<IdempotentOutcome<TicketResponse>> {
    this.policy.mode(mode);
    const attributes = this.policy.attributes(mode, givenAttributes);
    const outcome = await this.idempotency.execute<TicketResponse>(
      {
        playerId,
        key,
        route: 'POST queue/tickets',
        // As given, not resolved: a retry must send the same body, and a later default change
        // must not turn a replay into IDEMPOTENCY_KEY_REUSED.
        input: givenAttributes === undefined ? { mode } : { mode, attributes: givenAttributes },
      },
      async (manager, unit) => {
        const now = new Date();
        const entrant = await this.entrant(manager, playerId, now);
        await this.admission.check(manager, mode, entrant.predictedRtt);
        // Requeue priority (a match lost with its server) is spent by the ticket keeping its time.
        if (entrant.queuedSince) await this.players.spendRequeuePriority(manager, playerId);
        const { ticket } = await this.createTicket(unit, { ...entrant, mode, attributes }, now);
        return {
          status: 201,
          body: ticketResponse(ticket, now, undefined, estimatedWait(this.waits, ticket)),
        };
      },
    );
    return outcome;
  }

  /**
   * The leader queues the party as one party ticket: a ticket per member (each member heartbeats
   * and may cancel its own; a cancel or expiry takes the whole party out), created together with
   * one `ticket.state_changed` each. Every member must be allowed to queue alone (probed, no live
   * ticket, no cooldown); a refusal names the member (problem member `playerId`).
   */
  async createForParty(
    leaderId: string,
    key: string,
    mode: string,
    givenAttributes?: unknown,
    givenMemberRoles?: unknown,
  ): Promise<IdempotentOutcome<PartyTicketResponse>> {
    const { teamSize, teamSizes } = this.policy.mode(mode);
    // The leader's attributes are every member's (a party plays one build, one queue), but for
    // the roles each member declares for itself.
    const attributes = this.policy.attributes(mode, givenAttributes);
    const memberAttributes = this.policy.memberRoles(mode, attributes, givenMemberRoles);
    return this.idempotency.execute<PartyTicketResponse>(
      {
        playerId: leaderId,
        key,
        route: 'POST queue/party-tickets',
        input: {
          mode,
          ...(givenAttributes === undefined ? {} : { attributes: givenAttributes }),
          ...(givenMemberRoles === undefined ? {} : { memberRoles: givenMemberRoles }),
        },
      },
      async (manager, unit) => {
        const now = new Date();
        const party = await this.parties.leadersParty(manager, leaderId);
        if (party.members.length < 2) {
          throw new CodedError(
            ErrorCode.PARTY_TOO_SMALL,
            'A party ticket needs at least 2 members; invite someone, or queue alone (POST /v1/queue/tickets)',
          );
        }
        if (party.members.length > teamSize) {
          throw new CodedError(
            ErrorCode.PARTY_TOO_LARGE,
            `A party of ${party.members.length} cannot play ${mode}, whose ${teamSizes.some((size) => size !== teamSize) ? 'largest team has' : 'teams have'} ${teamSize} players`,
          );
        }
        // In player id order, so two enqueues touching the same players lock their rows alike.
        const members = party.members.map((member) => member.playerId).sort();
        const stranger = [...memberAttributes.keys()].find((id) => !members.includes(id));
        if (stranger !== undefined) {
          const problem = `${stranger} is not a member of the party`;
          throw new CodedError(ErrorCode.VALIDATION_FAILED, `memberRoles.${stranger}: ${problem}`, {
            errors: [{ field: `memberRoles.${stranger}`, problems: [problem] }],
          });
        }
        const entrants: Entrant[] = [];
        for (const member of members) entrants.push(await this.entrant(manager, member, now, true));
        for (const entrant of entrants)
          await this.admission.check(manager, mode, entrant.predictedRtt);
        const partyTicket: TicketParty = { id: randomUUID(), size: entrants.length };
        const tickets: StoredTicket[] = [];
        for (const entrant of entrants) {
          const { ticket } = await this.createTicket(
            unit,
            { ...entrant, mode, attributes: memberAttributes.get(entrant.playerId) ?? attributes },
            now,
            partyTicket,
          );
          tickets.push(ticket);
        }
        return {
          status: 201,
          body: {
            partyTicketId: partyTicket.id,
            partyId: party.id,
            mode,
            tickets: tickets.map((ticket) =>
              ticketResponse(ticket, now, undefined, estimatedWait(this.waits, ticket)),
            ),
          },
        };
      },
    );
  }

  /**
   * `playerId` as it may enter the queue now (its player row locked, so concurrent creates
   * serialise): no cooldown, no live ticket, at least one region probed. `asMember`: the
   * refusal names the player (a party enqueue).
   */
  private async entrant(
    manager: EntityManager,
    playerId: string,
    now: Date,
    asMember = false,
  ): Promise<Entrant> {
    const who = asMember ? `Party member ${playerId}: ` : '';
    const extensions = asMember ? { extensions: { playerId } } : {};
    const profile = await this.players.queueEntryProfile(manager, playerId);
    if (!profile) {
      throw new CodedError(ErrorCode.UNAUTHENTICATED, 'The session belongs to no player');
    }
    if (profile.cooldownUntil && profile.cooldownUntil > now) {
      const seconds = Math.ceil((profile.cooldownUntil.getTime() - now.getTime()) / 1000);
      throw new CodedError(
        ErrorCode.COOLDOWN_ACTIVE,
        `${who}A no-show penalty is in force for ${seconds} s more`,
        { retryAfterSeconds: seconds, ...extensions },
      );
    }
    const live = await this.tickets.liveTicketOf(manager, playerId);
    if (live) {
      throw asMember
        ? new CodedError(
            ErrorCode.TICKET_ALREADY_LIVE,
            `${who}holds a live ticket (${live.id}); it must end first`,
            extensions,
          )
        : liveTicketConflict(live.id);
    }
    const predictedRtt = await this.latencies.estimates(manager, playerId, this.policy.regions);
    if (Object.keys(predictedRtt).length === 0) {
      throw new CodedError(
        ErrorCode.NO_LATENCY_MEASURED,
        `${who}Probe at least one region (POST /v1/probes/{region}/challenge) before queueing`,
        extensions,
      );
    }
    const { rating, ratingSigma, queuedSince } = profile;
    const priority = queuedSince && !asMember ? { queuedSince } : {};
    return { playerId, rating, ratingSigma, predictedRtt, ...priority };
  }

  async cancel(
    playerId: string,
    key: string,
    ticketId: string,
  ): Promise<IdempotentOutcome<TicketResponse>> {
    const outcome = await this.idempotency.execute<TicketResponse>(
      { playerId, key, route: 'DELETE queue/tickets/:id', input: { ticketId } },
      async (manager, unit) => {
        const now = new Date();
        const current = await this.tickets.load(manager, ticketId, { forUpdate: true });
        if (!current || current.playerId !== playerId) throw ticketNotFound(ticketId);
        if (isTerminalTicketState(current.state)) throw ticketFinished(current);
        if (current.state !== 'SEARCHING') {
          throw new CodedError(
            ErrorCode.TICKET_NOT_CANCELLABLE,
            `Ticket ${ticketId} is ${current.state}: it has a match and can no longer be cancelled from the queue`,
          );
        }
        // A party searches whole or not at all: the member's cancel takes its mates' tickets out.
        const tickets = await this.tickets.endWithParty(
          unit,
          current,
          { to: 'CANCELLED', reason: 'PLAYER_CANCELLED' },
          { to: 'CANCELLED', reason: 'PARTY_MEMBER_CANCELLED' },
          now,
        );
        const ticket = tickets.find((candidate) => candidate.id === ticketId) as StoredTicket;
        return { status: 200, body: ticketResponse(ticket, now) };
      },
    );
    return outcome;
  }

  async get(playerId: string, ticketId: string): Promise<TicketResponse> {
    const ticket = await this.tickets.load(this.dataSource.manager, ticketId);
    if (!ticket || ticket.playerId !== playerId) throw ticketNotFound(ticketId);
    const explanation = ticket.state === 'SEARCHING' ? await this.explanation(ticketId) : undefined;
    return ticketResponse(ticket, new Date(), explanation, estimatedWait(this.waits, ticket));
  }

  private async createTicket(
    unit: UnitOfWork,
    input: Entrant & { mode: string; attributes: TicketAttributes },
    now: Date,
    party?: TicketParty,
  ) {
    try {
      return await this.tickets.create(unit, { id: randomUUID(), ...input }, now, party);
    } catch (error) {
      // Two creates raced past the check above; the partial unique index decided.
      if (sqlStateOf(error) === '23505') throw liveTicketConflict();
      throw error;
    }
  }

  private explanation(ticketId: string): Promise<TicketExplanation | undefined> {
    return readTicketExplanation(this.redis, this.prefix, ticketId);
  }
}
