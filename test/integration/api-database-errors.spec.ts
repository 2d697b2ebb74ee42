import { randomUUID } from 'node:crypto';
import { startPlayerApi, type PlayerApi } from '../support/player-api';

/*
 * Database conditions a request can run into (contention that outlasts the retries, a lock held
 * past the API's lock_timeout) answer 503 CONTENDED with Retry-After, never 500, and write nothing.
 * The conditions are real PostgreSQL errors: a trigger raising the deadlock SQLSTATE on every
 * attempt, and a row lock held by another connection.
 */
describe('database errors on the API', () => {
  let api: PlayerApi;
  beforeAll(async () => {
    api = await startPlayerApi({ API_LOCK_TIMEOUT_MS: '200' });
  });
  afterAll(() => api.close());

  const count = async (sql: string, params: unknown[]) =>
    Number((await api.ds.query<{ n: string }[]>(sql, params))[0]?.n);

  it('a transaction that deadlocks on every retry is 503 CONTENDED with Retry-After, and nothing is kept', async () => {
    const player = await api.newPlayer();
    expect((await api.probe(player.token, 'eu-west')).statusCode).toBe(200);
    await api.ds.query(`
      CREATE FUNCTION test_always_deadlock() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'injected deadlock' USING ERRCODE = '40P01'; END $$;
      CREATE TRIGGER test_always_deadlock BEFORE INSERT ON queue_tickets
        FOR EACH ROW EXECUTE FUNCTION test_always_deadlock();`);
    try {
      const response = await api.enqueue(player.token, 'duel', randomUUID());
      expect([response.statusCode, response.json().code]).toEqual([503, 'CONTENDED']);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.headers['retry-after']).toBe('1');
    } finally {
      await api.ds.query(`
        DROP TRIGGER test_always_deadlock ON queue_tickets;
        DROP FUNCTION test_always_deadlock();`);
    }
    expect(
      await count(`SELECT count(*) AS n FROM idempotency_keys WHERE player_id = $1`, [
        player.playerId,
      ]),
    ).toBe(0);
    // Once the contention is gone the same request goes through.
    expect((await api.enqueue(player.token, 'duel', randomUUID())).statusCode).toBe(201);
  });

  it('a row lock held past the lock timeout is 503 CONTENDED on a route without an idempotency key', async () => {
    const player = await api.newPlayer();
    const runner = api.ds.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      // Another transaction holds the session row that the sign-out must update.
      await runner.query(`SELECT 1 FROM sessions WHERE player_id = $1 FOR UPDATE`, [
        player.playerId,
      ]);
      const response = await api.request('DELETE', '/v1/sessions/current', {
        token: player.token,
      });
      expect([response.statusCode, response.json().code]).toEqual([503, 'CONTENDED']);
      expect(response.headers['retry-after']).toBe('1');
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    const again = await api.request('DELETE', '/v1/sessions/current', { token: player.token });
    expect(again.statusCode).toBe(204);
  });
});
