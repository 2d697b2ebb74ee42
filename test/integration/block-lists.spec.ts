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

/** Each list's routes, its answer's entries, and how its refusals word the verb. */
const LISTS = {
  blocks: {
    verb: 'block',
    full: 'BLOCK_LIST_FULL',
    entries: (body: unknown) => (body as BlockListResponse).blocked,
  },
  avoids: {
    verb: 'avoid',
    full: 'AVOID_LIST_FULL',
    entries: (body: unknown) => (body as AvoidListResponse).avoided,
  },
} as const;
type ListName = keyof typeof LISTS;

/**
 * Issue 34 item 2, block and avoid lists, through the real routes and the matcher's real module
 * graph: a player adds, lists and removes entries (bounded, refusals named); the matcher never
 * puts two players in one match when either blocked the other, and puts two who avoid each other
 * in one only when nothing else fits (docs/decisions/2026-12-07-avoid-lists.md).
 */
describe('block and avoid lists', () => {
  let api: PlayerApi;
  let matcher: INestApplicationContext;
  let loop: MatcherLoop;
  const queued: QueuedTicket[] = [];

  beforeAll(async () => {
    api = await startPlayerApi({
      PLAYER_BLOCK_LIST_MAX_ENTRIES: String(MAX_ENTRIES),
      PLAYER_AVOID_LIST_MAX_ENTRIES: String(MAX_ENTRIES),
    });
    ({ context: matcher, loop } = await startInProcessMatcher(api));
  });

  afterEach(() => cancelQueued(api, queued));

  afterAll(async () => {
    await matcher?.close();
    await api?.close();
  });

  const newPlayer = (): Promise<Player> => measuredPlayer(api);

  const add = (list: ListName, by: Player, playerId: string) =>
    api.request('PUT', `/v1/${list}/${playerId}`, { token: by.token });
  const remove = (list: ListName, by: Player, playerId: string) =>
    api.request('DELETE', `/v1/${list}/${playerId}`, { token: by.token });
  const listOf = async (list: ListName, by: Player) =>
    (await api.request('GET', `/v1/${list}`, { token: by.token })).json<unknown>();
  const idsOf = (list: ListName, body: unknown) => LISTS[list].entries(body).map((e) => e.playerId);
  const block = (by: Player, playerId: string) => add('blocks', by, playerId);
  const avoid = (by: Player, playerId: string) => add('avoids', by, playerId);

  async function enqueue(player: Player): Promise<QueuedTicket> {
    const created = await postTicket(api, player.token, { mode: 'duel' });
    expect(created.statusCode).toBe(201);
    const entry = { token: player.token, ticket: created.json<TicketResponse>() };
    queued.push(entry);
    return entry;
  }

  const pairsOf = committedTickets;

  describe.each(Object.keys(LISTS) as ListName[])('/v1/%s', (list) => {
    const { verb, full } = LISTS[list];

    it('adds, lists and removes entries; a repeat changes nothing', async () => {
      const [me, first, second] = [await newPlayer(), await newPlayer(), await newPlayer()];
      expect(idsOf(list, await listOf(list, me))).toEqual([]);
      expect(await listOf(list, me)).toMatchObject({ maxEntries: MAX_ENTRIES });
      expect((await add(list, me, first.playerId)).statusCode).toBe(200);
      const twice = await add(list, me, first.playerId);
      expect(idsOf(list, twice.json())).toEqual([first.playerId]);
      await add(list, me, second.playerId);
      expect(idsOf(list, await listOf(list, me))).toEqual([first.playerId, second.playerId]);
      const removed = await remove(list, me, first.playerId);
      expect(removed.statusCode).toBe(200);
      expect(idsOf(list, removed.json())).toEqual([second.playerId]);
      // Another player's list is its own, and the other list is another list.
      expect(idsOf(list, await listOf(list, first))).toEqual([]);
      const other: ListName = list === 'blocks' ? 'avoids' : 'blocks';
      expect(idsOf(other, await listOf(other, me))).toEqual([]);
    });

    it.each<[string, (me: Player) => string | Promise<string>, number, string | null, RegExp]>([
      [
        'itself',
        (me) => me.playerId,
        400,
        'VALIDATION_FAILED',
        new RegExp(`cannot ${verb} itself`),
      ],
      ['a malformed id', () => 'not-a-player', 400, 'VALIDATION_FAILED', /must be a UUID/],
      ['an unknown player', () => randomUUID(), 404, 'PLAYER_NOT_FOUND', /No player has id/],
      [
        'one more than the list may hold',
        async (me) => {
          for (let i = 0; i < MAX_ENTRIES; i++) await add(list, me, (await newPlayer()).playerId);
          return (await newPlayer()).playerId;
        },
        409,
        null,
        /holds 2 players/,
      ],
    ])('refuses %s, naming why, writing nothing', async (_, target, status, code, detail) => {
      const me = await newPlayer();
      const playerId = await target(me);
      const before = await listOf(list, me);
      const refused = await add(list, me, playerId);
      expect(refused.statusCode).toBe(status);
      expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
      const problem = refused.json<{ code: string; detail: string }>();
      expect(problem.code).toBe(code ?? full);
      expect(problem.detail).toMatch(detail);
      // The offending entry is named (a malformed id by the parameter's name).
      if (status !== 400) expect(problem.detail).toContain(playerId);
      expect(await listOf(list, me)).toEqual(before);
    });
  });

  it('moves a player between the block and the avoid list, the latest word counting', async () => {
    const [me, other] = [await newPlayer(), await newPlayer()];
    await block(me, other.playerId);
    expect((await avoid(me, other.playerId)).statusCode).toBe(200);
    expect(idsOf('blocks', await listOf('blocks', me))).toEqual([]);
    expect(idsOf('avoids', await listOf('avoids', me))).toEqual([other.playerId]);
    await block(me, other.playerId);
    expect(idsOf('avoids', await listOf('avoids', me))).toEqual([]);
    expect(idsOf('blocks', await listOf('blocks', me))).toEqual([other.playerId]);
  });

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
    expect((await remove('blocks', f, e.playerId)).statusCode).toBe(200);
    expect(pairsOf(await loop.passNow('duel'))).toEqual([[te.ticket.id, tf.ticket.id].sort()]);
  });

  it('keeps a pair apart when one blocked the other and the other only avoids it', async () => {
    const [a, b] = [await newPlayer(), await newPlayer()];
    await block(a, b.playerId);
    await avoid(b, a.playerId);
    const [ta, tb] = [await enqueue(a), await enqueue(b)];
    expect((await loop.passNow('duel'))?.committed).toEqual([]);
    for (const queuedTicket of [ta, tb]) {
      expect((await ticketNow(api, queuedTicket)).explanation?.code).toBe('BLOCKED_PLAYERS');
    }
  });

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
