import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import type { PartyTicketResponse, ProblemDetails, SessionResponse } from '@matchplane/contracts';
import type { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { cancelQueued, startInProcessMatcher } from '../support/in-process-matcher';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import {
  committedTickets,
  partyOf,
  queuedPlayer,
  ticketNow,
  type QueuedTicket,
} from '../support/queue-players';

const ENV = {
  QUEUE_MODES: 'duel:1x2,arena:2x2',
  QUEUE_MODE_ATTRIBUTES: JSON.stringify({
    arena: {
      attributes: { roles: { type: 'set', values: ['healer', 'tank', 'dps'], default: ['dps'] } },
      rules: [{ roles: 'roles', perTeam: { healer: 1 }, optionalAfterSeconds: 600 }],
    },
  }),
};

/**
 * Role slots (issue 34 item 1) through the real player routes and the matcher's module graph: a
 * roles set declared per ticket, and per member of a party, a healer on every team, and the
 * explanation ROLE_UNFILLED while nobody can heal.
 */
describe('mode shapes: role slots', () => {
  let api: PlayerApi;
  let matcher: INestApplicationContext;
  let loop: MatcherLoop;
  const queued: QueuedTicket[] = [];

  beforeAll(async () => {
    api = await startPlayerApi(ENV);
    ({ context: matcher, loop } = await startInProcessMatcher(api, ENV));
  });

  afterEach(() => cancelQueued(api, queued));

  afterAll(async () => {
    await matcher?.close();
    await api?.close();
  });

  const solo = (roles: string[]) =>
    queuedPlayer(api, { mode: 'arena', attributes: { roles } }, queued);

  async function partyOfTwo(): Promise<{ leader: SessionResponse; member: SessionResponse }> {
    const [leader, member] = await partyOf(api, 2);
    return { leader: leader!, member: member! };
  }

  const enqueueParty = (leader: SessionResponse, body: unknown) =>
    api.request('POST', '/v1/queue/party-tickets', {
      token: leader.token,
      body,
      idempotencyKey: randomUUID(),
    });

  it('keeps four players who cannot heal waiting, explained ROLE_UNFILLED', async () => {
    const players: QueuedTicket[] = [];
    for (let i = 0; i < 4; i++) players.push(await solo(['dps', 'tank']));
    const pass = await loop.passNow('arena');
    expect(pass?.committed).toEqual([]);
    const explanation = (await ticketNow(api, players[0]!)).explanation;
    expect(explanation?.code).toBe('ROLE_UNFILLED');
    expect(explanation?.message).toMatch(
      /^waiting for players who can fill every team's roles \(1 healer a team\); the role rule no longer applies in \d+ s$/,
    );
  });

  it("refuses a member's roles the mode does not allow, or a player not in the party, naming the entry", async () => {
    const { leader, member } = await partyOfTwo();
    const bad = await enqueueParty(leader, {
      mode: 'arena',
      memberRoles: { [member.playerId]: ['bard'] },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ errors?: { field: string }[] }>().errors?.map((e) => e.field)).toEqual([
      `memberRoles.${member.playerId}`,
    ]);
    const stranger = randomUUID();
    const notMember = await enqueueParty(leader, {
      mode: 'arena',
      memberRoles: { [stranger]: ['healer'] },
    });
    expect(notMember.statusCode).toBe(400);
    expect(notMember.json<ProblemDetails>().detail).toBe(
      `memberRoles.${stranger}: ${stranger} is not a member of the party`,
    );
    const noRoles = await enqueueParty(leader, {
      mode: 'duel',
      memberRoles: { [member.playerId]: ['healer'] },
    });
    expect(noRoles.json<ProblemDetails>().detail).toBe('memberRoles: mode duel has no roles rule');
  });

  it('matches a healer on each team: a party whose member heals, and a solo healer', async () => {
    const { leader, member } = await partyOfTwo();
    const party = await enqueueParty(leader, {
      mode: 'arena',
      attributes: { roles: ['dps'] },
      memberRoles: { [member.playerId]: ['healer'] },
    });
    expect(party.statusCode).toBe(201);
    const tickets = party.json<PartyTicketResponse>().tickets;
    expect(tickets.find((t) => t.playerId === member.playerId)?.attributes).toEqual({
      roles: ['healer'],
    });
    const dps = await solo(['dps']);
    const healer = await solo(['healer']);
    const pass = await loop.passNow('arena');
    expect(committedTickets(pass)).toEqual([
      [...tickets.map((t) => t.id), dps.ticket.id, healer.ticket.id].sort(),
    ]);
    const rows = await api.ds.query<{ ticket_id: string; team: number }[]>(
      `SELECT ticket_id, team FROM match_participants WHERE match_id = $1`,
      [pass?.committed[0]?.matchId],
    );
    const teamOf = (id: string) => rows.find((row) => row.ticket_id === id)?.team;
    const memberTicket = tickets.find((t) => t.playerId === member.playerId)!.id;
    expect(teamOf(healer.ticket.id)).not.toBe(teamOf(memberTicket));
  });
});
