import { PlayerClient } from '@matchplane/sdk';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startQuickApi, startQuickMatcher, type RunningApp } from '../support/processes';
import { deleteRedisPrefix, testRedisPrefix } from '../support/redis';

/*
 * Avoid lists (docs/decisions/2026-12-07-avoid-lists.md) with the API and the matcher as
 * processes from dist/: players set their lists and queue through the SDK over HTTP, and the
 * matcher process keeps two players who avoid each other apart while a third fits, and matches
 * them when nothing else does.
 */
describe('avoid lists between the API and the matcher process', () => {
  let db: TestDatabase;
  const prefix = testRedisPrefix();
  const running: RunningApp[] = [];
  let env: Record<string, string>;
  let baseUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    env = { ...db.env, REDIS_KEY_PREFIX: prefix, DATABASE_POOL_SIZE: '4' };
    baseUrl = await startQuickApi(env, running);
  });

  afterAll(async () => {
    await Promise.all(running.map((app) => app.stop()));
    await db.drop();
    await deleteRedisPrefix(prefix);
  });

  async function measuredPlayer() {
    const client = new PlayerClient({ baseUrl });
    const session = await client.createSession();
    await client.probe('eu-west', { samples: 1 });
    return { client, playerId: session.playerId };
  }

  async function queue(player: Awaited<ReturnType<typeof measuredPlayer>>) {
    const ticket = await player.client.enqueue('duel');
    expect(ticket.state).toBe('SEARCHING');
    return { ...player, ticketId: ticket.id };
  }

  const matched = ({ client, ticketId }: Awaited<ReturnType<typeof queue>>) =>
    client.waitForTicket(ticketId, (t) => t.state === 'MATCHED', {
      timeoutMs: 20_000,
      pollMs: 100,
    });

  it('matches a with c rather than b, whom a avoids; then b with d, who avoids b, as nobody else is searching', async () => {
    const [a, b, c] = [await measuredPlayer(), await measuredPlayer(), await measuredPlayer()];
    expect((await a.client.avoids.add(b.playerId)).avoided.map((e) => e.playerId)).toEqual([
      b.playerId,
    ]);
    // All three wait before the matcher starts, so its first pass sees them together: a is the
    // oldest, and without its list would meet b, the next oldest.
    const [qa, qb, qc] = [await queue(a), await queue(b), await queue(c)];
    await startQuickMatcher(env, running);

    const [ta, tc] = await Promise.all([matched(qa), matched(qc)]);
    expect(ta?.matchId).toBeDefined();
    expect(tc?.matchId).toBe(ta?.matchId);
    // b is still searching, told it waits for a player, not for a list.
    const waiting = await qb.client.waitForTicket(qb.ticketId, (t) => t.explanation !== undefined, {
      timeoutMs: 10_000,
      pollMs: 100,
    });
    expect(waiting).toMatchObject({
      state: 'SEARCHING',
      explanation: { code: 'NOT_ENOUGH_PLAYERS' },
    });

    // d avoids b (only d's list names b); nothing else fits either of them, so they meet.
    const d = await measuredPlayer();
    await d.client.avoids.add(b.playerId);
    const qd = await queue(d);
    const [tb, td] = await Promise.all([matched(qb), matched(qd)]);
    expect(tb?.matchId).toBeDefined();
    expect(td?.matchId).toBe(tb?.matchId);
  });
});
