import { randomUUID } from 'node:crypto';
import type { TicketResponse } from '@matchplane/contracts';
import {
  CandidateProjection,
  TicketExpiryStage,
  TicketLiveness,
  TicketLivenessCheckpoint,
  TicketStore,
} from '@matchplane/tickets';
import { startApiReplica, startPlayerApi, type PlayerApi } from '../support/player-api';
import { freePort } from '../support/processes';
import { deleteRedisPrefix } from '../support/redis';
import { RoundTrips } from '../support/round-trips';
import { heartbeatKeyCount } from '../support/heartbeat-keys';

const HEARTBEAT_TIMEOUT_MS = 2_000;

interface Queued {
  token: string;
  playerId: string;
  ticket: TicketResponse;
}

/**
 * Heartbeats answered from the liveness store (Redis) and checkpointed into PostgreSQL, over real
 * HTTP, PostgreSQL and Redis; and what a crash of each part loses (decision
 * 2026-12-07-ticket-liveness): an API crash nothing, a checkpoint that dies half-way nothing, a
 * Redis flush the beats since the last checkpoint, which must not expire a live player.
 */
describe(TicketLiveness.name, () => {
  let api: PlayerApi;
  let baseUrl: string;
  beforeAll(async () => {
    api = await startPlayerApi({ TICKET_HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS) });
    const port = await freePort();
    await api.app.listen(port, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${port}`;
  });
  afterAll(() => api.close());
  afterEach(() => jest.restoreAllMocks());

  const queued = async (): Promise<Queued> => {
    const player = await api.newPlayer();
    expect((await api.probe(player.token, 'eu-west')).statusCode).toBe(200);
    const ticket = (await api.enqueue(player.token, 'duel')).json<TicketResponse>();
    return { token: player.token, playerId: player.playerId, ticket };
  };
  const beat = async (player: Queued, ticketId = player.ticket.id, key = randomUUID()) => {
    const response = await fetch(`${baseUrl}/v1/queue/tickets/${ticketId}/heartbeat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${player.token}`, 'idempotency-key': key },
    });
    return {
      status: response.status,
      contentType: response.headers.get('content-type'),
      body: (await response.json()) as TicketResponse & { code?: string; detail?: string },
    };
  };
  const row = async (ticketId: string) =>
    (
      await api.ds.query<{ state: string; last_heartbeat_at: Date; updated_at: Date }[]>(
        `SELECT state, last_heartbeat_at, updated_at FROM queue_tickets WHERE id = $1`,
        [ticketId],
      )
    )[0]!;
  const heartbeatKeys = (playerId: string) => heartbeatKeyCount(api.ds, playerId);
  const checkpoint = () => api.app.get(TicketLivenessCheckpoint).checkpoint();
  const expiry = () =>
    new TicketExpiryStage(api.ds, api.app.get(TicketStore), api.app.get(TicketLiveness), {
      batchSize: 50,
      heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
    });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it("answers a searching ticket's heartbeat from Redis: the ticket as GET shows it, no row changed, no key stored", async () => {
    const player = await queued();
    const before = await row(player.ticket.id);
    const recorder = RoundTrips.start();
    const answer = await beat(player);
    const sent = recorder.stop();
    expect(answer.status).toBe(200);
    // No statement at all: the session is cached (its enqueue looked it up), and the beat is one
    // script call.
    expect(sent.statements).toEqual([]);
    expect(sent.redisCommands.filter((name) => name === 'evalsha')).toHaveLength(1 + 2);
    const read = await api.request('GET', `/v1/queue/tickets/${player.ticket.id}`, {
      token: player.token,
    });
    const { lastHeartbeatAt, waitSeconds: _answered, ...answered } = answer.body;
    const { lastHeartbeatAt: rowBeat, waitSeconds: _read, ...shown } = read.json<TicketResponse>();
    expect(answered).toEqual(shown);
    expect(new Date(lastHeartbeatAt).getTime()).toBeGreaterThan(new Date(rowBeat).getTime());
    expect(await row(player.ticket.id)).toEqual(before);
    expect(await heartbeatKeys(player.playerId)).toBe(0);
    // The matcher's view carries the beat.
    const candidate = await api.app.get(CandidateProjection).candidate(player.ticket.id);
    expect(candidate?.lastHeartbeatAt.toISOString()).toBe(lastHeartbeatAt);
  });

  it('refuses as before what Redis cannot answer for: finished, foreign and unknown tickets', async () => {
    const live = await queued();
    const other = await queued();
    const cancel = await api.request('DELETE', `/v1/queue/tickets/${other.ticket.id}`, {
      token: other.token,
      idempotencyKey: randomUUID(),
    });
    expect(cancel.statusCode).toBe(200);
    const finished = await beat(other);
    expect([finished.status, finished.body.code]).toEqual([409, 'TICKET_FINISHED']);
    expect(finished.contentType).toContain('application/problem+json');
    expect(finished.body.detail).toContain('CANCELLED');
    const foreign = await beat(live, other.ticket.id);
    expect([foreign.status, foreign.body.code]).toEqual([404, 'TICKET_NOT_FOUND']);
    const unknown = await beat(live, randomUUID());
    expect([unknown.status, unknown.body.code]).toEqual([404, 'TICKET_NOT_FOUND']);
    // A ticket of another player is not beaten by this one's heartbeat.
    expect(await api.app.get(TicketLiveness).beats([other.ticket.id])).toEqual(new Map());
  });

  it('expiry consults the store: a ticket beaten only through Redis gets its beat written instead of expiring', async () => {
    const beating = await queued();
    const silent = await queued();
    await sleep(300);
    const answer = await beat(beating);
    const beatAt = new Date(answer.body.lastHeartbeatAt);
    // Both rows are older than the timeout at `now`; only Redis knows one of them is alive.
    const now = new Date(beatAt.getTime() + HEARTBEAT_TIMEOUT_MS - 100);
    // (Earlier tests' tickets, silent too, expire with it.)
    expect((await expiry().batch(now, new Set())).failures).toEqual([]);
    expect((await row(silent.ticket.id)).state).toBe('EXPIRED');
    const kept = await row(beating.ticket.id);
    expect(kept.state).toBe('SEARCHING');
    expect(kept.last_heartbeat_at.toISOString()).toBe(beatAt.toISOString());
  });

  it('a ticket heartbeating only through Redis outlives the timeout, a Redis flush included, thanks to checkpoints; one that stopped expires', async () => {
    const live = await queued();
    const stopped = await queued();
    expect((await beat(stopped)).status).toBe(200);
    const started = Date.now();
    let lastCheckpoint = 0;
    while (Date.now() - started < HEARTBEAT_TIMEOUT_MS + 1_000) {
      expect((await beat(live)).status).toBe(200);
      if (Date.now() - lastCheckpoint >= 600) {
        await checkpoint();
        lastCheckpoint = Date.now();
      }
      await sleep(250);
    }
    expect(await heartbeatKeys(live.playerId)).toBe(0);
    // Redis loses everything under the deployment's prefix: candidates, beats, marks.
    await deleteRedisPrefix(api.prefix);
    expect((await expiry().batch(new Date(), new Set())).failures).toEqual([]);
    expect((await row(stopped.ticket.id)).state).toBe('EXPIRED');
    expect((await row(live.ticket.id)).state).toBe('SEARCHING');
    // Its next heartbeat finds no candidate: PostgreSQL answers (a key stored) and re-projects it,
    // and the one after is Redis's again.
    expect((await beat(live)).status).toBe(200);
    expect(await heartbeatKeys(live.playerId)).toBe(1);
    await sleep(100);
    expect((await beat(live)).status).toBe(200);
    expect(await heartbeatKeys(live.playerId)).toBe(1);
  });

  it('an API that dies loses no beat: Redis holds it until a checkpoint from elsewhere writes it', async () => {
    const player = await queued();
    const replica = await startApiReplica(api);
    const answer = await replica.inject({
      method: 'POST',
      url: `/v1/queue/tickets/${player.ticket.id}/heartbeat`,
      headers: { authorization: `Bearer ${player.token}`, 'idempotency-key': randomUUID() },
    });
    expect(answer.statusCode).toBe(200);
    await replica.close();
    const report = await checkpoint();
    expect(report.written).toBeGreaterThanOrEqual(1);
    expect((await row(player.ticket.id)).last_heartbeat_at.toISOString()).toBe(
      answer.json<TicketResponse>().lastHeartbeatAt,
    );
  });

  it('a checkpoint that dies half-way loses nothing: the next one writes what it had taken', async () => {
    const first = await queued();
    const second = await queued();
    const firstBeat = (await beat(first)).body.lastHeartbeatAt;
    const tickets = api.app.get(TicketStore);
    jest
      .spyOn(tickets, 'checkpointHeartbeats')
      .mockRejectedValueOnce(new Error('connection terminated'));
    await expect(checkpoint()).rejects.toThrow('connection terminated');
    expect((await row(first.ticket.id)).last_heartbeat_at.toISOString()).toBe(
      first.ticket.lastHeartbeatAt,
    );
    // Beats go on meanwhile, into a fresh set; the next checkpoint writes both.
    const secondBeat = (await beat(second)).body.lastHeartbeatAt;
    const report = await checkpoint();
    expect(report.beaten).toBeGreaterThanOrEqual(2);
    expect((await row(first.ticket.id)).last_heartbeat_at.toISOString()).toBe(firstBeat);
    expect((await row(second.ticket.id)).last_heartbeat_at.toISOString()).toBe(secondBeat);
    // And forgets them: nothing is written twice.
    expect((await checkpoint()).beaten).toBe(0);
  });

  it('a candidate that outlived its ticket (a lost projection write) answers heartbeats until the next checkpoint repairs it', async () => {
    const player = await queued();
    const projection = api.app.get(CandidateProjection);
    // The cancel's projection write never reaches Redis.
    jest.spyOn(projection, 'applyManyAfterCommit').mockResolvedValueOnce(undefined);
    const cancel = await api.request('DELETE', `/v1/queue/tickets/${player.ticket.id}`, {
      token: player.token,
      idempotencyKey: randomUUID(),
    });
    expect(cancel.json<TicketResponse>().state).toBe('CANCELLED');
    expect((await beat(player)).body.state).toBe('SEARCHING');
    const report = await checkpoint();
    expect(report.repaired).toBe(1);
    const after = await beat(player);
    expect([after.status, after.body.code]).toEqual([409, 'TICKET_FINISHED']);
  });

  it('a candidate left stale by a lost projection write is brought up to its row at the next checkpoint', async () => {
    const player = await queued();
    const projection = api.app.get(CandidateProjection);
    // A second region measured; the ticket's row takes it, the candidate never hears of it.
    jest.spyOn(projection, 'applyManyAfterCommit').mockResolvedValueOnce(undefined);
    expect((await api.probe(player.token, 'us-east')).statusCode).toBe(200);
    expect((await beat(player)).status).toBe(200);
    const stale = await projection.candidate(player.ticket.id);
    expect(Object.keys(stale?.predictedRtt as object)).toEqual(['eu-west']);
    expect((await checkpoint()).repaired).toBe(1);
    const repaired = await projection.candidate(player.ticket.id);
    expect(Object.keys(repaired?.predictedRtt as object).sort()).toEqual(['eu-west', 'us-east']);
  });

  it('with Redis failing or slow, heartbeats go to PostgreSQL and are answered all the same', async () => {
    const player = await queued();
    const liveness = api.app.get(TicketLiveness);
    jest.spyOn(liveness, 'beatMany').mockRejectedValueOnce(new Error('connect ECONNREFUSED'));
    const failed = await beat(player);
    expect(failed.status).toBe(200);
    expect(await heartbeatKeys(player.playerId)).toBe(1);
    expect((await row(player.ticket.id)).last_heartbeat_at.toISOString()).toBe(
      failed.body.lastHeartbeatAt,
    );
    // Redis that does not answer within its 250 ms: the same.
    jest.spyOn(liveness, 'beatMany').mockReturnValueOnce(new Promise(() => undefined));
    const slow = await beat(player);
    expect(slow.status).toBe(200);
    expect(await heartbeatKeys(player.playerId)).toBe(2);
    // Back to Redis once it answers.
    expect((await beat(player)).status).toBe(200);
    expect(await heartbeatKeys(player.playerId)).toBe(2);
  });
});
