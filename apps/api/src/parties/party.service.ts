import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { ErrorCode, type PartyResponse } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { runInTransaction, sqlStateOf } from '@matchplane/persistence';
import { TicketStore } from '@matchplane/tickets';
import { ApiConfig } from '../api.config';
import { IdempotencyStore, type IdempotentOutcome } from '@matchplane/idempotency';
import { LatencyStore } from '@matchplane/latency';
import { QueuePolicy } from '../queue/queue-policy';
import { PartyStore, type StoredParty } from './party.store';

/** `mpi_` + 128 random bits (base64url): unguessable; only its SHA-256 is stored. */
export const INVITE_CODE_PATTERN = /^mpi_[A-Za-z0-9_-]{22}$/;

function inviteCodeHash(code: string): Buffer {
  return createHash('sha256').update(code).digest();
}

/**
 * Parties: a leader creates one and gets an invite code (expiring after
 * PARTY_INVITE_TTL_SECONDS), players join with it, members leave, the leader disbands (a leader
 * leaving disbands too). A party holds at most the largest team size of the modes; the enqueue
 * checks it again against the chosen mode. Membership cannot change while the party searches.
 * Each change is one transaction serialised on the party row.
 */
@Injectable()
export class PartyService {
  readonly maxSize: number;
  private readonly inviteTtlMs: number;

  constructor(
    private readonly parties: PartyStore,
    private readonly tickets: TicketStore,
    private readonly latencies: LatencyStore,
    private readonly idempotency: IdempotencyStore,
    private readonly policy: QueuePolicy,
    private readonly dataSource: DataSource,
    @Inject(ApiConfig) config: ApiConfig,
  ) {
    this.maxSize = Math.max(...policy.modes.map((mode) => mode.teamSize));
    this.inviteTtlMs = config.PARTY_INVITE_TTL_SECONDS * 1000;
  }

  /**
   * With an Idempotency-Key (the SDK always sends one) a retry replays the first answer, invite
   * code included: the code is shown only here, so a lost answer must not lose it.
   */
  async create(playerId: string, key?: string): Promise<IdempotentOutcome<PartyResponse>> {
    const work = async (manager: EntityManager) => {
      if (await this.parties.partyOf(manager, playerId)) throw alreadyInParty();
      const inviteCode = `mpi_${randomBytes(16).toString('base64url')}`;
      await this.parties.create(manager, {
        id: randomUUID(),
        leaderId: playerId,
        inviteCodeHash: inviteCodeHash(inviteCode),
        inviteExpiresAt: new Date(Date.now() + this.inviteTtlMs),
      });
      const party = await this.partyOf(manager, playerId);
      return { status: 201, body: { ...(await this.response(party, manager)), inviteCode } };
    };
    if (key === undefined) return { ...(await this.transaction(work)), replayed: false };
    return this.uniquely(() =>
      this.idempotency.execute({ playerId, key, route: 'POST parties', input: {} }, work),
    );
  }

  async join(playerId: string, inviteCode: string): Promise<PartyResponse> {
    const party = await this.transaction(async (manager) => {
      const found = await this.parties.lockByInvite(manager, inviteCodeHash(inviteCode));
      if (!found || found.inviteExpiresAt.getTime() <= Date.now()) {
        throw new CodedError(
          ErrorCode.PARTY_INVITE_INVALID,
          'No party has this invite code, or its invite expired: ask the leader for a new party',
        );
      }
      if (found.members.some((member) => member.playerId === playerId)) return found;
      if (await this.parties.partyOf(manager, playerId)) throw alreadyInParty();
      if (found.members.length >= this.maxSize) {
        throw new CodedError(
          ErrorCode.PARTY_FULL,
          `The party has ${found.members.length} members, the most a team of any mode holds`,
        );
      }
      await this.refuseWhileSearching(manager, found);
      await this.parties.addMember(manager, found.id, playerId);
      return this.partyOf(manager, playerId);
    });
    return this.response(party);
  }

  async current(playerId: string): Promise<PartyResponse> {
    const party = await this.parties.partyOf(this.dataSource.manager, playerId);
    if (!party) throw noParty();
    return this.response(party);
  }

  /** A member leaves; the leader leaving disbands the party. */
  async leave(playerId: string): Promise<void> {
    await this.transaction(async (manager) => {
      const party = await this.parties.partyOf(manager, playerId, { lock: true });
      if (!party) throw noParty();
      await this.refuseWhileSearching(manager, party);
      if (party.leaderId === playerId) await this.parties.disband(manager, party.id);
      else await this.parties.removeMember(manager, party.id, playerId);
    });
  }

  async disband(playerId: string): Promise<void> {
    await this.transaction(async (manager) => {
      const party = await this.leadersParty(manager, playerId);
      await this.refuseWhileSearching(manager, party);
      await this.parties.disband(manager, party.id);
    });
  }

  /** The caller's party, locked, when the caller leads it: for the leader's own actions. */
  async leadersParty(manager: EntityManager, playerId: string): Promise<StoredParty> {
    const party = await this.parties.partyOf(manager, playerId, { lock: true });
    if (!party) throw noParty();
    if (party.leaderId !== playerId) {
      throw new CodedError(ErrorCode.PARTY_LEADER_ONLY, 'Only the party leader may do this');
    }
    return party;
  }

  private async refuseWhileSearching(manager: EntityManager, party: StoredParty): Promise<void> {
    for (const member of party.members) {
      const live = await this.tickets.liveTicketOf(manager, member.playerId);
      if (live?.party && live.state === 'SEARCHING') {
        throw new CodedError(
          ErrorCode.PARTY_IN_QUEUE,
          `The party is searching (party ticket ${live.party.id}): cancel its ticket before its members change`,
        );
      }
    }
  }

  private async partyOf(manager: EntityManager, playerId: string): Promise<StoredParty> {
    const party = await this.parties.partyOf(manager, playerId);
    if (!party) throw noParty();
    return party;
  }

  private async response(
    party: StoredParty,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<PartyResponse> {
    const members = await Promise.all(
      party.members.map(async (member) => {
        const estimates = await this.latencies.estimates(
          manager,
          member.playerId,
          this.policy.regions,
        );
        const regionsMeasured = Object.keys(estimates).sort();
        const live = await this.tickets.liveTicketOf(manager, member.playerId);
        return {
          playerId: member.playerId,
          joinedAt: member.joinedAt.toISOString(),
          probed: regionsMeasured.length > 0,
          regionsMeasured,
          ...(live?.party ? { ticketId: live.id } : {}),
        };
      }),
    );
    return {
      partyId: party.id,
      leaderId: party.leaderId,
      members,
      maxSize: this.maxSize,
      inviteExpiresAt: party.inviteExpiresAt.toISOString(),
    };
  }

  private transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.uniquely(() => runInTransaction(this.dataSource, work));
  }

  private async uniquely<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      // Two requests raced past the check: the unique index on party_members.player_id decided.
      if (sqlStateOf(error) === '23505') throw alreadyInParty();
      throw error;
    }
  }
}

function noParty(): CodedError {
  return new CodedError(ErrorCode.PARTY_NOT_FOUND, 'This player is in no party');
}

function alreadyInParty(): CodedError {
  return new CodedError(
    ErrorCode.PARTY_ALREADY_JOINED,
    'This player is in a party already: leave it first (POST /v1/parties/current/leave)',
  );
}
