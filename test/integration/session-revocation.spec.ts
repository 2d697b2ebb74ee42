import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { TicketResponse } from '@matchplane/contracts';
import { startApiReplica, startPlayerApi, type PlayerApi } from '../support/player-api';

/**
 * Session lookups are batched, never cached: a revoked session is refused by the next request,
 * on the replica that revoked it and on every other, even while requests of the same session are
 * in flight.
 */
describe('Session revocation', () => {
  let api: PlayerApi;
  let replica: NestFastifyApplication;
  beforeAll(async () => {
    api = await startPlayerApi();
    replica = await startApiReplica(api);
  });
  afterAll(async () => {
    await replica.close();
    await api.close();
  });

  const heartbeatOn = (app: NestFastifyApplication, token: string, ticketId: string) =>
    app.inject({
      method: 'POST',
      url: `/v1/queue/tickets/${ticketId}/heartbeat`,
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID() },
    });

  it('a revoked session is refused at once on this replica and on another', async () => {
    const player = await api.newPlayer();
    await api.probe(player.token, 'eu-west');
    const ticket = (await api.enqueue(player.token, 'duel')).json<TicketResponse>();
    // Both replicas have just served this session.
    expect((await heartbeatOn(api.app, player.token, ticket.id)).statusCode).toBe(200);
    expect((await heartbeatOn(replica, player.token, ticket.id)).statusCode).toBe(200);

    // Requests of the session keep arriving on the other replica while it is revoked here.
    let revoked = false;
    const afterRevocation: number[] = [];
    const traffic = (async () => {
      while (!revoked) await heartbeatOn(replica, player.token, ticket.id);
      for (let i = 0; i < 5; i += 1)
        afterRevocation.push((await heartbeatOn(replica, player.token, ticket.id)).statusCode);
    })();
    await new Promise((resolve) => setTimeout(resolve, 30));
    const revoke = await api.request('DELETE', '/v1/sessions/current', { token: player.token });
    expect(revoke.statusCode).toBe(204);
    revoked = true;

    const here = await heartbeatOn(api.app, player.token, ticket.id);
    const there = await heartbeatOn(replica, player.token, ticket.id);
    expect([here.statusCode, here.json<{ code: string }>().code]).toEqual([401, 'UNAUTHENTICATED']);
    expect([there.statusCode, there.json<{ code: string }>().code]).toEqual([
      401,
      'UNAUTHENTICATED',
    ]);
    await traffic;
    expect(afterRevocation).toEqual([401, 401, 401, 401, 401]);
  });

  it('lookups of several sessions in one batch each get their own answer', async () => {
    const alive = await api.newPlayer();
    const gone = await api.newPlayer();
    expect(
      (await api.request('DELETE', '/v1/sessions/current', { token: gone.token })).statusCode,
    ).toBe(204);
    const unknown = `mps_${'A'.repeat(43)}`;
    const [a, b, c] = await Promise.all(
      [alive.token, gone.token, unknown].map((token) =>
        api.request('GET', '/v1/queue/options', { token }),
      ),
    );
    expect(a!.statusCode).toBe(200);
    expect(b!.statusCode).toBe(401);
    expect(c!.statusCode).toBe(401);
  });
});
