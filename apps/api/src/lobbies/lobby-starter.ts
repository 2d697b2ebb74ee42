import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { LobbyResponse } from '@matchplane/contracts';
import { LatencyStore } from '@matchplane/latency';
import { MatchStore } from '@matchplane/matches';
import type { UnitOfWork } from '@matchplane/persistence';
import { PlayerStore } from '@matchplane/players';
import { TicketStore, type StoredTicket } from '@matchplane/tickets';
import { QueueAdmission } from '../queue/queue-admission';
import { QueuePolicy } from '../queue/queue-policy';
import { LobbyRefusal } from './lobby-refusals';
import { LobbyService } from './lobby.service';
import { LobbyStore, type StoredLobby, type StoredLobbyMember } from './lobby.store';

/**
 * The owner's start: in one transaction, a ticket per member (created and at once MATCHED, so
 * every per-player path after matching — assignments, join tokens, the game server's reports, the
 * tickets' ends — is the queue's), the match (ALLOCATING, revision 1, its envelope to every
 * member; `rated` only for a ranked lobby) through MatchStore, and the lobby STARTED. The
 * dispatcher hands the match to the allocator as it does a matched one; the matcher is not
 * involved. An operator's hold on the mode or the region refuses it as it refuses an enqueue. Any
 * refusal leaves nothing written.
 */
@Injectable()
export class LobbyStarter {
  constructor(
    private readonly service: LobbyService,
    private readonly lobbies: LobbyStore,
    private readonly matches: MatchStore,
    private readonly tickets: TicketStore,
    private readonly players: PlayerStore,
    private readonly latencies: LatencyStore,
    private readonly policy: QueuePolicy,
    private readonly admission: QueueAdmission,
  ) {}

  start(ownerId: string): Promise<LobbyResponse> {
    return this.service.transaction(async (manager, unit) => {
      const lobby = await this.service.ownersLobby(manager, ownerId);
      const teams = this.teamsOf(lobby);
      const now = new Date();
      const entrants = [];
      for (const member of lobby.members) {
        await this.service.refuseIfQueued(manager, member.playerId);
        const profile = await this.players.queueEntryProfile(manager, member.playerId);
        const predictedRtt = await this.latencies.estimates(
          manager,
          member.playerId,
          this.policy.regions,
        );
        entrants.push({
          member,
          rating: profile?.rating ?? 0,
          ratingSigma: profile?.ratingSigma,
          predictedRtt,
        });
      }
      const region = lobby.region ?? this.bestRegion(entrants.map((e) => e.predictedRtt));
      // An operator's pause or drain of the mode, or of the match's region, holds lobbies too.
      await this.admission.check(manager, lobby.mode, { [region]: 0 });
      const created: StoredTicket[] = [];
      for (const entrant of entrants) {
        const { ticket } = await this.tickets.create(
          unit,
          {
            id: randomUUID(),
            playerId: entrant.member.playerId,
            mode: lobby.mode,
            rating: entrant.rating,
            predictedRtt: entrant.predictedRtt,
            origin: 'lobby',
            ...(entrant.ratingSigma === undefined ? {} : { ratingSigma: entrant.ratingSigma }),
          },
          now,
        );
        created.push(ticket);
      }
      const roster = created.map((ticket) => ({
        playerId: ticket.playerId,
        ticketId: ticket.id,
        team: teams.get(ticket.playerId) as number,
        rating: ticket.rating,
      }));
      const matchId = await this.createMatch(unit, lobby, region, roster, now);
      await this.tickets.transitionMany(unit, created, () => ({ to: 'MATCHED', matchId }), now);
      await this.lobbies.markStarted(manager, lobby.id, matchId, roster, this.service.expiry(now));
      return this.service.response(await this.service.reread(manager, ownerId));
    });
  }

  private async createMatch(
    unit: UnitOfWork,
    lobby: StoredLobby,
    region: string,
    roster: { playerId: string; ticketId: string; team: number; rating: number }[],
    now: Date,
  ): Promise<string> {
    const change = await this.matches.create(
      unit,
      { mode: lobby.mode, region, participants: roster, rated: lobby.ranked },
      now,
    );
    return change.match.id;
  }

  /**
   * Each member's team: the owner's arrangement, the others placed in turn on the team with the
   * most room left (each team has its own size: `hunt:4+1`). Every team of the mode must hold a
   * player (a match of one team is no match).
   */
  private teamsOf(lobby: StoredLobby): Map<string, number> {
    const mode = this.policy.mode(lobby.mode);
    const sizes = Array.from({ length: mode.teamCount }, () => 0);
    const teams = new Map<string, number>();
    const unplaced: StoredLobbyMember[] = [];
    for (const member of lobby.members) {
      if (member.team === undefined) unplaced.push(member);
      else {
        teams.set(member.playerId, member.team);
        sizes[member.team] = (sizes[member.team] ?? 0) + 1;
      }
    }
    const roomOf = (team: number) => (mode.teamSizes[team] ?? 0) - (sizes[team] ?? 0);
    for (const member of unplaced) {
      const roomiest = sizes.reduce(
        (best, _, team) => (roomOf(team) > roomOf(best) ? team : best),
        0,
      );
      teams.set(member.playerId, roomiest);
      sizes[roomiest] = (sizes[roomiest] ?? 0) + 1;
    }
    if (sizes.some((size) => size === 0)) {
      throw LobbyRefusal.teams(
        `Mode ${mode.mode} plays ${mode.teamCount} teams: a start needs a player on each, the lobby has ${lobby.members.length} member(s) in teams of ${sizes.join(', ')}`,
      );
    }
    const over = sizes.findIndex((size, team) => size > (mode.teamSizes[team] ?? 0));
    if (over >= 0) {
      throw LobbyRefusal.teams(
        `Team ${over} of mode ${mode.mode} holds ${mode.teamSizes[over]} players, not ${sizes[over]}`,
      );
    }
    return teams;
  }

  /**
   * With no region asked for: the offered region the most members measured, then the one with the
   * lowest worst RTT among them; the first offered region when nobody measured any.
   */
  private bestRegion(estimates: readonly Readonly<Record<string, number>>[]): string {
    let best: { region: string; measured: number; worst: number } | undefined;
    for (const region of this.policy.regions) {
      const rtts = estimates.map((e) => e[region]).filter((rtt) => rtt !== undefined);
      const candidate = { region, measured: rtts.length, worst: Math.max(0, ...rtts) };
      if (
        !best ||
        candidate.measured > best.measured ||
        (candidate.measured === best.measured && candidate.worst < best.worst)
      ) {
        best = candidate;
      }
    }
    return best?.region ?? (this.policy.regions[0] as string);
  }
}
