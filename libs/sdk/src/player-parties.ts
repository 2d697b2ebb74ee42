import {
  PlayerRoutes,
  type CreatePartyTicketRequest,
  type JoinPartyRequest,
  type PartyResponse,
  type PartyTicketResponse,
} from '@matchplane/contracts';
import { pollUntil, type PlayerCalls } from './player-calls';
import type { WaitForTicketOptions } from './player-tickets';

/** PlayerClient's parties (documented there). */
export class PartyCalls {
  constructor(
    private readonly calls: PlayerCalls,
    private readonly playerId: () => string | undefined,
  ) {}

  create(): Promise<PartyResponse> {
    return this.calls.required<PartyResponse>({
      method: 'POST',
      path: PlayerRoutes.parties,
      retry: 'idempotency-key',
    });
  }

  join(inviteCode: string): Promise<PartyResponse> {
    const body: JoinPartyRequest = { inviteCode };
    return this.calls.required<PartyResponse>({
      method: 'POST',
      path: PlayerRoutes.partyJoin,
      body,
      retry: 'safe',
    });
  }

  current(): Promise<PartyResponse> {
    return this.calls.required<PartyResponse>({
      method: 'GET',
      path: PlayerRoutes.currentParty,
      retry: 'safe',
    });
  }

  async leave(): Promise<void> {
    await this.calls.send({ method: 'POST', path: PlayerRoutes.currentPartyLeave, retry: 'never' });
  }

  async disband(): Promise<void> {
    await this.calls.send({ method: 'DELETE', path: PlayerRoutes.currentParty, retry: 'never' });
  }

  enqueue(
    mode: string,
    options: Omit<CreatePartyTicketRequest, 'mode'> = {},
  ): Promise<PartyTicketResponse> {
    const body: CreatePartyTicketRequest = { mode, ...options };
    return this.calls.required<PartyTicketResponse>({
      method: 'POST',
      path: PlayerRoutes.partyTickets,
      body,
      retry: 'idempotency-key',
    });
  }

  async waitForOwnTicket(options: WaitForTicketOptions = {}): Promise<string> {
    const playerId = this.playerId();
    if (!playerId) throw new Error('waitForPartyTicket needs a session made by createSession');
    return pollUntil(
      () => this.current(),
      (party) =>
        party.members.find((member) => member.playerId === playerId)?.ticketId || undefined,
      options,
      (_, timeoutMs) => new Error(`the party was not queued within ${timeoutMs} ms`),
    );
  }
}
