import { randomUUID } from 'node:crypto';
import type { PartyResponse, SessionResponse, TicketResponse } from '@matchplane/contracts';
import type { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import type { InjectedResponse, PlayerApi } from './player-api';

/** A ticket a test queued, with its player's session token (for cancelQueued). */
export interface QueuedTicket {
  token: string;
  ticket: TicketResponse;
}

/** A new guest who measured eu-west through the real probe routes. */
export async function measuredPlayer(api: PlayerApi): Promise<SessionResponse> {
  const session = await api.newPlayer();
  const probed = await api.probe(session.token, 'eu-west');
  if (probed.statusCode !== 200) throw new Error(`probe answered ${probed.statusCode}`);
  return session;
}

/** POST /v1/queue/tickets with `body` and a fresh Idempotency-Key. */
export function postTicket(
  api: PlayerApi,
  token: string,
  body: unknown,
): Promise<InjectedResponse> {
  return api.request('POST', '/v1/queue/tickets', { token, body, idempotencyKey: randomUUID() });
}

/** The ticket as its player reads it now (explanation included). */
export async function ticketNow(api: PlayerApi, queued: QueuedTicket): Promise<TicketResponse> {
  const answer = await api.request('GET', `/v1/queue/tickets/${queued.ticket.id}`, {
    token: queued.token,
  });
  return answer.json<TicketResponse>();
}

/** The ticket ids of each match a pass committed, sorted, the matches in sorted order. */
export function committedTickets(pass: Awaited<ReturnType<MatcherLoop['passNow']>>): string[][] {
  return (pass?.committed ?? []).map((match) => match.tickets.map((t) => t.id).sort()).sort();
}

/** A new measured player queued with `body` (a 201 or it throws), recorded in `queued`. */
export async function queuedPlayer(
  api: PlayerApi,
  body: unknown,
  queued: QueuedTicket[],
): Promise<QueuedTicket> {
  const { token } = await measuredPlayer(api);
  const created = await postTicket(api, token, body);
  if (created.statusCode !== 201) {
    throw new Error(`queueing answered ${created.statusCode}: ${created.body}`);
  }
  const entry = { token, ticket: created.json<TicketResponse>() };
  queued.push(entry);
  return entry;
}

/** A party of `size` new measured players, the leader first, every other one joined by its code. */
export async function partyOf(api: PlayerApi, size: number): Promise<SessionResponse[]> {
  const leader = await measuredPlayer(api);
  const created = await api.request('POST', '/v1/parties', { token: leader.token });
  const { inviteCode } = created.json<PartyResponse>();
  const players = [leader];
  for (let i = 1; i < size; i++) {
    const member = await measuredPlayer(api);
    const joined = await api.request('POST', '/v1/parties/join', {
      token: member.token,
      body: { inviteCode },
    });
    if (joined.statusCode !== 200) throw new Error(`joining answered ${joined.statusCode}`);
    players.push(member);
  }
  return players;
}
