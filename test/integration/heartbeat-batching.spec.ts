import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { TicketResponse } from '@matchplane/contracts';
import { CandidateProjection } from '@matchplane/tickets';
import { TestFactories } from '../support/factories';
import { startPlayerApi, type InjectedResponse, type PlayerApi } from '../support/player-api';
import { freePort } from '../support/processes';
import { RoundTrips } from '../support/round-trips';
import { heartbeatKeyCount } from '../support/heartbeat-keys';

interface Queued {
  token: string;
  playerId: string;
  ticketId: string;
}

/**
 * Heartbeats that arrive together share one transaction; each caller must still get exactly the
 * answer it would have got alone, and the idempotency guarantee must hold inside a batch. This is
 * the PostgreSQL path (what the liveness store cannot answer for goes there, and every heartbeat
 * with TICKET_LIVENESS_IN_REDIS=false); the Redis path is test/integration/ticket-liveness.spec.ts.
 */
describe('Batched heartbeats', () => {
  let api: PlayerApi;
  let baseUrl: string;
  beforeAll(async () => {
    api = await startPlayerApi({ API_LOCK_TIMEOUT_MS: '300', TICKET_LIVENESS_IN_REDIS: 'false' });
    const port = await freePort();
    await api.app.listen(port, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${port}`;
  });
  afterAll(() => api.close());

  const queued = async (): Promise<Queued> => {
    const player = await api.newPlayer();
    expect((await api.probe(player.token, 'eu-west')).statusCode).toBe(200);
    const ticket = (await api.enqueue(player.token, 'duel')).json<TicketResponse>();
    return { token: player.token, playerId: player.playerId, ticketId: ticket.id };
  };
  const heartbeatUrl = (ticketId: string) => `/v1/queue/tickets/${ticketId}/heartbeat`;
  /** In process: requests injected together reach the batcher in the same turn of the loop. */
  const inject = (token: string, ticketId: string, key: string): Promise<InjectedResponse> =>
    api.request('POST', heartbeatUrl(ticketId), { token, idempotencyKey: key });
  /** Over real HTTP (keep-alive sockets of undici), as a client retrying in a hurry would. */
  const post = async (token: string, ticketId: string, key: string) => {
    const response = await fetch(`${baseUrl}${heartbeatUrl(ticketId)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': key },
    });
    return {
      status: response.status,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      body: (await response.json()) as TicketResponse & { code?: string },
    };
  };
  const stored = async (ticketId: string) =>
    (
      await api.ds.query<{ last_heartbeat_at: Date; updated_at: Date }[]>(
        `SELECT last_heartbeat_at, updated_at FROM queue_tickets WHERE id = $1`,
        [ticketId],
      )
    )[0]!;
  const keyRows = (playerId: string) => heartbeatKeyCount(api.ds, playerId);

  it('concurrent replays over HTTP are exactly-once: one heartbeat, one stored answer, the same body for all', async () => {
    const players = await Promise.all(Array.from({ length: 8 }, queued));
    const keys = players.map(() => randomUUID());
    // Each player's key sent 6 times at once, all players interleaved, plus fresh heartbeats of
    // the same tickets under other keys, so replays and first requests share batches.
    const sends = players.flatMap((player, index) => [
      ...Array.from({ length: 6 }, () => ({ player, key: keys[index]!, replay: true })),
      { player, key: randomUUID(), replay: false },
    ]);
    const answers = await Promise.all(
      sends.map((send) => post(send.player.token, send.player.ticketId, send.key)),
    );
    for (const [index, player] of players.entries()) {
      const mine = answers.filter((_, at) => sends[at]!.player === player && sends[at]!.replay);
      expect(mine.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
      // One of them did it; the others replayed its stored answer byte for byte.
      expect(mine.filter((answer) => !answer.replayed)).toHaveLength(1);
      for (const answer of mine) expect(answer.body).toEqual(mine[0]!.body);
      expect(mine[0]!.body.id).toBe(player.ticketId);
      // Two heartbeats were made (the replayed key once, the other key once), never seven.
      expect(await keyRows(player.playerId)).toBe(2);
      expect(keys[index]).toBeDefined();
    }
  });

  it('a replay later answers the stored response and does not heartbeat again', async () => {
    const player = await queued();
    const key = randomUUID();
    const first = await post(player.token, player.ticketId, key);
    const after = await stored(player.ticketId);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const replays = await Promise.all(
      Array.from({ length: 4 }, () => post(player.token, player.ticketId, key)),
    );
    for (const replay of replays) {
      expect(replay).toEqual({ status: 200, replayed: true, body: first.body });
    }
    expect((await stored(player.ticketId)).updated_at.getTime()).toBe(after.updated_at.getTime());
    expect(first.body.lastHeartbeatAt).toBe(after.last_heartbeat_at.toISOString());
  });

  it('new keys are inserted once, already answered, after the tickets; a replay among them undoes that attempt and is answered from its key', async () => {
    const players = await Promise.all(Array.from({ length: 3 }, queued));
    const replayed = players[0]!;
    const replayedKey = randomUUID();
    const first = await inject(replayed.token, replayed.ticketId, replayedKey);
    expect(first.statusCode).toBe(200);
    const before = await stored(replayed.ticketId);

    // All new: one transaction, the tickets updated first and each key written once, completed.
    const fresh = RoundTrips.start();
    const beats = await Promise.all(
      players.map((player) => inject(player.token, player.ticketId, randomUUID())),
    );
    const freshStatements = fresh.stop().statements;
    expect(beats.map((beat) => beat.statusCode)).toEqual([200, 200, 200]);
    const begin = freshStatements.indexOf('START TRANSACTION');
    const writes = freshStatements
      .slice(begin)
      .filter((statement) => /^(INSERT|UPDATE|WITH|DELETE)\b/.test(statement));
    expect(writes).toHaveLength(2);
    expect(writes[0]).toMatch(/^UPDATE queue_tickets/);
    expect(writes[1]).toMatch(/^INSERT INTO idempotency_keys/);
    const states = await api.ds.query<{ state: string; response_status: number }[]>(
      `SELECT state, response_status FROM idempotency_keys
        WHERE player_id = ANY($1) AND route LIKE '%heartbeat'`,
      [players.map((player) => player.playerId)],
    );
    expect(states).toHaveLength(4);
    expect(states.every((row) => row.state === 'completed' && row.response_status === 200)).toBe(
      true,
    );

    // A replay among new keys: the attempt that assumed them new keeps nothing, the batch runs
    // again claiming its keys, and the replay is answered from its key without a heartbeat.
    const afterFresh = await stored(replayed.ticketId);
    expect(afterFresh.updated_at.getTime()).toBeGreaterThan(before.updated_at.getTime());
    const mixed = RoundTrips.start();
    const [replay, ...others] = await Promise.all([
      inject(replayed.token, replayed.ticketId, replayedKey),
      ...players.slice(1).map((player) => inject(player.token, player.ticketId, randomUUID())),
    ]);
    const mixedStatements = mixed.stop().statements;
    expect(mixedStatements.filter((statement) => statement === 'START TRANSACTION')).toHaveLength(
      2,
    );
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    expect((await stored(replayed.ticketId)).updated_at.getTime()).toBe(
      afterFresh.updated_at.getTime(),
    );
    expect(others.map((other) => other.statusCode)).toEqual([200, 200]);
    expect(await keyRows(replayed.playerId)).toBe(2);
    for (const player of players.slice(1)) expect(await keyRows(player.playerId)).toBe(2);
  });

  it('one batch answers each caller its own outcome: live, cancelled, foreign, missing, replayed, key reused', async () => {
    const live = await queued();
    const cancelled = await queued();
    const foreignOwner = await queued();
    const replayed = await queued();
    const replayedKey = randomUUID();
    const first = await inject(replayed.token, replayed.ticketId, replayedKey);
    expect(first.statusCode).toBe(200);
    const cancel = await api.request('DELETE', `/v1/queue/tickets/${cancelled.ticketId}`, {
      token: cancelled.token,
      idempotencyKey: randomUUID(),
    });
    expect(cancel.statusCode).toBe(200);
    const reusedKey = randomUUID();
    expect((await inject(live.token, live.ticketId, reusedKey)).statusCode).toBe(200);

    const recorder = RoundTrips.start();
    const [ok, finished, foreign, missing, replay, reused] = await Promise.all([
      inject(live.token, live.ticketId, randomUUID()),
      inject(cancelled.token, cancelled.ticketId, randomUUID()),
      inject(live.token, foreignOwner.ticketId, randomUUID()),
      inject(live.token, randomUUID(), randomUUID()),
      inject(replayed.token, replayed.ticketId, replayedKey),
      // The key of live's earlier heartbeat, now on another ticket: another request.
      inject(live.token, cancelled.ticketId, reusedKey),
    ]);
    const sent = recorder.stop();
    // They shared one session lookup and one transaction, after a first attempt that assumed
    // every key new and every ticket live, which refusals roll back.
    expect(sent.statements.filter((statement) => statement === 'START TRANSACTION')).toHaveLength(
      2,
    );
    expect(sent.statements.filter((statement) => statement === 'ROLLBACK')).toHaveLength(1);

    expect(ok.statusCode).toBe(200);
    expect(ok.json<TicketResponse>()).toMatchObject({ id: live.ticketId, state: 'SEARCHING' });
    expect(ok.headers['idempotent-replayed']).toBeUndefined();
    expect([finished.statusCode, finished.json().code]).toEqual([409, 'TICKET_FINISHED']);
    expect(finished.json().detail).toContain('CANCELLED');
    expect([foreign.statusCode, foreign.json().code]).toEqual([404, 'TICKET_NOT_FOUND']);
    expect([missing.statusCode, missing.json().code]).toEqual([404, 'TICKET_NOT_FOUND']);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    expect([reused.statusCode, reused.json().code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
    // The refused requests left no key behind: a retry after fixing the cause runs anew.
    const refusedKeys = await api.ds.query<{ key: string }[]>(
      `SELECT key FROM idempotency_keys WHERE player_id = $1 AND state <> 'completed'`,
      [live.playerId],
    );
    expect(refusedKeys).toEqual([]);
    expect(await keyRows(cancelled.playerId)).toBe(0);
  });

  it("a key another transaction holds fails only its own request, after lock_timeout; its neighbours' heartbeats go through", async () => {
    const held = await queued();
    const neighbours = await Promise.all(Array.from({ length: 3 }, queued));
    const heldKey = randomUUID();
    // A first request with that key still running (on another replica): its key claimed, its
    // transaction open.
    const first = await TestFactories.of(api).runningRequest(
      held.playerId,
      heldKey,
      'POST queue/tickets/:id/heartbeat',
    );
    try {
      const recorder = RoundTrips.start();
      const [blocked, ...others] = await Promise.all([
        inject(held.token, held.ticketId, heldKey),
        ...neighbours.map((player) => inject(player.token, player.ticketId, randomUUID())),
      ]);
      // Waited for twice, not four times: the batch's attempt, then the request's own attempt
      // alone (beside its neighbours'); neither goes on to claim the keys and wait once more.
      expect(
        recorder.stop().statements.filter((statement) => statement === 'START TRANSACTION'),
      ).toHaveLength(1 + neighbours.length + 1);
      expect([blocked.statusCode, blocked.json().code]).toEqual([
        409,
        'IDEMPOTENCY_KEY_IN_PROGRESS',
      ]);
      expect(others.map((other) => other.statusCode)).toEqual([200, 200, 200]);
      for (const [index, other] of others.entries()) {
        expect(other.json<TicketResponse>().id).toBe(neighbours[index]!.ticketId);
      }
    } finally {
      await first.abandon();
    }
    // Its key was released with the rollback: the retry runs.
    expect((await inject(held.token, held.ticketId, heldKey)).statusCode).toBe(200);
  });

  it('every heartbeat of a batch reaches the candidate projection, in one Redis pipeline', async () => {
    const players = await Promise.all(Array.from({ length: 5 }, queued));
    const recorder = RoundTrips.start();
    const answers = await Promise.all(
      players.map((player) => inject(player.token, player.ticketId, randomUUID())),
    );
    const sent = recorder.stop();
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200, 200]);
    // Five projection updates (one pipeline), and the rate limits' counts: one command per limit
    // that applies (per session, per address) for the five requests together.
    expect(sent.redisCommands.filter((name) => name === 'evalsha')).toHaveLength(5 + 2);
    const projection = await Promise.all(
      players.map((player) => api.app.get(CandidateProjection).candidate(player.ticketId)),
    );
    for (const [index, candidate] of projection.entries()) {
      expect(candidate?.lastHeartbeatAt.toISOString()).toBe(
        answers[index]!.json<TicketResponse>().lastHeartbeatAt,
      );
    }
  });
  it("answers without waiting for the projection's Redis write", async () => {
    const player = await queued();
    let release: () => void = () => undefined;
    const pending = new Promise<void>((resolve) => (release = resolve));
    const write = jest
      .spyOn(api.app.get(CandidateProjection), 'applyMany')
      .mockImplementation(() => pending);
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      const answer = await inject(player.token, player.ticketId, randomUUID());
      expect(answer.statusCode).toBe(200);
      expect(write).toHaveBeenCalledTimes(1);
      // Answered while the write was still pending: waiting would have answered only once its
      // 1 s timeout gave up on it, with a warning.
      const gaveUp = warn.mock.calls.filter(([message]) =>
        String(message).includes('not updated in Redis'),
      );
      expect(gaveUp).toEqual([]);
    } finally {
      release();
      write.mockRestore();
      warn.mockRestore();
    }
  });

  it('commits heartbeats without waiting for the disk (HEARTBEAT_SYNCHRONOUS_COMMIT=false), and only heartbeats', async () => {
    const player = await queued();
    const recorder = RoundTrips.start();
    expect((await inject(player.token, player.ticketId, randomUUID())).statusCode).toBe(200);
    const heartbeat = recorder.stop().statements;
    const begin = heartbeat.indexOf('START TRANSACTION');
    expect(heartbeat.slice(begin, begin + 2)).toEqual([
      'START TRANSACTION',
      'SET LOCAL synchronous_commit = off',
    ]);

    const other = RoundTrips.start();
    const second = await api.newPlayer();
    expect((await api.probe(second.token, 'eu-west')).statusCode).toBe(200);
    expect((await api.enqueue(second.token, 'duel')).statusCode).toBe(201);
    const statements = other.stop().statements;
    expect(statements).toContain('START TRANSACTION');
    expect(statements.filter((statement) => statement.includes('synchronous_commit'))).toEqual([]);
  });
});
