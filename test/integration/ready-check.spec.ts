import type { INestApplicationContext } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type {
  PartyResponse,
  PartyTicketResponse,
  ReadyCheckAnswerResponse,
  TicketResponse,
} from '@matchplane/contracts';
import { ReadyCheck } from '@matchplane/matches';
import type { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { cancelQueued, startInProcessMatcher } from '../support/in-process-matcher';
import { startPlayerApi, type PlayerApi } from '../support/player-api';

/*
 * Concurrent answers to one ready check, through the real player routes over a match the real
 * matcher formed: a squad's eight players answer at once. The match's row lock serialises them, so
 * the match moves exactly once, its revisions stay gapless, and each player is answered as the
 * order the lock gave them says.
 */
const ENV = { QUEUE_ACCEPTANCE_TIMEOUTS: 'squad=60000' };

describe(ReadyCheck.name, () => {
  let api: PlayerApi;
  let matcher: { context: INestApplicationContext; loop: MatcherLoop };
  const queued: { token: string; ticket: TicketResponse }[] = [];

  beforeAll(async () => {
    api = await startPlayerApi(ENV);
    matcher = await startInProcessMatcher(api, ENV);
  });
  afterEach(() => cancelQueued(api, queued));
  afterAll(async () => {
    await matcher.context.close();
    await api.close();
  });

  /** Two players queued as a party (leader first), through the party routes. */
  async function queuedParty(): Promise<typeof queued> {
    const [leader, member] = [await api.newPlayer(), await api.newPlayer()];
    for (const session of [leader, member])
      expect((await api.probe(session.token, 'eu-west')).statusCode).toBe(200);
    const party = await api.request('POST', '/v1/parties', { token: leader.token });
    const { inviteCode } = party.json<PartyResponse>();
    const joined = await api.request('POST', '/v1/parties/join', {
      token: member.token,
      body: { inviteCode },
    });
    expect(joined.statusCode).toBe(200);
    const enqueued = await api.request('POST', '/v1/queue/party-tickets', {
      token: leader.token,
      body: { mode: 'squad' },
      idempotencyKey: randomUUID(),
    });
    expect(enqueued.statusCode).toBe(201);
    const { tickets } = enqueued.json<PartyTicketResponse>();
    return [leader, member].map((session) => ({
      token: session.token,
      ticket: tickets.find((t) => t.playerId === session.playerId)!,
    }));
  }

  async function squadMatch(
    party: typeof queued = [],
  ): Promise<{ matchId: string; players: typeof queued }> {
    const players: typeof queued = [...party];
    while (players.length < 8) {
      const player = await api.newPlayer();
      expect((await api.probe(player.token, 'eu-west')).statusCode).toBe(200);
      const response = await api.enqueue(player.token, 'squad');
      expect(response.statusCode).toBe(201);
      players.push({ token: player.token, ticket: response.json<TicketResponse>() });
    }
    queued.push(...players);
    await matcher.loop.passNow('squad');
    const tickets = await Promise.all(players.map((p) => ticketOf(p)));
    const matchIds = new Set(tickets.map((t) => t.matchId));
    expect(tickets.map((t) => t.state)).toEqual(Array(8).fill('MATCHED'));
    expect(matchIds.size).toBe(1);
    return { matchId: [...matchIds][0]!, players };
  }

  const ticketOf = async (player: { token: string; ticket: TicketResponse }) =>
    (
      await api.request('GET', `/v1/queue/tickets/${player.ticket.id}`, { token: player.token })
    ).json<TicketResponse>();

  const answer = (token: string, matchId: string, verb: 'accept' | 'decline') =>
    api.request('POST', `/v1/matches/${matchId}/${verb}`, { token });

  async function matchEvents(matchId: string): Promise<{ revision: number; to: string }[]> {
    const rows = await api.ds.query<{ revision: string; payload: { to: string } }[]>(
      `SELECT revision, payload FROM outbox WHERE aggregate_id = $1 AND event = 'match.state_changed' ORDER BY revision`,
      [matchId],
    );
    return rows.map((row) => ({ revision: Number(row.revision), to: row.payload.to }));
  }

  it('moves the match to ALLOCATING exactly once when all eight accept at once', async () => {
    const { matchId, players } = await squadMatch();
    const responses = await Promise.all(players.map((p) => answer(p.token, matchId, 'accept')));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    const states = responses.map((r) => r.json<ReadyCheckAnswerResponse>().matchState).sort();
    // Only the last acceptance under the lock sees the match move.
    expect(states).toEqual([...Array(7).fill('AWAITING_ACCEPTANCE'), 'ALLOCATING'].sort());
    expect(await matchEvents(matchId)).toEqual([
      { revision: 1, to: 'AWAITING_ACCEPTANCE' },
      { revision: 2, to: 'ALLOCATING' },
    ]);
    const tickets = await Promise.all(players.map((p) => ticketOf(p)));
    expect(tickets.map((t) => t.state)).toEqual(Array(8).fill('MATCHED'));
  });

  it('a decline among concurrent acceptances cancels once: who accepted before it searches again', async () => {
    const { matchId, players } = await squadMatch();
    const [decliner, ...others] = players;
    const [declined, ...accepted] = await Promise.all([
      answer(decliner!.token, matchId, 'decline'),
      ...others.map((p) => answer(p.token, matchId, 'accept')),
    ]);
    expect(declined.statusCode).toBe(200);
    expect(await matchEvents(matchId)).toEqual([
      { revision: 1, to: 'AWAITING_ACCEPTANCE' },
      { revision: 2, to: 'CANCELLED' },
    ]);
    expect((await ticketOf(decliner!)).state).toBe('CANCELLED');
    for (const [index, response] of accepted.entries()) {
      const ticket = await ticketOf(others[index]!);
      if (response.statusCode === 200) {
        // Accepted before the decline: back in the queue with its place.
        expect(ticket).toMatchObject({
          state: 'SEARCHING',
          enqueuedAt: others[index]!.ticket.enqueuedAt,
        });
      } else {
        // Came after it: the match was gone; let go without penalty.
        expect(response.statusCode).toBe(409);
        expect(response.json<{ code: string }>().code).toBe('NOT_AWAITING_ACCEPTANCE');
        expect(ticket).toMatchObject({ state: 'CANCELLED', endReason: 'MATCH_CANCELLED' });
      }
    }
  });

  it('lets a party go whole when one of its members declines, though the other accepted', async () => {
    const [leader, member] = await queuedParty();
    const { matchId, players } = await squadMatch([leader!, member!]);
    const solo = players[2]!;
    expect((await answer(leader!.token, matchId, 'accept')).statusCode).toBe(200);
    expect((await answer(solo.token, matchId, 'accept')).statusCode).toBe(200);
    expect((await answer(member!.token, matchId, 'decline')).statusCode).toBe(200);
    // The leader accepted, but its party cannot search without the member: it is let go.
    expect(await ticketOf(leader!)).toMatchObject({
      state: 'CANCELLED',
      endReason: 'MATCH_CANCELLED',
    });
    expect(await ticketOf(member!)).toMatchObject({
      state: 'CANCELLED',
      endReason: 'ACCEPTANCE_DECLINED',
    });
    expect(await ticketOf(solo)).toMatchObject({ state: 'SEARCHING' });
  });
});
