import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AllocationStore, RosterStore, type AllocationRecord } from '@matchplane/allocation';
import {
  ErrorCode,
  SERVER_PROTOCOL_VERSION,
  type RegisterServerResponse,
  type RosterResponse,
} from '@matchplane/contracts';
import { isTerminalMatchState, type MatchSnapshot } from '@matchplane/domain';
import { CodedError } from '@matchplane/errors';
import { manifestRevision, type SignedRosterManifest } from '@matchplane/join-auth';
import { MatchStore } from '@matchplane/matches';
import { runInTransaction } from '@matchplane/persistence';
import { TicketStore } from '@matchplane/tickets';
import { REGISTER, ServerRouteTransactions, stateConflict } from './server-route.transactions';
import type { RegisterServerBody } from './servers.dto';

/**
 * A game server joining its match: register (READ COMMITTED under row locks, the burst path) and
 * the roster it serves its players by (REPEATABLE READ, read only). A repeated call answers the
 * match as it is.
 */
@Injectable()
export class ServerRegistrationService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly routes: ServerRouteTransactions,
    private readonly matches: MatchStore,
    private readonly tickets: TicketStore,
    private readonly allocations: AllocationStore,
    private readonly rosters: RosterStore,
  ) {}

  /**
   * ALLOCATING -> PROCESS_READY -> ASSIGNMENT_READY and every ticket MATCHED -> ASSIGNED, only
   * when every participant holds a live, unexpired assignment to this server. One READ COMMITTED
   * transaction under the match's and its tickets' row locks (the others are SERIALIZABLE).
   */
  async register(
    allocation: AllocationRecord,
    body: RegisterServerBody,
  ): Promise<RegisterServerResponse> {
    if (body.protocolVersion !== SERVER_PROTOCOL_VERSION) {
      throw new CodedError(
        ErrorCode.SERVER_PROTOCOL_UNSUPPORTED,
        `Protocol version ${body.protocolVersion} is not supported; this control plane speaks ${SERVER_PROTOCOL_VERSION}`,
      );
    }
    return this.routes.commit(
      'register',
      async (manager, now, unit) => {
        // The match row, then its tickets in id order: the locks every writer of either takes
        // (or waits on) first, so nothing the gate reads below can change before commit.
        const match = await this.routes.loadMatch(manager, allocation, { forUpdate: true });
        const answer = (m: MatchSnapshot) => ({
          matchId: m.id,
          serverId: allocation.serverId,
          state: m.state,
          revision: m.revision,
        });
        if (match.state !== 'ALLOCATING' && match.state !== 'PROCESS_READY') {
          return answer(match);
        }
        const tickets = await this.tickets.lockMany(
          manager,
          match.participants.map((p) => p.ticketId),
        );
        const roster = await this.rosters.liveRoster(manager, match.id, allocation.serverId, now);
        if (!roster.ok || roster.entries.length !== match.participants.length) {
          throw new CodedError(
            ErrorCode.ASSIGNMENTS_NOT_READY,
            `Not every participant of match ${match.id} holds a live assignment to this server${roster.ok ? '' : `: ${roster.problem}`}`,
            { retryAfterSeconds: 1 },
          );
        }
        const changes = await this.matches.advance(
          unit,
          match,
          match.state === 'ALLOCATING'
            ? [
                // The region the allocator actually used goes on the match and its events.
                {
                  to: 'PROCESS_READY',
                  ...(allocation.region === undefined ? {} : { serverRegion: allocation.region }),
                },
                { to: 'ASSIGNMENT_READY' },
              ]
            : [{ to: 'ASSIGNMENT_READY' }],
          now,
        );
        const current = changes.at(-1)?.match ?? match;
        await this.tickets.transitionMany(
          unit,
          tickets.filter((ticket) => ticket.matchId === match.id && ticket.state === 'MATCHED'),
          () => ({ to: 'ASSIGNED', matchId: match.id }),
          now,
        );
        await this.allocations.markRegistered(manager, current.id, {
          protocolVersion: body.protocolVersion,
          imageDigest: body.imageDigest,
          now,
        });
        return answer(current);
      },
      REGISTER,
    );
  }

  /**
   * The published roster and its manifest. Until initial connect it is served only while it is
   * exactly the durable participants, each with a live assignment (the check the allocator signed
   * against); from IN_PROGRESS on it is served as signed (the server already reported who came).
   */
  async roster(allocation: AllocationRecord): Promise<RosterResponse> {
    return runInTransaction(
      this.dataSource,
      async (manager) => {
        const now = new Date();
        const match = await this.routes.loadMatch(manager, allocation);
        if (isTerminalMatchState(match.state)) throw stateConflict(match, 'its roster is closed');
        const roster = await this.rosters.liveRoster(manager, match.id, allocation.serverId, now);
        let entries: RosterResponse['entries'] | undefined;
        let manifest: SignedRosterManifest | undefined;
        if (roster.ok) {
          entries = roster.entries.map((e) => ({
            playerId: e.playerId,
            team: e.team,
            joinToken: e.joinToken,
            expiresAt: e.expiresAt.toISOString(),
          }));
          manifest = roster.manifest;
        } else if (match.state === 'IN_PROGRESS') {
          const signed = await this.rosters.signedRoster(manager, match.id);
          manifest = signed?.manifest;
          const teams = new Map(match.participants.map((p) => [p.playerId, p.team]));
          entries = signed?.assignments.map((a) => ({
            playerId: a.playerId,
            team: teams.get(a.playerId) ?? 0,
            joinToken: a.joinToken,
            expiresAt: a.expiresAt.toISOString(),
          }));
        }
        if (!manifest || !entries) {
          throw new CodedError(
            ErrorCode.ASSIGNMENTS_NOT_READY,
            `The roster of match ${match.id} cannot be served: ${roster.ok ? 'not published' : roster.problem}`,
            { retryAfterSeconds: 1 },
          );
        }
        return {
          matchId: match.id,
          serverId: allocation.serverId,
          endpoint: allocation.endpoint,
          mode: match.mode,
          region: match.region,
          revision: manifestRevision(manifest),
          entries,
          manifest: { ...manifest, revision: manifestRevision(manifest) },
        };
      },
      { isolation: 'REPEATABLE READ' },
    );
  }
}
