import { randomUUID } from 'node:crypto';
import type { TicketResponse } from '@matchplane/contracts';
import { TestFactories } from '../support/factories';
import { startPlayerApi, type PlayerApi } from '../support/player-api';

/** Idempotency keys through HTTP: replays answer the original, conflicts are refused, races mutate once. */
describe('Idempotency-Key on the queue routes', () => {
  let api: PlayerApi;
  beforeAll(async () => {
    api = await startPlayerApi({ API_LOCK_TIMEOUT_MS: '300' });
  });
  afterAll(() => api.close());

  const probedPlayer = async () => {
    const player = await api.newPlayer();
    expect((await api.probe(player.token, 'eu-west')).statusCode).toBe(200);
    return player;
  };
  const heartbeatAt = async (ticketId: string): Promise<Date> => {
    const rows = await api.ds.query<{ last_heartbeat_at: Date }[]>(
      `SELECT last_heartbeat_at FROM queue_tickets WHERE id = $1`,
      [ticketId],
    );
    return rows[0]!.last_heartbeat_at;
  };
  const count = async (sql: string, params: unknown[]) =>
    Number((await api.ds.query<{ n: string }[]>(sql, params))[0]?.n);

  it('a replayed create answers the original status and body and creates nothing more', async () => {
    const player = await probedPlayer();
    const key = randomUUID();
    const first = await api.enqueue(player.token, 'duel', key);
    const replay = await api.enqueue(player.token, 'duel', key);
    expect(first.statusCode).toBe(201);
    expect(replay.statusCode).toBe(201);
    expect(replay.json()).toEqual(first.json());
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(
      await count(`SELECT count(*) AS n FROM queue_tickets WHERE player_id = $1`, [
        player.playerId,
      ]),
    ).toBe(1);
    expect(
      await count(`SELECT count(*) AS n FROM outbox WHERE player_ids = ARRAY[$1::uuid]`, [
        player.playerId,
      ]),
    ).toBe(1);
  });

  it("a heartbeat retried under its key answers the ticket's current state and writes no row", async () => {
    const player = await probedPlayer();
    const ticket = (await api.enqueue(player.token, 'duel')).json<TicketResponse>();
    const key = randomUUID();
    const url = `/v1/queue/tickets/${ticket.id}/heartbeat`;
    const first = await api.request('POST', url, { token: player.token, idempotencyKey: key });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const replay = await api.request('POST', url, { token: player.token, idempotencyKey: key });
    // A heartbeat is idempotent by nature: the retry is another beat, answered like the first.
    expect([first.statusCode, replay.statusCode]).toEqual([200, 200]);
    const {
      lastHeartbeatAt: firstBeat,
      waitSeconds: _firstWait,
      ...firstRest
    } = first.json<TicketResponse>();
    const {
      lastHeartbeatAt: replayBeat,
      waitSeconds: _replayWait,
      ...replayRest
    } = replay.json<TicketResponse>();
    expect(replayRest).toEqual(firstRest);
    expect(new Date(replayBeat).getTime()).toBeGreaterThan(new Date(firstBeat).getTime());
    // Both answered from the liveness store: the row keeps its enqueue-time heartbeat, no key row.
    expect((await heartbeatAt(ticket.id)).toISOString()).toBe(ticket.lastHeartbeatAt);
    expect(
      await count(`SELECT count(*) AS n FROM idempotency_keys WHERE player_id = $1 AND key = $2`, [
        player.playerId,
        key,
      ]),
    ).toBe(0);
  });

  it('the same key with a different body, or on another route, is 422 IDEMPOTENCY_KEY_REUSED', async () => {
    const player = await probedPlayer();
    const key = randomUUID();
    const ticket = (await api.enqueue(player.token, 'duel', key)).json<TicketResponse>();
    const otherBody = await api.enqueue(player.token, 'squad', key);
    expect([otherBody.statusCode, otherBody.json().code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
    const otherRoute = await api.request('DELETE', `/v1/queue/tickets/${ticket.id}`, {
      token: player.token,
      idempotencyKey: key,
    });
    expect([otherRoute.statusCode, otherRoute.json().code]).toEqual([
      422,
      'IDEMPOTENCY_KEY_REUSED',
    ]);
    const [{ state }] = (await api.ds.query<{ state: string }[]>(
      `SELECT state FROM queue_tickets WHERE id = $1`,
      [ticket.id],
    )) as [{ state: string }];
    expect(state).toBe('SEARCHING');
  });

  it('keys are scoped to the player: another player may use the same key', async () => {
    const alice = await probedPlayer();
    const bob = await probedPlayer();
    const key = randomUUID();
    expect((await api.enqueue(alice.token, 'duel', key)).statusCode).toBe(201);
    const bobs = await api.enqueue(bob.token, 'duel', key);
    expect(bobs.statusCode).toBe(201);
    expect(bobs.json<TicketResponse>().playerId).toBe(bob.playerId);
    const rows = await api.ds.query<{ player_id: string; created_at: Date }[]>(
      `SELECT player_id, created_at FROM idempotency_keys WHERE key = $1 ORDER BY created_at`,
      [key],
    );
    expect(rows.map((r) => r.player_id).sort()).toEqual([alice.playerId, bob.playerId].sort());
    expect(rows.every((r) => r.created_at instanceof Date)).toBe(true);
  });

  it('concurrent requests with one key make one mutation; the others replay it', async () => {
    const player = await probedPlayer();
    const key = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => api.enqueue(player.token, 'duel', key)),
    );
    const statuses = responses.map((r) => r.statusCode);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const bodies = responses
      .filter((r) => r.statusCode === 201)
      .map((r) => r.json<TicketResponse>().id);
    expect(new Set(bodies).size).toBe(1);
    for (const conflict of responses.filter((r) => r.statusCode === 409)) {
      expect(conflict.json().code).toBe('IDEMPOTENCY_KEY_IN_PROGRESS');
    }
    expect(
      await count(`SELECT count(*) AS n FROM queue_tickets WHERE player_id = $1`, [
        player.playerId,
      ]),
    ).toBe(1);
  });

  it('a request whose key another transaction still holds waits, then answers 409 IDEMPOTENCY_KEY_IN_PROGRESS', async () => {
    const player = await probedPlayer();
    const key = randomUUID();
    // A first request with that key still running: its key claimed, its transaction open.
    const first = await TestFactories.of(api).runningRequest(
      player.playerId,
      key,
      'POST queue/tickets',
    );
    try {
      const started = Date.now();
      const waiting = await api.enqueue(player.token, 'duel', key);
      expect([waiting.statusCode, waiting.json().code]).toEqual([
        409,
        'IDEMPOTENCY_KEY_IN_PROGRESS',
      ]);
      expect(waiting.headers['retry-after']).toBe('1');
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    } finally {
      await first.abandon();
    }
    expect(
      await count(`SELECT count(*) AS n FROM queue_tickets WHERE player_id = $1`, [
        player.playerId,
      ]),
    ).toBe(0);
  });

  it('a refused request stores no key, so a retry after fixing the cause runs', async () => {
    const player = await api.newPlayer();
    const key = randomUUID();
    const refused = await api.enqueue(player.token, 'duel', key);
    expect(refused.json().code).toBe('NO_LATENCY_MEASURED');
    await api.probe(player.token, 'eu-west');
    const retried = await api.enqueue(player.token, 'duel', key);
    expect(retried.statusCode).toBe(201);
  });
});
