import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig } from '@matchplane/config';
import { SessionCache } from '@matchplane/players';
import { ApiConfig } from '../../apps/api/src/api.config';
import { startApiReplica, startPlayerApi, type PlayerApi } from '../support/player-api';
import { freePort, waitFor } from '../support/processes';
import { RedisProxy } from '../support/redis-proxy';

/**
 * Each API replica keeps the sessions it looked up (SESSION_CACHE_TTL_MS): a sign-out on one
 * replica is announced over Redis and evicts them everywhere; a replica that cannot hear the
 * announcements trusts nothing it cached.
 */
describe('Session cache across API replicas', () => {
  let api: PlayerApi;
  const replicas: NestFastifyApplication[] = [];
  let proxy: RedisProxy | undefined;

  beforeAll(async () => {
    api = await startPlayerApi();
  });
  afterAll(async () => {
    for (const replica of replicas.reverse()) await replica.close();
    await proxy?.close();
    await api.close();
  });

  /** Another replica on the same database and prefix, with these variables changed. */
  async function replicaWith(env: Record<string, string> = {}): Promise<NestFastifyApplication> {
    const config = loadConfig(ApiConfig, {
      ...api.db.env,
      REDIS_KEY_PREFIX: api.prefix,
      LOG_LEVEL: 'silent',
      RULE_SET_POLL_INTERVAL_MS: '600000',
      ...env,
    });
    const replica = await startApiReplica({ ...api, config });
    replicas.push(replica);
    return replica;
  }

  const statusOn = async (app: NestFastifyApplication, token: string) =>
    (
      await app.inject({
        method: 'GET',
        url: '/v1/queue/options',
        headers: { authorization: `Bearer ${token}` },
      })
    ).statusCode;

  /** Revoked in PostgreSQL without an announcement: only a replica that looks it up refuses it. */
  const revokeUnannounced = (playerId: string) =>
    api.ds.query(`UPDATE sessions SET revoked_at = now() WHERE player_id = $1`, [playerId]);

  it('a replica that has the token cached refuses it right after a sign-out on another', async () => {
    const replica = await replicaWith();
    const player = await api.newPlayer();
    expect(await statusOn(replica, player.token)).toBe(200);
    expect(replica.get(SessionCache).size).toBeGreaterThan(0);

    const signOut = await api.request('DELETE', '/v1/sessions/current', { token: player.token });
    expect(signOut.statusCode).toBe(204);
    // The announcement is published before the sign-out answers; the replica hears it at once.
    await waitFor(
      async () => ((await statusOn(replica, player.token)) === 401 ? true : undefined),
      {
        timeoutMs: 1_000,
        intervalMs: 5,
        what: 'the replica to refuse the signed-out token',
      },
    );
    expect(await statusOn(api.app, player.token)).toBe(401);
  });

  it('serves a cached session without PostgreSQL: an unannounced revocation is not seen', async () => {
    const replica = await replicaWith();
    const player = await api.newPlayer();
    expect(await statusOn(replica, player.token)).toBe(200);
    await revokeUnannounced(player.playerId);
    expect(await statusOn(replica, player.token)).toBe(200);
  });

  it('at SESSION_CACHE_TTL_MS=0 every request looks its session up', async () => {
    const replica = await replicaWith({ SESSION_CACHE_TTL_MS: '0' });
    const player = await api.newPlayer();
    expect(await statusOn(replica, player.token)).toBe(200);
    await revokeUnannounced(player.playerId);
    expect(await statusOn(replica, player.token)).toBe(401);
    expect(replica.get(SessionCache).size).toBe(0);
  });

  it('empties the cache and looks sessions up while the revocation subscription is down', async () => {
    proxy = new RedisProxy(await freePort());
    await proxy.open();
    const replica = await replicaWith({ REDIS_PORT: String(proxy.port) });
    const player = await api.newPlayer();
    expect(await statusOn(replica, player.token)).toBe(200);
    const cache = replica.get(SessionCache);
    expect(cache.active).toBe(true);

    proxy.cut();
    await waitFor(() => Promise.resolve(cache.active ? undefined : true), {
      what: 'the replica to notice its subscription is gone',
    });
    expect(cache.size).toBe(0);
    // Announcements are not heard now: a revocation must be seen in PostgreSQL.
    await revokeUnannounced(player.playerId);
    expect(await statusOn(replica, player.token)).toBe(401);

    expect(cache.size).toBe(0);

    const other = await api.newPlayer();
    await proxy.open();
    await waitFor(() => Promise.resolve(cache.active ? true : undefined), {
      what: 'the replica to subscribe again',
    });
    expect(await statusOn(replica, other.token)).toBe(200);
    expect(cache.size).toBe(1);
  });
});
