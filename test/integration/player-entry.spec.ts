import { randomUUID } from 'node:crypto';
import { validCandidate } from '@matchplane/domain';
import { PlayerStore } from '@matchplane/players';
import { runInTransaction } from '@matchplane/persistence';
import { CandidateProjection } from '@matchplane/tickets';
import type { TicketResponse } from '@matchplane/contracts';
import { startPlayerApi, type PlayerApi } from '../support/player-api';

/*
 * The hand-off from probes to placement: a player's server-measured RTT must reach both the
 * ticket in PostgreSQL and the candidate in Redis that the matcher reads, and the matcher's own
 * predicate (validCandidate) must accept it. Everything goes through the real routes.
 */
describe('player entry (sessions, probes, tickets, projection)', () => {
  let api: PlayerApi;
  let projection: CandidateProjection;

  beforeAll(async () => {
    api = await startPlayerApi();
    projection = api.app.get(CandidateProjection);
  });
  afterAll(() => api.close());

  const timeout = () => api.config.TICKET_HEARTBEAT_TIMEOUT_MS;

  it('probe then enqueue: the ticket and its projected candidate carry the measured RTT and are matchable', async () => {
    const player = await api.newPlayer();
    const probed = await api.probe(player.token, 'eu-west');
    expect(probed.statusCode).toBe(200);
    const { rttMs, estimateMs, samplesMs } = probed.json<{
      rttMs: number;
      estimateMs: number;
      samplesMs: number[];
    }>();
    expect(rttMs).toBeGreaterThanOrEqual(0);
    expect(samplesMs).toEqual([rttMs]);
    expect(estimateMs).toBe(rttMs);

    const created = await api.enqueue(player.token, 'duel');
    expect(created.statusCode).toBe(201);
    const ticket = created.json<TicketResponse>();
    expect(ticket).toMatchObject({
      state: 'SEARCHING',
      mode: 'duel',
      regionsMeasured: ['eu-west'],
      playerId: player.playerId,
    });

    const [row] = await api.ds.query<{ predicted_rtt: unknown }[]>(
      `SELECT predicted_rtt FROM queue_tickets WHERE id = $1`,
      [ticket.id],
    );
    expect(row?.predicted_rtt).toEqual({ 'eu-west': estimateMs });

    const candidates = await projection.candidates('duel');
    const candidate = candidates.find((c) => c.ticketId === ticket.id);
    expect(candidate?.predictedRtt).toEqual({ 'eu-west': estimateMs });
    expect(validCandidate(candidate!, new Date(), timeout())).toBe(true);
  });

  it('a probe after enqueue reaches the live ticket and refreshes the candidate', async () => {
    const player = await api.newPlayer();
    await api.probe(player.token, 'eu-west');
    const ticket = (await api.enqueue(player.token, 'duel')).json<TicketResponse>();
    expect((await projection.candidate(ticket.id))?.predictedRtt).toEqual({
      'eu-west': expect.any(Number),
    });

    const answer = await api.probe(player.token, 'us-east');
    expect(answer.statusCode).toBe(200);
    const usEast = answer.json<{ estimateMs: number }>().estimateMs;

    const [row] = await api.ds.query<{ predicted_rtt: Record<string, number> }[]>(
      `SELECT predicted_rtt FROM queue_tickets WHERE id = $1`,
      [ticket.id],
    );
    expect(row?.predicted_rtt['us-east']).toBe(usEast);
    const candidate = await projection.candidate(ticket.id);
    expect(candidate?.predictedRtt).toEqual(row?.predicted_rtt);
    expect(validCandidate(candidate!, new Date(), timeout())).toBe(true);
    const read = await api.request('GET', `/v1/queue/tickets/${ticket.id}`, {
      token: player.token,
    });
    expect(read.json<TicketResponse>().regionsMeasured).toEqual(['eu-west', 'us-east']);
  });

  it('the estimate is the median of the last samples, so one slow answer does not move it', async () => {
    const player = await api.newPlayer();
    for (let i = 0; i < 4; i += 1)
      expect((await api.probe(player.token, 'us-west')).statusCode).toBe(200);
    const [row] = await api.ds.query<{ samples_ms: number[]; estimate_ms: number }[]>(
      `SELECT samples_ms, estimate_ms FROM player_latencies WHERE player_id = $1 AND region = 'us-west'`,
      [player.playerId],
    );
    expect(row?.samples_ms).toHaveLength(api.config.PROBE_SAMPLES_KEPT);
    const sorted = [...(row?.samples_ms ?? [])].sort((a, b) => a - b);
    expect(row?.estimate_ms).toBe(sorted[1]);
  });

  it('heartbeats refresh the candidate; cancel removes it and the ticket event goes through the outbox', async () => {
    const player = await api.newPlayer();
    await api.probe(player.token, 'eu-west');
    const ticket = (await api.enqueue(player.token, 'duel')).json<TicketResponse>();
    const before = await projection.candidate(ticket.id);

    const beat = await api.request('POST', `/v1/queue/tickets/${ticket.id}/heartbeat`, {
      token: player.token,
      idempotencyKey: randomUUID(),
    });
    expect(beat.statusCode).toBe(200);
    // Answered from the liveness store: the candidate reads the beat, its row is not rewritten.
    const after = await projection.candidate(ticket.id);
    expect(after!.lastHeartbeatAt.toISOString()).toBe(beat.json<TicketResponse>().lastHeartbeatAt);
    expect(after!.lastHeartbeatAt.getTime()).toBeGreaterThan(before!.lastHeartbeatAt.getTime());
    expect(after!.version).toBe(before!.version);

    const cancelled = await api.request('DELETE', `/v1/queue/tickets/${ticket.id}`, {
      token: player.token,
      idempotencyKey: randomUUID(),
    });
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json<TicketResponse>().state).toBe('CANCELLED');
    expect(await projection.candidate(ticket.id)).toBeUndefined();
    expect((await projection.candidates('duel')).map((c) => c.ticketId)).not.toContain(ticket.id);

    const events = await api.ds.query<
      { revision: string; payload: { to: string; reason?: string } }[]
    >(`SELECT revision, payload FROM outbox WHERE aggregate_id = $1 ORDER BY revision`, [
      ticket.id,
    ]);
    expect(events.map((e) => [Number(e.revision), e.payload.to, e.payload.reason])).toEqual([
      [1, 'SEARCHING', undefined],
      [2, 'CANCELLED', 'PLAYER_CANCELLED'],
    ]);
  });

  it('the projection can be rebuilt from PostgreSQL after Redis lost it', async () => {
    const player = await api.newPlayer();
    await api.probe(player.token, 'eu-west');
    const ticket = (await api.enqueue(player.token, 'squad')).json<TicketResponse>();
    await api.app
      .get(CandidateProjection)
      ['redis'].del(projection.candidateKey(ticket.id), projection.modeIndexKey('squad'));
    expect(await projection.candidate(ticket.id)).toBeUndefined();
    const result = await projection.rebuild(api.ds, ['duel', 'squad']);
    expect(result.applied).toBeGreaterThanOrEqual(1);
    const rebuilt = (await projection.candidates('squad')).find((c) => c.ticketId === ticket.id);
    expect(validCandidate(rebuilt!, new Date(), timeout())).toBe(true);
  });

  describe('refusals', () => {
    it('no probe result: 409 NO_LATENCY_MEASURED and no ticket', async () => {
      const player = await api.newPlayer();
      const response = await api.enqueue(player.token, 'duel');
      expect(response.statusCode).toBe(409);
      expect(response.json().code).toBe('NO_LATENCY_MEASURED');
      const rows = await api.ds.query(`SELECT 1 FROM queue_tickets WHERE player_id = $1`, [
        player.playerId,
      ]);
      expect(rows).toHaveLength(0);
    });

    it('a second live ticket: 409 TICKET_ALREADY_LIVE', async () => {
      const player = await api.newPlayer();
      await api.probe(player.token, 'eu-west');
      expect((await api.enqueue(player.token, 'duel')).statusCode).toBe(201);
      const second = await api.enqueue(player.token, 'squad');
      expect(second.statusCode).toBe(409);
      expect(second.json().code).toBe('TICKET_ALREADY_LIVE');
    });

    it('ten concurrent enqueues of one player, each with its own key: one 201 and nine prompt 409 TICKET_ALREADY_LIVE', async () => {
      const player = await api.newPlayer();
      await api.probe(player.token, 'eu-west');
      const keys = Array.from({ length: 10 }, () => randomUUID());
      const started = performance.now();
      const responses = await Promise.all(
        keys.map((key) => api.enqueue(player.token, 'duel', key)),
      );
      const elapsedMs = performance.now() - started;

      const outcomes = responses.map(
        (r) => `${r.statusCode} ${r.json<{ code?: string }>().code ?? 'created'}`,
      );
      expect(outcomes.sort()).toEqual([
        '201 created',
        ...Array.from({ length: 9 }, () => '409 TICKET_ALREADY_LIVE'),
      ]);
      // Before the lock order was fixed, the key's foreign-key lock and the enqueue's row lock
      // deadlocked: 500s after 5-29 s of retries.
      expect(elapsedMs).toBeLessThan(2_000);
      const tickets = await api.ds.query(`SELECT 1 FROM queue_tickets WHERE player_id = $1`, [
        player.playerId,
      ]);
      expect(tickets).toHaveLength(1);

      // The winner's key still replays its answer.
      const winner = keys[responses.findIndex((r) => r.statusCode === 201)]!;
      const replay = await api.enqueue(player.token, 'duel', winner);
      expect(replay.statusCode).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json()).toEqual(responses.find((r) => r.statusCode === 201)!.json());
    });

    it('a no-show cooldown: 429 COOLDOWN_ACTIVE with Retry-After', async () => {
      const player = await api.newPlayer();
      await api.probe(player.token, 'eu-west');
      // The no-show penalty's own writer (the lifecycle calls it when a player misses a match).
      await runInTransaction(api.ds, (manager, unit) =>
        api.app.get(PlayerStore).penaliseNoShow(unit, player.playerId, new Date(), {
          baseMs: 90_000,
          capMs: 90_000,
          decayMs: 86_400_000,
        }),
      );
      const response = await api.enqueue(player.token, 'duel');
      expect(response.statusCode).toBe(429);
      expect(response.json().code).toBe('COOLDOWN_ACTIVE');
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(80);
      expect(Number(response.headers['retry-after'])).toBeLessThanOrEqual(90);
    });

    it('an unknown mode is 422 UNKNOWN_MODE, an unknown region 404 UNKNOWN_REGION', async () => {
      const player = await api.newPlayer();
      const mode = await api.enqueue(player.token, 'chess');
      expect([mode.statusCode, mode.json().code]).toEqual([422, 'UNKNOWN_MODE']);
      const region = await api.request('POST', '/v1/probes/mars-north/challenge', {
        token: player.token,
      });
      expect([region.statusCode, region.json().code]).toEqual([404, 'UNKNOWN_REGION']);
    });

    it("another player's ticket is a 404, and a finished one cannot heartbeat", async () => {
      const owner = await api.newPlayer();
      const stranger = await api.newPlayer();
      await api.probe(owner.token, 'eu-west');
      const ticket = (await api.enqueue(owner.token, 'duel')).json<TicketResponse>();
      const peek = await api.request('GET', `/v1/queue/tickets/${ticket.id}`, {
        token: stranger.token,
      });
      expect([peek.statusCode, peek.json().code]).toEqual([404, 'TICKET_NOT_FOUND']);
      await api.request('DELETE', `/v1/queue/tickets/${ticket.id}`, {
        token: owner.token,
        idempotencyKey: randomUUID(),
      });
      const beat = await api.request('POST', `/v1/queue/tickets/${ticket.id}/heartbeat`, {
        token: owner.token,
        idempotencyKey: randomUUID(),
      });
      expect([beat.statusCode, beat.json().code]).toEqual([409, 'TICKET_FINISHED']);
    });
  });
});
