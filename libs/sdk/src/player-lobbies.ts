import {
  PlayerRoutes,
  type CreateLobbyRequest,
  type JoinLobbyRequest,
  type KickLobbyMemberRequest,
  type LobbyResponse,
  type SetLobbyTeamsRequest,
} from '@matchplane/contracts';
import { pollUntil, type PlayerCalls } from './player-calls';
import type { WaitForTicketOptions } from './player-tickets';

/**
 * A player's lobbies (custom games): `client.lobbies.create({ mode })` answers the invite code
 * (shown once), others `join(code)`, the owner `kick`s, `setTeams` and `start`s; the start creates
 * the match, and every member follows its own ticket (`waitForTicket`) to the assignment like a
 * queued player. Refusals (LOBBY_*) are thrown as MatchplaneApiError.
 */
export class LobbyCalls {
  constructor(
    private readonly calls: PlayerCalls,
    private readonly playerId: () => string | undefined,
  ) {}

  /** Retried with one Idempotency-Key, so a lost answer is replayed, invite code included. */
  create(request: CreateLobbyRequest): Promise<LobbyResponse> {
    return this.calls.required<LobbyResponse>({
      method: 'POST',
      path: PlayerRoutes.lobbies,
      body: request,
      retry: 'idempotency-key',
    });
  }

  /** Joining the lobby one is in already answers it again, so a retry is safe. */
  join(inviteCode: string): Promise<LobbyResponse> {
    const body: JoinLobbyRequest = { inviteCode };
    return this.calls.required<LobbyResponse>({
      method: 'POST',
      path: PlayerRoutes.lobbyJoin,
      body,
      retry: 'safe',
    });
  }

  current(): Promise<LobbyResponse> {
    return this.calls.required<LobbyResponse>({
      method: 'GET',
      path: PlayerRoutes.currentLobby,
      retry: 'safe',
    });
  }

  /** Leaves the lobby (the owner leaving closes it). */
  async leave(): Promise<void> {
    await this.calls.send({ method: 'POST', path: PlayerRoutes.currentLobbyLeave, retry: 'never' });
  }

  /** The owner removes a member. */
  kick(playerId: string): Promise<LobbyResponse> {
    const body: KickLobbyMemberRequest = { playerId };
    return this.calls.required<LobbyResponse>({
      method: 'POST',
      path: PlayerRoutes.currentLobbyKick,
      body,
      retry: 'never',
    });
  }

  /** The owner arranges the teams: team i holds `teams[i]`, every member named once. */
  setTeams(teams: string[][]): Promise<LobbyResponse> {
    const body: SetLobbyTeamsRequest = { teams };
    return this.calls.required<LobbyResponse>({
      method: 'POST',
      path: PlayerRoutes.currentLobbyTeams,
      body,
      retry: 'safe',
    });
  }

  /** The owner starts the lobby: the answer is STARTED, with the match and each member's ticket. */
  start(): Promise<LobbyResponse> {
    return this.calls.required<LobbyResponse>({
      method: 'POST',
      path: PlayerRoutes.currentLobbyStart,
      retry: 'never',
    });
  }

  /** A member waits for the owner's start and returns its own ticket id (polling the lobby). */
  async waitForStart(options: WaitForTicketOptions = {}): Promise<string> {
    const playerId = this.playerId();
    if (!playerId) throw new Error('lobbies.waitForStart needs a session made by createSession');
    return pollUntil(
      () => this.current(),
      (lobby) =>
        lobby.state === 'STARTED'
          ? lobby.members.find((member) => member.playerId === playerId)?.ticketId || undefined
          : undefined,
      options,
      (_, timeoutMs) => new Error(`the lobby was not started within ${timeoutMs} ms`),
    );
  }
}
