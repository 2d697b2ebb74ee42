import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import type { CreateLobbyRequest, LobbyResponse } from '@matchplane/contracts';
import { IdempotencyStore, type IdempotentOutcome } from '@matchplane/idempotency';
import { runInTransaction, sqlStateOf, type UnitOfWork } from '@matchplane/persistence';
import { TicketStore } from '@matchplane/tickets';
import { ApiConfig } from '../api.config';
import { QueuePolicy } from '../queue/queue-policy';
import { LobbyRefusal } from './lobby-refusals';
import { LobbyStore, type StoredLobby } from './lobby.store';

/** `mpl_` + 128 random bits (base64url): unguessable; only its SHA-256 is stored. */
export const LOBBY_INVITE_CODE_PATTERN = /^mpl_[A-Za-z0-9_-]{22}$/;

/** How many expired lobbies a create deletes on its way (the table's only purge). */
const PURGE_PER_CREATE = 20;

export function lobbyInviteHash(code: string): Buffer {
  return createHash('sha256').update(code).digest();
}

/**
 * Lobbies before their start: an owner creates one for a mode and gets its invite code, players
 * join with it, members leave (the owner leaving closes the lobby), the owner kicks and arranges
 * teams. Each change is one transaction serialised on the lobby row and pushes its expiry back by
 * LOBBY_TTL_SECONDS; a lobby idle past it is gone (deleted when next touched, or purged by a
 * later create). A player is in at most one lobby and holds no live queue ticket while in one.
 * The start is LobbyStarter's.
 */
@Injectable()
export class LobbyService {
  readonly ttlMs: number;

  constructor(
    private readonly lobbies: LobbyStore,
    private readonly tickets: TicketStore,
    private readonly idempotency: IdempotencyStore,
    private readonly policy: QueuePolicy,
    private readonly dataSource: DataSource,
    @Inject(ApiConfig) config: ApiConfig,
  ) {
    this.ttlMs = config.LOBBY_TTL_SECONDS * 1000;
  }

  /** With an Idempotency-Key a retry replays the first answer, invite code included. */
  async create(
    playerId: string,
    body: CreateLobbyRequest,
    key?: string,
  ): Promise<IdempotentOutcome<LobbyResponse>> {
    const mode = this.policy.mode(body.mode);
    const most = mode.teamSizes.reduce((sum, teamSize) => sum + teamSize, 0);
    const size = body.size ?? most;
    if (size < 2 || size > most) {
      throw LobbyRefusal.invalid(
        'size',
        `size must be from 2 to ${most} (mode ${mode.mode}), got ${size}`,
      );
    }
    if (body.region !== undefined && !this.policy.regions.includes(body.region)) {
      throw LobbyRefusal.regionNotOffered(body.region, this.policy.regions);
    }
    const work = async (manager: EntityManager) => {
      const now = new Date();
      await this.lobbies.purgeExpired(manager, now, PURGE_PER_CREATE);
      await this.refuseIfInLobby(manager, playerId, now);
      await this.refuseIfQueued(manager, playerId);
      const inviteCode = `mpl_${randomBytes(16).toString('base64url')}`;
      await this.lobbies.create(manager, {
        id: randomUUID(),
        ownerId: playerId,
        inviteCodeHash: lobbyInviteHash(inviteCode),
        mode: mode.mode,
        size,
        ...(body.region === undefined ? {} : { region: body.region }),
        ranked: body.ranked ?? false,
        expiresAt: this.expiry(now),
      });
      const lobby = await this.lobbies.lobbyOf(manager, playerId);
      if (!lobby) throw LobbyRefusal.notFound();
      return { status: 201, body: { ...this.response(lobby), inviteCode } };
    };
    if (key === undefined) return { ...(await this.transaction(work)), replayed: false };
    return this.uniquely(() =>
      this.idempotency.execute({ playerId, key, route: 'POST lobbies', input: body }, work),
    );
  }

  /** Joining the lobby one is in already answers it again. */
  async join(playerId: string, inviteCode: string): Promise<LobbyResponse> {
    return this.transaction(async (manager) => {
      const now = new Date();
      const found = await this.lobbies.lockByInvite(manager, lobbyInviteHash(inviteCode));
      if (!found || found.state !== 'OPEN' || expired(found, now)) {
        throw LobbyRefusal.inviteInvalid();
      }
      if (found.members.some((member) => member.playerId === playerId)) {
        return this.response(found);
      }
      await this.refuseIfInLobby(manager, playerId, now);
      if (found.members.length >= found.size) throw LobbyRefusal.full(found.size);
      await this.refuseIfQueued(manager, playerId);
      await this.lobbies.addMember(manager, found.id, playerId, this.expiry(now));
      return this.response(await this.reread(manager, playerId));
    });
  }

  /** The player's lobby, open or started (a started one shows its match and tickets). */
  async current(playerId: string): Promise<LobbyResponse> {
    return this.transaction(async (manager) => {
      const lobby = await this.lobbies.lobbyOf(manager, playerId);
      if (!lobby || expired(lobby, new Date())) throw LobbyRefusal.notFound();
      return this.response(lobby);
    });
  }

  /** A member leaves; the owner leaving closes the lobby. A started lobby is left as it is. */
  async leave(playerId: string): Promise<void> {
    await this.transaction(async (manager) => {
      const lobby = await this.openLobbyOf(manager, playerId);
      if (lobby.ownerId === playerId) await this.lobbies.remove(manager, lobby.id);
      else await this.lobbies.removeMember(manager, lobby.id, playerId, this.expiry(new Date()));
    });
  }

  async kick(ownerId: string, playerId: string): Promise<LobbyResponse> {
    return this.transaction(async (manager) => {
      const lobby = await this.ownersLobby(manager, ownerId);
      if (playerId === ownerId) {
        throw LobbyRefusal.invalid(
          'playerId',
          'The owner cannot kick itself: leave to close the lobby',
        );
      }
      if (!lobby.members.some((member) => member.playerId === playerId)) {
        throw LobbyRefusal.notMember(playerId);
      }
      await this.lobbies.removeMember(manager, lobby.id, playerId, this.expiry(new Date()));
      return this.response(await this.reread(manager, ownerId));
    });
  }

  /** Team i holds `teams[i]`; every member named once, at most the mode's teams and team size. */
  async setTeams(ownerId: string, teams: readonly (readonly string[])[]): Promise<LobbyResponse> {
    return this.transaction(async (manager) => {
      const lobby = await this.ownersLobby(manager, ownerId);
      const mode = this.policy.mode(lobby.mode);
      if (teams.length > mode.teamCount) {
        throw LobbyRefusal.teams(
          `Mode ${mode.mode} has ${mode.teamCount} teams, got ${teams.length}`,
        );
      }
      const placed = new Map<string, number>();
      teams.forEach((team, index) => {
        const room = mode.teamSizes[index] ?? 0;
        if (team.length > room) {
          throw LobbyRefusal.teams(
            `Team ${index} has ${team.length} players; team ${index} of mode ${mode.mode} holds ${room}`,
          );
        }
        for (const playerId of team) {
          if (placed.has(playerId)) throw LobbyRefusal.teams(`Player ${playerId} is named twice`);
          placed.set(playerId, index);
        }
      });
      const members = new Set(lobby.members.map((member) => member.playerId));
      const stranger = [...placed.keys()].find((playerId) => !members.has(playerId));
      if (stranger !== undefined) throw LobbyRefusal.notMember(stranger);
      const missing = [...members].filter((playerId) => !placed.has(playerId));
      if (missing.length > 0) {
        throw LobbyRefusal.teams(`Every member needs a team; not placed: ${missing.join(', ')}`);
      }
      await this.lobbies.setTeams(manager, lobby.id, placed, this.expiry(new Date()));
      return this.response(await this.reread(manager, ownerId));
    });
  }

  /** The caller's open lobby, locked, when the caller owns it: for the owner's actions. */
  async ownersLobby(manager: EntityManager, playerId: string): Promise<StoredLobby> {
    const lobby = await this.openLobbyOf(manager, playerId);
    if (lobby.ownerId !== playerId) throw LobbyRefusal.ownerOnly();
    return lobby;
  }

  response(lobby: StoredLobby): LobbyResponse {
    const mode = this.policy.mode(lobby.mode);
    return {
      lobbyId: lobby.id,
      ownerId: lobby.ownerId,
      mode: lobby.mode,
      size: lobby.size,
      teamCount: mode.teamCount,
      teamSize: mode.teamSize,
      teamSizes: [...mode.teamSizes],
      ...(lobby.region === undefined ? {} : { region: lobby.region }),
      ranked: lobby.ranked,
      state: lobby.state,
      members: lobby.members.map((member) => ({
        playerId: member.playerId,
        joinedAt: member.joinedAt.toISOString(),
        ...(member.team === undefined ? {} : { team: member.team }),
        ...(member.ticketId === undefined ? {} : { ticketId: member.ticketId }),
      })),
      expiresAt: lobby.expiresAt.toISOString(),
      ...(lobby.matchId === undefined ? {} : { matchId: lobby.matchId }),
    };
  }

  expiry(now: Date): Date {
    return new Date(now.getTime() + this.ttlMs);
  }

  async refuseIfQueued(manager: EntityManager, playerId: string): Promise<void> {
    const live = await this.tickets.liveTicketOf(manager, playerId);
    if (live) throw LobbyRefusal.queued(playerId, live.id);
  }

  async reread(manager: EntityManager, playerId: string): Promise<StoredLobby> {
    const lobby = await this.lobbies.lobbyOf(manager, playerId);
    if (!lobby) throw LobbyRefusal.notFound();
    return lobby;
  }

  transaction<T>(work: (manager: EntityManager, unit: UnitOfWork) => Promise<T>): Promise<T> {
    return this.uniquely(() => runInTransaction(this.dataSource, work));
  }

  /** The caller's lobby, locked, while open and unexpired; a started one refuses changes. */
  private async openLobbyOf(manager: EntityManager, playerId: string): Promise<StoredLobby> {
    const lobby = await this.lobbies.lobbyOf(manager, playerId, { lock: true });
    // An expired lobby is as good as gone; the create that lets its members go deletes it.
    if (!lobby || expired(lobby, new Date())) throw LobbyRefusal.notFound();
    if (lobby.state === 'STARTED') throw LobbyRefusal.started(lobby.matchId);
    return lobby;
  }

  /**
   * Refuses a player in an open lobby; a membership of an expired or started lobby is let go
   * first (the started lobby's match goes on without it: its roster is the match's).
   */
  private async refuseIfInLobby(manager: EntityManager, playerId: string, now: Date) {
    const lobby = await this.lobbies.lobbyOf(manager, playerId, { lock: true });
    if (!lobby) return;
    if (expired(lobby, now)) return this.lobbies.remove(manager, lobby.id);
    if (lobby.state === 'OPEN') throw LobbyRefusal.alreadyJoined();
    await this.lobbies.removeMember(manager, lobby.id, playerId, lobby.expiresAt);
  }

  private async uniquely<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (sqlStateOf(error) !== '23505') throw error;
      // Two requests raced past a check: a unique index decided (a player in one lobby; one live
      // ticket per player, which a member queueing while its lobby starts trips).
      if (constraintOf(error) === 'queue_tickets_one_live_per_player') {
        throw LobbyRefusal.queued();
      }
      throw LobbyRefusal.alreadyJoined();
    }
  }
}

function expired(lobby: StoredLobby, now: Date): boolean {
  return lobby.expiresAt.getTime() <= now.getTime();
}

function constraintOf(error: unknown): string | undefined {
  const candidate = error as { constraint?: unknown; driverError?: { constraint?: unknown } };
  const constraint = candidate.driverError?.constraint ?? candidate.constraint;
  return typeof constraint === 'string' ? constraint : undefined;
}
