import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import type {
  PartyResponse,
  PartyTicketResponse,
  ProblemDetails,
  SessionResponse,
  TicketResponse,
} from '@matchplane/contracts';
import { MatchStore } from '@matchplane/matches';
import {
  CandidateProjection,
  TicketExpiryStage,
  TicketLiveness,
  TicketStore,
} from '@matchplane/tickets';
import { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { startInProcessMatcher } from '../support/in-process-matcher';
import { startPlayerApi, type PlayerApi } from '../support/player-api';

/**
 * Parties through the real player routes, the real matcher (a pass of the matcher app's module)
 * and the real expiry stage: nothing is seeded, every row comes from a route or a worker.
 */
const QUEUE_MODES = 'duel:1x2,pair:2x2,trio:3x2,squad:4x2';

interface TicketEvent {
  aggregate_id: string;
  player_ids: string[];
  payload: { from: string | null; to: string; reason?: string };
}

describe('parties', () => {
  let api: PlayerApi;
  let matcher: INestApplicationContext;

  beforeAll(async () => {
    api = await startPlayerApi({ QUEUE_MODES });
    matcher = (await startInProcessMatcher(api, { QUEUE_MODES })).context;
  });

  afterAll(async () => {
    await matcher?.close();
    await api?.close();
  });

  async function player(probe: string | null = 'eu-west'): Promise<SessionResponse> {
    const session = await api.newPlayer();
    if (probe) expect((await api.probe(session.token, probe)).statusCode).toBe(200);
    return session;
  }

  async function createParty(leader: SessionResponse): Promise<PartyResponse> {
    const response = await api.request('POST', '/v1/parties', { token: leader.token });
    expect(response.statusCode).toBe(201);
    return response.json<PartyResponse>();
  }

  async function join(member: SessionResponse, inviteCode: string) {
    return api.request('POST', '/v1/parties/join', {
      token: member.token,
      body: { inviteCode },
    });
  }

  /** A party of the leader and `members`, every one joined through the invite code. */
  async function party(leader: SessionResponse, ...members: SessionResponse[]) {
    const created = await createParty(leader);
    for (const member of members) {
      expect((await join(member, created.inviteCode as string)).statusCode).toBe(200);
    }
    return created;
  }

  function enqueueParty(leader: SessionResponse, mode: string, key = randomUUID()) {
    return api.request('POST', '/v1/queue/party-tickets', {
      token: leader.token,
      body: { mode },
      idempotencyKey: key,
    });
  }

  async function ticket(session: SessionResponse, id: string): Promise<TicketResponse> {
    const response = await api.request('GET', `/v1/queue/tickets/${id}`, { token: session.token });
    expect(response.statusCode).toBe(200);
    return response.json<TicketResponse>();
  }

  function ticketEvents(ticketIds: readonly string[]): Promise<TicketEvent[]> {
    return api.ds.query<TicketEvent[]>(
      `SELECT aggregate_id, player_ids, payload FROM outbox
        WHERE event = 'ticket.state_changed' AND aggregate_id = ANY($1::uuid[])
        ORDER BY aggregate_id, revision`,
      [ticketIds],
    );
  }

  it('creates a party with an invite code, lets players join and leave, and shows who probed', async () => {
    const leader = await player();
    const member = await player(null);
    const created = await createParty(leader);
    expect(created.inviteCode).toMatch(/^mpi_[A-Za-z0-9_-]{22}$/);
    expect(created.leaderId).toBe(leader.playerId);
    expect(created.maxSize).toBe(4);

    expect((await join(member, created.inviteCode as string)).statusCode).toBe(200);
    const current = await api.request('GET', '/v1/parties/current', { token: member.token });
    expect(current.statusCode).toBe(200);
    const view = current.json<PartyResponse>();
    expect(view).not.toHaveProperty('inviteCode');
    expect(view.members).toEqual([
      expect.objectContaining({
        playerId: leader.playerId,
        probed: true,
        regionsMeasured: ['eu-west'],
      }),
      expect.objectContaining({ playerId: member.playerId, probed: false, regionsMeasured: [] }),
    ]);

    // A player is in at most one party.
    const other = await createParty(await player());
    const twice = await join(member, other.inviteCode as string);
    expect(twice.statusCode).toBe(409);
    expect(twice.json<ProblemDetails>().code).toBe('PARTY_ALREADY_JOINED');
    const ownParty = await api.request('POST', '/v1/parties', { token: member.token });
    expect(ownParty.json<ProblemDetails>().code).toBe('PARTY_ALREADY_JOINED');

    // Only the leader disbands; a member leaves.
    const disband = await api.request('DELETE', '/v1/parties/current', { token: member.token });
    expect(disband.statusCode).toBe(403);
    expect(disband.json<ProblemDetails>().code).toBe('PARTY_LEADER_ONLY');
    const leave = await api.request('POST', '/v1/parties/current/leave', { token: member.token });
    expect(leave.statusCode).toBe(204);
    const gone = await api.request('GET', '/v1/parties/current', { token: member.token });
    expect(gone.statusCode).toBe(404);
    expect(gone.json<ProblemDetails>().code).toBe('PARTY_NOT_FOUND');
    expect(
      (await api.request('DELETE', '/v1/parties/current', { token: leader.token })).statusCode,
    ).toBe(204);
    expect(
      (await api.request('GET', '/v1/parties/current', { token: leader.token })).statusCode,
    ).toBe(404);
  });

  it('replays a keyed party creation, invite code included', async () => {
    const leader = await player();
    const key = randomUUID();
    const first = await api.request('POST', '/v1/parties', {
      token: leader.token,
      idempotencyKey: key,
    });
    expect(first.statusCode).toBe(201);
    const again = await api.request('POST', '/v1/parties', {
      token: leader.token,
      idempotencyKey: key,
    });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json<PartyResponse>().inviteCode).toBe(first.json<PartyResponse>().inviteCode);
    // Without the key, a second creation is refused: the player leads a party already.
    const unkeyed = await api.request('POST', '/v1/parties', { token: leader.token });
    expect(unkeyed.json<ProblemDetails>().code).toBe('PARTY_ALREADY_JOINED');
  });

  it('refuses unknown and malformed invite codes and a full party', async () => {
    const stranger = await player();
    const unknown = await join(stranger, `mpi_${'A'.repeat(22)}`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json<ProblemDetails>().code).toBe('PARTY_INVITE_INVALID');
    const malformed = await join(stranger, 'letmein');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json<ProblemDetails>().detail).toContain('inviteCode');

    const full = await party(await player(), await player(), await player(), await player());
    const fifth = await join(stranger, full.inviteCode as string);
    expect(fifth.statusCode).toBe(409);
    expect(fifth.json<ProblemDetails>().code).toBe('PARTY_FULL');
  });

  it('never lets concurrent joins grow a party past its size: every refusal a 409 naming why', async () => {
    const leader = await player();
    const created = await createParty(leader);
    const joiners = await Promise.all(Array.from({ length: 12 }, () => player(null)));
    const answers = await Promise.all(
      joiners.map((joiner) => join(joiner, created.inviteCode as string)),
    );
    // The largest team of QUEUE_MODES is 4: the leader and three joiners.
    expect(answers.filter((answer) => answer.statusCode === 200)).toHaveLength(3);
    const refusals = answers.filter((answer) => answer.statusCode !== 200);
    expect(refusals.map((refusal) => refusal.statusCode)).toEqual(Array(9).fill(409));
    for (const refusal of refusals) {
      expect(refusal.json<ProblemDetails>().code).toBe('PARTY_FULL');
    }
    const members = (
      await api.request('GET', '/v1/parties/current', { token: leader.token })
    ).json<PartyResponse>().members;
    expect(members).toHaveLength(4);
  });

  it('refuses an enqueue naming the member who has not probed, and one the mode cannot hold', async () => {
    const leader = await player();
    const unprobed = await player(null);
    await party(leader, unprobed);

    const notProbed = await enqueueParty(leader, 'pair');
    expect(notProbed.statusCode).toBe(409);
    const problem = notProbed.json<ProblemDetails>();
    expect(problem.code).toBe('NO_LATENCY_MEASURED');
    expect(problem.playerId).toBe(unprobed.playerId);
    expect(problem.detail).toContain(unprobed.playerId);

    const tooLarge = await enqueueParty(leader, 'duel');
    expect(tooLarge.statusCode).toBe(409);
    expect(tooLarge.json<ProblemDetails>().code).toBe('PARTY_TOO_LARGE');

    const notLeader = await api.request('POST', '/v1/queue/party-tickets', {
      token: unprobed.token,
      body: { mode: 'pair' },
      idempotencyKey: randomUUID(),
    });
    expect(notLeader.statusCode).toBe(403);

    // A member who already queued alone is named too.
    const leader2 = await player();
    const queuedAlone = await player();
    await party(leader2, queuedAlone);
    expect((await api.enqueue(queuedAlone.token, 'duel')).statusCode).toBe(201);
    const live = await enqueueParty(leader2, 'pair');
    expect(live.statusCode).toBe(409);
    expect(live.json<ProblemDetails>()).toMatchObject({
      code: 'TICKET_ALREADY_LIVE',
      playerId: queuedAlone.playerId,
    });

    const alone = await player();
    await createParty(alone);
    const tooSmall = await enqueueParty(alone, 'pair');
    expect(tooSmall.json<ProblemDetails>().code).toBe('PARTY_TOO_SMALL');
    // Nothing was queued by any refusal.
    const tickets = await api.ds.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM queue_tickets WHERE player_id = ANY($1::uuid[])`,
      [[leader.playerId, unprobed.playerId, alone.playerId, leader2.playerId]],
    );
    expect(tickets[0]?.n).toBe(0);
  });

  it('queues a party as one ticket per member, with an event each, idempotently', async () => {
    const leader = await player();
    const member = await player('us-east');
    await api.probe(member.token, 'eu-west');
    const created = await party(leader, member);
    const key = randomUUID();
    const response = await enqueueParty(leader, 'pair', key);
    expect(response.statusCode).toBe(201);
    const body = response.json<PartyTicketResponse>();
    expect(body.partyId).toBe(created.partyId);
    expect(body.tickets.map((t) => t.playerId).sort()).toEqual(
      [leader.playerId, member.playerId].sort(),
    );
    for (const t of body.tickets) {
      expect(t).toMatchObject({
        state: 'SEARCHING',
        partyTicketId: body.partyTicketId,
        partySize: 2,
      });
    }
    // Each member finds its own ticket on the party.
    const view = (
      await api.request('GET', '/v1/parties/current', { token: member.token })
    ).json<PartyResponse>();
    expect(Object.fromEntries(view.members.map((m) => [m.playerId, m.ticketId]))).toEqual(
      Object.fromEntries(body.tickets.map((t) => [t.playerId, t.id])),
    );
    const replay = await enqueueParty(leader, 'pair', key);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json<PartyTicketResponse>().partyTicketId).toBe(body.partyTicketId);

    const events = await ticketEvents(body.tickets.map((t) => t.id));
    expect(events).toHaveLength(2);
    for (const t of body.tickets) {
      expect(events.find((e) => e.aggregate_id === t.id)).toMatchObject({
        player_ids: [t.playerId],
        payload: { from: null, to: 'SEARCHING' },
      });
    }
    // Each member holds its own ticket: a member's solo enqueue is refused, as is a change of members.
    const solo = await api.enqueue(member.token, 'duel');
    expect(solo.json<ProblemDetails>().code).toBe('TICKET_ALREADY_LIVE');
    const leave = await api.request('POST', '/v1/parties/current/leave', { token: member.token });
    expect(leave.statusCode).toBe(409);
    expect(leave.json<ProblemDetails>().code).toBe('PARTY_IN_QUEUE');
    const memberTicket = body.tickets.find((t) => t.playerId === member.playerId) as TicketResponse;
    await api.request('DELETE', `/v1/queue/tickets/${memberTicket.id}`, {
      token: member.token,
      idempotencyKey: randomUUID(),
    });
  });

  it('forms a 2v2 of a party and two solos with the party on one team', async () => {
    const leader = await player();
    const member = await player();
    await party(leader, member);
    const solos = [await player(), await player()];
    // Queued solo, party, solo: with equal ratings a per-player balance would seat the two
    // oldest (the first solo and one party member) together and split the party.
    const soloTickets: TicketResponse[] = [];
    const enqueueSolo = async (solo: SessionResponse) => {
      const response = await api.enqueue(solo.token, 'pair');
      expect(response.statusCode).toBe(201);
      soloTickets.push(response.json<TicketResponse>());
    };
    await enqueueSolo(solos[0] as SessionResponse);
    const partyTicket = (await enqueueParty(leader, 'pair')).json<PartyTicketResponse>();
    await enqueueSolo(solos[1] as SessionResponse);

    const report = await matcher.get(MatcherLoop).passNow('pair');
    expect(report?.committed).toHaveLength(1);
    const matchId = report?.committed[0]?.matchId as string;
    const match = await api.app.get(MatchStore).load(undefined, matchId);
    const teamOf = new Map(match?.participants.map((p) => [p.playerId, p.team]));
    expect(match?.participants).toHaveLength(4);
    expect(teamOf.get(leader.playerId)).toBe(teamOf.get(member.playerId));
    for (const solo of solos)
      expect(teamOf.get(solo.playerId)).not.toBe(teamOf.get(leader.playerId));

    const sessions = [leader, member];
    for (const t of partyTicket.tickets) {
      const session = sessions.find((s) => s.playerId === t.playerId) as SessionResponse;
      expect(await ticket(session, t.id)).toMatchObject({ state: 'MATCHED', matchId });
    }
    for (const [index, t] of soloTickets.entries()) {
      expect(await ticket(solos[index] as SessionResponse, t.id)).toMatchObject({ matchId });
    }
  });

  it('never splits parties to fill a match: three parties of two make no 3v3', async () => {
    const parties: { sessions: SessionResponse[]; ticket: PartyTicketResponse }[] = [];
    for (let i = 0; i < 3; i += 1) {
      const sessions = [await player(), await player()];
      await party(sessions[0] as SessionResponse, sessions[1] as SessionResponse);
      const response = await enqueueParty(sessions[0] as SessionResponse, 'trio');
      expect(response.statusCode).toBe(201);
      parties.push({ sessions, ticket: response.json<PartyTicketResponse>() });
    }
    // Six players searching, but two teams of three cannot each hold whole parties of two.
    const report = await matcher.get(MatcherLoop).passNow('trio');
    expect(report?.matchable).toBe(6);
    expect(report?.committed).toHaveLength(0);
    expect(report?.rejected).toBe(0);

    // A solo completes it: 2 + 1 against 2 + 1, and the third party waits whole.
    const solos = [await player(), await player()];
    for (const solo of solos) expect((await api.enqueue(solo.token, 'trio')).statusCode).toBe(201);
    const next = await matcher.get(MatcherLoop).passNow('trio');
    expect(next?.committed).toHaveLength(1);
    const participants = next?.committed[0]?.proposal.participants ?? [];
    expect(participants).toHaveLength(6);
    const matched = new Set(participants.map((p) => p.playerId));
    for (const { sessions } of parties) {
      const inMatch = sessions.filter((s) => matched.has(s.playerId));
      expect([0, 2]).toContain(inMatch.length);
      if (inMatch.length === 2) {
        const teams = new Set(
          participants
            .filter((p) => inMatch.some((s) => s.playerId === p.playerId))
            .map((p) => p.team),
        );
        expect(teams.size).toBe(1);
      }
    }
    const waiting = parties.filter(({ sessions }) => !matched.has(sessions[0]?.playerId as string));
    expect(waiting).toHaveLength(1);
    for (const { sessions } of parties) {
      for (const t of parties.find((p) => p.sessions === sessions)?.ticket.tickets ?? []) {
        const session = sessions.find((s) => s.playerId === t.playerId) as SessionResponse;
        const state = (await ticket(session, t.id)).state;
        expect(state).toBe(matched.has(t.playerId) ? 'MATCHED' : 'SEARCHING');
      }
    }
    const [left] = waiting;
    await api.request('DELETE', `/v1/queue/tickets/${left?.ticket.tickets[0]?.id}`, {
      token: (
        left?.sessions.find(
          (s) => s.playerId === left.ticket.tickets[0]?.playerId,
        ) as SessionResponse
      ).token,
      idempotencyKey: randomUUID(),
    });
  });

  it('takes the whole party out when a member cancels, one event per member', async () => {
    const leader = await player();
    const member = await player();
    await party(leader, member);
    const partyTicket = (await enqueueParty(leader, 'pair')).json<PartyTicketResponse>();
    const memberTicket = partyTicket.tickets.find((t) => t.playerId === member.playerId);
    const leaderTicket = partyTicket.tickets.find((t) => t.playerId === leader.playerId);

    const cancel = await api.request('DELETE', `/v1/queue/tickets/${memberTicket?.id}`, {
      token: member.token,
      idempotencyKey: randomUUID(),
    });
    expect(cancel.statusCode).toBe(200);
    expect(cancel.json<TicketResponse>()).toMatchObject({
      state: 'CANCELLED',
      endReason: 'PLAYER_CANCELLED',
    });
    expect(await ticket(leader, leaderTicket?.id as string)).toMatchObject({
      state: 'CANCELLED',
      endReason: 'PARTY_MEMBER_CANCELLED',
    });
    const events = (await ticketEvents([memberTicket?.id as string, leaderTicket?.id as string]))
      .filter((event) => event.payload.to === 'CANCELLED')
      .map((event) => [event.player_ids[0], event.payload.reason]);
    expect(events).toHaveLength(2);
    expect(events).toEqual(
      expect.arrayContaining([
        [member.playerId, 'PLAYER_CANCELLED'],
        [leader.playerId, 'PARTY_MEMBER_CANCELLED'],
      ]),
    );
    const candidates = await api.app.get(CandidateProjection).candidates('pair');
    expect(candidates.map((c) => c.playerId)).not.toContain(leader.playerId);
    // Out of the queue, the party may change again.
    const leave = await api.request('POST', '/v1/parties/current/leave', { token: member.token });
    expect(leave.statusCode).toBe(204);
  });

  it('expires the whole party when one member stops heartbeating, even while the other heartbeats', async () => {
    const leader = await player();
    const member = await player();
    await party(leader, member);
    const partyTicket = (await enqueueParty(leader, 'pair')).json<PartyTicketResponse>();
    const leaderTicket = partyTicket.tickets.find((t) => t.playerId === leader.playerId);
    const memberTicket = partyTicket.tickets.find((t) => t.playerId === member.playerId);
    const heartbeatTimeoutMs = 1_000;
    await new Promise((resolve) => setTimeout(resolve, heartbeatTimeoutMs + 200));
    // The leader is still here; the member went silent.
    const beat = await api.request('POST', `/v1/queue/tickets/${leaderTicket?.id}/heartbeat`, {
      token: leader.token,
      idempotencyKey: randomUUID(),
    });
    expect(beat.statusCode).toBe(200);

    const expiry = new TicketExpiryStage(
      api.ds,
      api.app.get(TicketStore),
      api.app.get(TicketLiveness),
      {
        batchSize: 50,
        heartbeatTimeoutMs,
      },
    );
    const batch = await expiry.batch(new Date(), new Set());
    expect(batch.failures).toEqual([]);
    expect(await ticket(member, memberTicket?.id as string)).toMatchObject({
      state: 'EXPIRED',
      endReason: 'HEARTBEAT_TIMEOUT',
    });
    expect(await ticket(leader, leaderTicket?.id as string)).toMatchObject({
      state: 'EXPIRED',
      endReason: 'PARTY_MEMBER_EXPIRED',
    });
    const expired = (await ticketEvents([memberTicket?.id as string, leaderTicket?.id as string]))
      .filter((event) => event.payload.to === 'EXPIRED')
      .map((event) => event.player_ids[0]);
    expect(expired.sort()).toEqual([leader.playerId, member.playerId].sort());
  });
});

describe('parties and heartbeats in the matcher', () => {
  const env = {
    QUEUE_MODES: 'pair:2x2',
    TICKET_HEARTBEAT_INTERVAL_MS: '1000',
    TICKET_HEARTBEAT_TIMEOUT_MS: '1500',
  };
  let api: PlayerApi;
  let matcher: INestApplicationContext;

  beforeAll(async () => {
    api = await startPlayerApi(env);
    matcher = (await startInProcessMatcher(api, env)).context;
  });

  afterAll(async () => {
    await matcher?.close();
    await api?.close();
  });

  it('holds a party back while one member is silent, and matches it whole once all heartbeat', async () => {
    const sessions: SessionResponse[] = [];
    for (let i = 0; i < 4; i += 1) {
      const session = await api.newPlayer();
      expect((await api.probe(session.token, 'eu-west')).statusCode).toBe(200);
      sessions.push(session);
    }
    const [leader, member, soloA, soloB] = sessions as [
      SessionResponse,
      SessionResponse,
      SessionResponse,
      SessionResponse,
    ];
    const created = (
      await api.request('POST', '/v1/parties', { token: leader.token })
    ).json<PartyResponse>();
    await api.request('POST', '/v1/parties/join', {
      token: member.token,
      body: { inviteCode: created.inviteCode },
    });
    const partyTicket = (
      await api.request('POST', '/v1/queue/party-tickets', {
        token: leader.token,
        body: { mode: 'pair' },
        idempotencyKey: randomUUID(),
      })
    ).json<PartyTicketResponse>();
    const ticketOf = new Map<string, string>(
      partyTicket.tickets.map((t) => [t.playerId, t.id] as [string, string]),
    );
    for (const solo of [soloA, soloB]) {
      ticketOf.set(
        solo.playerId,
        (await api.enqueue(solo.token, 'pair')).json<TicketResponse>().id,
      );
    }
    const heartbeat = (session: SessionResponse) =>
      api.request('POST', `/v1/queue/tickets/${ticketOf.get(session.playerId)}/heartbeat`, {
        token: session.token,
        idempotencyKey: randomUUID(),
      });

    // Everyone but the member keeps heartbeating past the timeout.
    await new Promise((resolve) => setTimeout(resolve, 1_700));
    for (const session of [leader, soloA, soloB])
      expect((await heartbeat(session)).statusCode).toBe(200);
    const held = await matcher.get(MatcherLoop).passNow('pair');
    expect(held?.committed).toHaveLength(0);
    const leaderView = (
      await api.request('GET', `/v1/queue/tickets/${ticketOf.get(leader.playerId)}`, {
        token: leader.token,
      })
    ).json<TicketResponse>();
    expect(leaderView.explanation?.code).toBe('PARTY_INCOMPLETE');

    // The member is back: the party plays, whole, on one team.
    expect((await heartbeat(member)).statusCode).toBe(200);
    const formed = await matcher.get(MatcherLoop).passNow('pair');
    expect(formed?.committed).toHaveLength(1);
    const participants = formed?.committed[0]?.proposal.participants ?? [];
    const teamOf = new Map(participants.map((p) => [p.playerId, p.team]));
    expect(participants).toHaveLength(4);
    expect(teamOf.get(member.playerId)).toBe(teamOf.get(leader.playerId));
  });
});
