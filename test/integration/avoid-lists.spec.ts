import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import type { AvoidListResponse, BlockListResponse, TicketResponse } from '@matchplane/contracts';
import type { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { cancelQueued, startInProcessMatcher } from '../support/in-process-matcher';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import {
  committedTickets,
  measuredPlayer,
  postTicket,
  ticketNow,
  type QueuedTicket,
} from '../support/queue-players';

const MAX_ENTRIES = 2;

interface Player {
  token: string;
  playerId: string;
}

/**
 * Issue 34 item 2, avoid lists, through the real routes and the matcher's real module graph: a
 * player adds, lists and removes avoided players (bounded, refusals named), and the matcher puts
 * two players who avoid each other in one match only when nothing else fits
 * (docs/decisions/2026-12-07-avoid-lists.md).
 */
describe('avoid lists', () => {
  let api: PlayerApi;
  let matcher: INestApplicationContext;
  let loop: MatcherLoop;
  const queued: QueuedTicket[] = [];

  beforeAll(async () => {
    api = await startPlayerApi({ PLAYER_AVOID_LIST_MAX_ENTRIES: String(MAX_ENTRIES) });
    ({ context: matcher, loop } = await startInProcessMatcher(api));
  });

  afterEach(() => cancelQueued(api, queued));

  afterAll(async () => {
    await matcher?.close();
    await api?.close();
  });

  const newPlayer = (): Promise<Player> => measuredPlayer(api);

  const avoid = (by: Player, playerId: string) =>
    api.request('PUT', `/v1/avoids/${playerId}`, { token: by.token });
  const unavoid = (by: Player, playerId: string) =>
    api.request('DELETE', `/v1/avoids/${playerId}`, { token: by.token });
  const listOf = async (by: Player) =>
    (await api.request('GET', '/v1/avoids', { token: by.token })).json<AvoidListResponse>();
  const blocksOf = async (by: Player) =>
    (await api.request('GET', '/v1/blocks', { token: by.token })).json<BlockListResponse>();

  async function enqueue(player: Player): Promise<QueuedTicket> {
    const created = await postTicket(api, player.token, { mode: 'duel' });
    expect(created.statusCode).toBe(201);
    const entry = { token: player.token, ticket: created.json<TicketResponse>() };
    queued.push(entry);
    return entry;
  }

  it('adds, lists and removes avoided players; a repeat changes nothing', async () => {
    const [me, first, second] = [await newPlayer(), await newPlayer(), await newPlayer()];
    expect(await listOf(me)).toEqual({ avoided: [], maxEntries: MAX_ENTRIES });
    expect((await avoid(me, first.playerId)).statusCode).toBe(200);
    const twice = await avoid(me, first.playerId);
    expect(twice.json<AvoidListResponse>().avoided.map((a) => a.playerId)).toEqual([
      first.playerId,
    ]);
    await avoid(me, second.playerId);
    expect((await listOf(me)).avoided.map((a) => a.playerId)).toEqual([
      first.playerId,
      second.playerId,
    ]);
    const removed = await unavoid(me, first.playerId);
    expect(removed.statusCode).toBe(200);
    expect(removed.json<AvoidListResponse>().avoided.map((a) => a.playerId)).toEqual([
      second.playerId,
    ]);
    // Another player's list is its own, and the block list is another list.
    expect((await listOf(first)).avoided).toEqual([]);
    expect((await blocksOf(me)).blocked).toEqual([]);
  });

  it('moves a player between the block and the avoid list, the latest word counting', async () => {
    const [me, other] = [await newPlayer(), await newPlayer()];
    await api.request('PUT', `/v1/blocks/${other.playerId}`, { token: me.token });
    expect((await avoid(me, other.playerId)).statusCode).toBe(200);
    expect((await blocksOf(me)).blocked).toEqual([]);
    expect((await listOf(me)).avoided.map((a) => a.playerId)).toEqual([other.playerId]);
    await api.request('PUT', `/v1/blocks/${other.playerId}`, { token: me.token });
    expect((await listOf(me)).avoided).toEqual([]);
    expect((await blocksOf(me)).blocked.map((b) => b.playerId)).toEqual([other.playerId]);
  });

  it.each<[string, (me: Player) => string | Promise<string>, number, string, RegExp]>([
    ['itself', (me) => me.playerId, 400, 'VALIDATION_FAILED', /cannot avoid itself/],
    ['a malformed id', () => 'not-a-player', 400, 'VALIDATION_FAILED', /must be a UUID/],
    ['an unknown player', () => randomUUID(), 404, 'PLAYER_NOT_FOUND', /No player has id/],
    [
      'one more than the list may hold',
      async (me) => {
        for (let i = 0; i < MAX_ENTRIES; i++) await avoid(me, (await newPlayer()).playerId);
        return (await newPlayer()).playerId;
      },
      409,
      'AVOID_LIST_FULL',
      /holds 2 players.*to add [0-9a-f-]{36}/,
    ],
  ])(
    'refuses to avoid %s, naming why, writing nothing',
    async (_, target, status, code, detail) => {
      const me = await newPlayer();
      const playerId = await target(me);
      const before = await listOf(me);
      const refused = await avoid(me, playerId);
      expect(refused.statusCode).toBe(status);
      expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
      const problem = refused.json<{ code: string; detail: string }>();
      expect(problem.code).toBe(code);
      expect(problem.detail).toMatch(detail);
      if (code !== 'VALIDATION_FAILED' || playerId !== 'not-a-player') {
        expect(problem.detail).toContain(playerId === me.playerId ? 'itself' : playerId);
      }
      expect(await listOf(me)).toEqual(before);
    },
  );

  it('matches two players who avoid each other only when no third one fits', async () => {
    const [a, b, c] = [await newPlayer(), await newPlayer(), await newPlayer()];
    expect((await avoid(a, b.playerId)).statusCode).toBe(200);
    // a is the oldest and b the next: without the avoid list a would meet b. c fits: a meets c.
    const [ta, tb, tc] = [await enqueue(a), await enqueue(b), await enqueue(c)];
    expect(committedTickets(await loop.passNow('duel'))).toEqual([
      [ta.ticket.id, tc.ticket.id].sort(),
    ]);
    // b waits for want of players, not because of a list.
    expect((await ticketNow(api, tb)).explanation?.code).toBe('NOT_ENOUGH_PLAYERS');

    // d avoids b (only d's list names b) and nobody else is searching: the two meet.
    const d = await newPlayer();
    expect((await avoid(d, b.playerId)).statusCode).toBe(200);
    const td = await enqueue(d);
    expect(committedTickets(await loop.passNow('duel'))).toEqual([
      [tb.ticket.id, td.ticket.id].sort(),
    ]);
  });
});
