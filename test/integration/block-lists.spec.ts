import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import type { BlockListResponse, TicketResponse } from '@matchplane/contracts';
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
 * Issue 34 item 2, block lists, through the real routes and the matcher's real module graph: a
 * player adds, lists and removes blocks (bounded, refusals named), and the matcher never puts two
 * players in one match when either blocked the other.
 */
describe('block lists', () => {
  let api: PlayerApi;
  let matcher: INestApplicationContext;
  let loop: MatcherLoop;
  const queued: QueuedTicket[] = [];

  beforeAll(async () => {
    api = await startPlayerApi({ PLAYER_BLOCK_LIST_MAX_ENTRIES: String(MAX_ENTRIES) });
    ({ context: matcher, loop } = await startInProcessMatcher(api));
  });

  afterEach(() => cancelQueued(api, queued));

  afterAll(async () => {
    await matcher?.close();
    await api?.close();
  });

  const newPlayer = (): Promise<Player> => measuredPlayer(api);

  const block = (by: Player, playerId: string) =>
    api.request('PUT', `/v1/blocks/${playerId}`, { token: by.token });
  const unblock = (by: Player, playerId: string) =>
    api.request('DELETE', `/v1/blocks/${playerId}`, { token: by.token });
  const listOf = async (by: Player) =>
    (await api.request('GET', '/v1/blocks', { token: by.token })).json<BlockListResponse>();

  async function enqueue(player: Player): Promise<QueuedTicket> {
    const created = await postTicket(api, player.token, { mode: 'duel' });
    expect(created.statusCode).toBe(201);
    const entry = { token: player.token, ticket: created.json<TicketResponse>() };
    queued.push(entry);
    return entry;
  }

  const pairsOf = committedTickets;

  it('adds, lists and removes blocks; a repeat changes nothing', async () => {
    const [me, first, second] = [await newPlayer(), await newPlayer(), await newPlayer()];
    expect(await listOf(me)).toEqual({ blocked: [], maxEntries: MAX_ENTRIES });
    expect((await block(me, first.playerId)).statusCode).toBe(200);
    const twice = await block(me, first.playerId);
    expect(twice.json<BlockListResponse>().blocked.map((b) => b.playerId)).toEqual([
      first.playerId,
    ]);
    await block(me, second.playerId);
    expect((await listOf(me)).blocked.map((b) => b.playerId)).toEqual([
      first.playerId,
      second.playerId,
    ]);
    const removed = await unblock(me, first.playerId);
    expect(removed.statusCode).toBe(200);
    expect(removed.json<BlockListResponse>().blocked.map((b) => b.playerId)).toEqual([
      second.playerId,
    ]);
    // Another player's list is its own.
    expect((await listOf(first)).blocked).toEqual([]);
  });

  it.each<[string, (me: Player) => string | Promise<string>, number, string, RegExp]>([
    ['itself', (me) => me.playerId, 400, 'VALIDATION_FAILED', /cannot block itself/],
    ['a malformed id', () => 'not-a-player', 400, 'VALIDATION_FAILED', /must be a UUID/],
    ['an unknown player', () => randomUUID(), 404, 'PLAYER_NOT_FOUND', /No player has id/],
    [
      'one more than the list may hold',
      async (me) => {
        for (let i = 0; i < MAX_ENTRIES; i++) await block(me, (await newPlayer()).playerId);
        return (await newPlayer()).playerId;
      },
      409,
      'BLOCK_LIST_FULL',
      /holds 2 players/,
    ],
  ])(
    'refuses to block %s, naming why, writing nothing',
    async (_, target, status, code, detail) => {
      const me = await newPlayer();
      const playerId = await target(me);
      const before = await listOf(me);
      const refused = await block(me, playerId);
      expect(refused.statusCode).toBe(status);
      const problem = refused.json<{ code: string; detail: string }>();
      expect(problem.code).toBe(code);
      expect(problem.detail).toMatch(detail);
      expect(await listOf(me)).toEqual(before);
    },
  );

  it('never matches a player with one it blocked, or one that blocked it, until unblocked', async () => {
    const [a, b, c, d] = [
      await newPlayer(),
      await newPlayer(),
      await newPlayer(),
      await newPlayer(),
    ];
    expect((await block(a, b.playerId)).statusCode).toBe(200);
    expect((await block(d, c.playerId)).statusCode).toBe(200);
    // Queued after the blocks or before: the matcher reads the lists every pass.
    const [ta, tb] = [await enqueue(a), await enqueue(b)];
    expect((await loop.passNow('duel'))?.committed).toEqual([]);
    // Each of them is told why, the blocked one too.
    for (const queuedTicket of [ta, tb]) {
      expect((await ticketNow(api, queuedTicket)).explanation?.code).toBe('BLOCKED_PLAYERS');
    }

    // c is blocked by d, not by a or b: the oldest, a, passes over b for c; b and d are free.
    const [tc, td] = [await enqueue(c), await enqueue(d)];
    const pass = await loop.passNow('duel');
    expect(pairsOf(pass)).toEqual(
      [[ta.ticket.id, tc.ticket.id].sort(), [tb.ticket.id, td.ticket.id].sort()].sort(),
    );

    // Unblocked, a pair that was kept apart meets.
    const [e, f] = [await newPlayer(), await newPlayer()];
    await block(f, e.playerId);
    const [te, tf] = [await enqueue(e), await enqueue(f)];
    expect((await loop.passNow('duel'))?.committed).toEqual([]);
    expect((await unblock(f, e.playerId)).statusCode).toBe(200);
    expect(pairsOf(await loop.passNow('duel'))).toEqual([[te.ticket.id, tf.ticket.id].sort()]);
  });
});
