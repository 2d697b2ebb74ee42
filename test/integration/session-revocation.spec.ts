import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { TicketResponse } from '@matchplane/contracts';
import { startApiReplica, startPlayerApi, type PlayerApi } from '../support/player-api';

/**
 * A revoked session is refused by the next request on the replica that revoked it, and on every
 * other as soon as the revocation announcement reaches it (each replica caches live sessions,
 * docs/decisions/2026-12-08-session-cache.md), even while requests of the same session are in
 * flight; once refused, never served again.
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

  it('a revoked session is refused at once on this replica, and on another once announced', async () => {
    const player = await api.newPlayer();
    await api.probe(player.token, 'eu-west');
    const ticket = (await api.enqueue(player.token, 'duel')).json<TicketResponse>();
    // Both replicas have just served this session (and so hold it in their caches).
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
    expect([here.statusCode, here.json<{ code: string }>().code]).toEqual([401, 'UNAUTHENTICATED']);
    // The other replica refuses it once the announcement has arrived (milliseconds on loopback).
    let there = await heartbeatOn(replica, player.token, ticket.id);
    for (const deadline = Date.now() + 5_000; there.statusCode === 200 && Date.now() < deadline;) {
      there = await heartbeatOn(replica, player.token, ticket.id);
    }
    expect([there.statusCode, there.json<{ code: string }>().code]).toEqual([
      401,
      'UNAUTHENTICATED',
    ]);
    await traffic;
    // Served until the announcement at most, refused from then on: never served again after a 401.
    const firstRefusal = afterRevocation.indexOf(401);
    expect(firstRefusal).toBeGreaterThanOrEqual(0);
    expect(afterRevocation.slice(firstRefusal)).toEqual(
      afterRevocation.slice(firstRefusal).map(() => 401),
    );
    expect((await heartbeatOn(replica, player.token, ticket.id)).statusCode).toBe(401);
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
