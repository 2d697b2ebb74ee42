import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import type {
  PartyTicketResponse,
  QueueOptionsResponse,
  SessionResponse,
} from '@matchplane/contracts';
import type { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { cancelQueued, startInProcessMatcher } from '../support/in-process-matcher';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { waitFor } from '../support/processes';
import {
  committedTickets,
  measuredPlayer,
  partyOf,
  queuedPlayer,
  ticketNow,
  type QueuedTicket,
} from '../support/queue-players';

/** br: up to 6 players, each a team of one; from 3 once the match's anchor has waited 2 s. */
const FILL_AFTER_MS = 2_000;
const QUEUE_MODES = `duel:1x2,hunt:4+1,br:1x6@${FILL_AFTER_MS}:3`;

/**
 * Mode shapes (issue 34 item 1) through the real player routes and the matcher's real module
 * graph: a mode of unequal teams (4 hunters v 1 monster) declared in QUEUE_MODES, listed in the
 * options, and matched 4 v 1 with a party kept whole on the team of four; and a mode with a fill
 * step, matched full at once or short once its anchor has waited for the step, the waiting player
 * told MATCH_TOO_SMALL before.
 */
describe('mode shapes: asymmetric teams', () => {
  let api: PlayerApi;
  let matcher: INestApplicationContext;
  let loop: MatcherLoop;
  const queued: QueuedTicket[] = [];

  beforeAll(async () => {
    api = await startPlayerApi({ QUEUE_MODES });
    ({ context: matcher, loop } = await startInProcessMatcher(api, { QUEUE_MODES }));
  });

  afterEach(() => cancelQueued(api, queued));

  afterAll(async () => {
    await matcher?.close();
    await api?.close();
  });

  const enqueueParty = (leader: SessionResponse) =>
    api.request('POST', '/v1/queue/party-tickets', {
      token: leader.token,
      body: { mode: 'hunt' },
      idempotencyKey: randomUUID(),
    });

  const teamsOf = (matchId: string | undefined) =>
    api.ds.query<{ ticket_id: string; team: number }[]>(
      `SELECT ticket_id, team FROM match_participants WHERE match_id = $1 ORDER BY team`,
      [matchId],
    );

  it('lists each team size of a mode and its fill steps in the options', async () => {
    const { token } = await measuredPlayer(api);
    const options = (
      await api.request('GET', '/v1/queue/options', { token })
    ).json<QueueOptionsResponse>();
    expect(options.modes.find((m) => m.mode === 'hunt')).toEqual(
      expect.objectContaining({ teamSize: 4, teamCount: 2, teamSizes: [4, 1] }),
    );
    expect(options.modes.find((m) => m.mode === 'br')).toEqual(
      expect.objectContaining({ teamCount: 6, fill: [{ afterMs: FILL_AFTER_MS, minPlayers: 3 }] }),
    );
  });

  it('puts a party of the largest team size on that team and a solo on the team of one', async () => {
    const party = await enqueueParty((await partyOf(api, 4))[0]!);
    expect(party.statusCode).toBe(201);
    const partyTickets = party.json<PartyTicketResponse>().tickets.map((t) => t.id);
    const solo = await queuedPlayer(api, { mode: 'hunt' }, queued);
    const pass = await loop.passNow('hunt');
    expect(committedTickets(pass)).toEqual([[...partyTickets, solo.ticket.id].sort()]);
    const rows = await teamsOf(pass?.committed[0]?.matchId);
    expect(rows.find((row) => row.team === 1)?.ticket_id).toBe(solo.ticket.id);
  });

  it('matches four hunters (a party of two among them) against one monster', async () => {
    const [leader] = await partyOf(api, 2);
    const party = await enqueueParty(leader!);
    expect(party.statusCode).toBe(201);
    const partyTickets = party.json<PartyTicketResponse>().tickets.map((t) => t.id);
    expect(partyTickets).toHaveLength(2);
    const solos: QueuedTicket[] = [];
    for (let i = 0; i < 2; i++) solos.push(await queuedPlayer(api, { mode: 'hunt' }, queued));

    // Four players: not enough for 4 + 1.
    const short = await loop.passNow('hunt');
    expect(short?.committed).toEqual([]);

    solos.push(await queuedPlayer(api, { mode: 'hunt' }, queued));
    const pass = await loop.passNow('hunt');
    expect(committedTickets(pass)).toEqual([
      [...partyTickets, ...solos.map((s) => s.ticket.id)].sort(),
    ]);
    const rows = await teamsOf(pass?.committed[0]?.matchId);
    expect(rows.map((row) => row.team)).toEqual([0, 0, 0, 0, 1]);
    const partyTeams = rows.filter((row) => partyTickets.includes(row.ticket_id));
    expect(partyTeams.map((row) => row.team)).toEqual([0, 0]);
  });

  it('forms a full battle royale at once', async () => {
    const players: QueuedTicket[] = [];
    for (let i = 0; i < 6; i++) players.push(await queuedPlayer(api, { mode: 'br' }, queued));
    const pass = await loop.passNow('br');
    expect(committedTickets(pass)).toEqual([players.map((p) => p.ticket.id).sort()]);
  });

  it('keeps a short one waiting as MATCH_TOO_SMALL, then forms it once the anchor waited for the step', async () => {
    const players: QueuedTicket[] = [];
    for (let i = 0; i < 3; i++) players.push(await queuedPlayer(api, { mode: 'br' }, queued));
    const stepAt = new Date(players[0]!.ticket.enqueuedAt).getTime() + FILL_AFTER_MS;

    const early = await loop.passNow('br');
    // The pass must run before the step for the test to say anything.
    expect(early!.evaluatedAt.getTime()).toBeLessThan(stepAt);
    expect(early?.committed).toEqual([]);
    const explanation = (await ticketNow(api, players[0]!)).explanation;
    expect(explanation?.code).toBe('MATCH_TOO_SMALL');
    expect(explanation?.message).toMatch(
      /^a match of br needs 6 players now; 3 within your limits/,
    );

    const late = await waitFor(
      async () => {
        const pass = await loop.passNow('br');
        return pass && pass.committed.length > 0 ? pass : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 250, what: 'a short br match' },
    );
    expect(late.evaluatedAt.getTime()).toBeGreaterThanOrEqual(stepAt);
    expect(committedTickets(late)).toEqual([players.map((p) => p.ticket.id).sort()]);
    const rows = await teamsOf(late.committed[0]?.matchId);
    expect(rows.map((row) => row.team)).toEqual([0, 1, 2]);
  });
});
