import { PlayerClient } from '@matchplane/sdk';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../support/database';
import {
  runApp,
  startQuickApi,
  startQuickMatcher,
  waitFor,
  type RunningApp,
} from '../support/processes';
import { deleteRedisPrefix, testRedisPrefix } from '../support/redis';

/*
 * The API and the matcher as processes from dist/: players sign in, probe and queue through the
 * SDK over HTTP, and the matcher process matches them.
 */
describe('players queued through the API are matched by the matcher process', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const prefix = testRedisPrefix();
  const running: RunningApp[] = [];
  let baseUrl: string;
  let matcherUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
    const env = { ...db.env, REDIS_KEY_PREFIX: prefix, DATABASE_POOL_SIZE: '4' };
    baseUrl = await startQuickApi(env, running);
    matcherUrl = await startQuickMatcher(env, running);
  });

  afterAll(async () => {
    await Promise.all(running.map((app) => app.stop()));
    await db.drop();
    await deleteRedisPrefix(prefix);
  });

  async function queuedPlayer() {
    const client = new PlayerClient({ baseUrl });
    const session = await client.createSession();
    await client.probe('eu-west', { samples: 1 });
    const ticket = await client.enqueue('duel');
    expect(ticket.state).toBe('SEARCHING');
    return { client, session, ticket };
  }

  it('matches two duel players: each ticket shows MATCHED with the match id, and the match lists both', async () => {
    const first = await queuedPlayer();
    // Alone, the first player is told why it is still searching.
    const alone = await first.client.waitForTicket(
      first.ticket.id,
      (t) => t.explanation !== undefined,
      {
        timeoutMs: 10_000,
        pollMs: 100,
      },
    );
    expect(alone.explanation).toMatchObject({ code: 'NOT_ENOUGH_PLAYERS' });
    expect(alone.explanation?.message).toMatch(/^waiting for 1 more player in eu-west/);

    const second = await queuedPlayer();
    const [a, b] = await Promise.all(
      [first, second].map(({ client, ticket }) =>
        client.waitForTicket(ticket.id, (t) => t.state === 'MATCHED', {
          timeoutMs: 15_000,
          pollMs: 100,
        }),
      ),
    );
    expect(a?.matchId).toBeDefined();
    expect(b?.matchId).toBe(a?.matchId);
    expect(a?.explanation).toBeUndefined();

    const [match] = await ds.query<{ state: string; revision: string; region: string }[]>(
      `SELECT state, revision, region FROM matches WHERE id = $1`,
      [a?.matchId],
    );
    expect(match).toEqual({ state: 'ALLOCATING', revision: '1', region: 'eu-west' });
    const participants = await ds.query<{ player_id: string; ticket_id: string }[]>(
      `SELECT player_id, ticket_id FROM match_participants WHERE match_id = $1 ORDER BY team`,
      [a?.matchId],
    );
    expect(participants.map((p) => p.ticket_id).sort()).toEqual(
      [first.ticket.id, second.ticket.id].sort(),
    );
    expect(participants.map((p) => p.player_id).sort()).toEqual(
      [first.session.playerId, second.session.playerId].sort(),
    );

    const metrics = await waitFor(
      async () => {
        const text = await fetch(`${matcherUrl}/metrics`).then((response) => response.text());
        return /matcher_matches_formed_total\{[^}]*mode="duel"[^}]*\} 1/.test(text)
          ? text
          : undefined;
      },
      { what: 'the matcher to count the match' },
    );
    expect(metrics).toMatch(/matcher_time_to_match_seconds_count\{[^}]*mode="duel"[^}]*\} 2/);
    expect(metrics).toMatch(/matcher_pass_duration_seconds_count\{[^}]*mode="duel"/);
    expect(metrics).toMatch(/matcher_lease_held\{[^}]*mode="duel"[^}]*\} 1/);
  });

  it('refuses to start, in one line, on widening steps that narrow', async () => {
    const { code, output } = await runApp('matcher', {
      ...db.env,
      REDIS_KEY_PREFIX: prefix,
      MATCH_WIDENING: '0:50:100,5000:40:100',
    });
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      'matcher: Invalid configuration: MATCH_WIDENING step[1].maxRttMs must not narrow the step before (got "0:50:100,5000:40:100")',
    ]);
  });
});
