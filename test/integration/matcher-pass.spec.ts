import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { Test } from '@nestjs/testing';
import { setTimeout as sleep } from 'node:timers/promises';
import { MatcherConfig } from '../../apps/matcher/src/matcher.config';
import type { ProbeChallengeResponse, TicketResponse } from '@matchplane/contracts';
import { formMatches, type MatchingFunction } from '@matchplane/domain';
import { MatchLifecycle } from '@matchplane/matches';
import { MetricsRegistry } from '@matchplane/observability';
import { runInTransaction } from '@matchplane/persistence';
import { CandidateProjection, ticketExplanationKey } from '@matchplane/tickets';
import { MatchCommitter } from '../../apps/matcher/src/match-committer';
import { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { MatcherModule, type MatcherModuleOptions } from '../../apps/matcher/src/matcher.module';
import { MATCHING_FUNCTION } from '../../apps/matcher/src/matching-function';
import { MatchingPass } from '../../apps/matcher/src/matching.pass';
import type { CommitSession } from '../../apps/matcher/src/mode-lease';
import { TicketExplanations } from '../../apps/matcher/src/ticket-explanations';
import { inProcessMatcherConfig } from '../support/in-process-matcher';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { testRedis } from '../support/redis';

/*
 * One matcher (passes driven by hand) over tickets queued through the real player routes: what a
 * pass commits, what it leaves out and says why, what it refuses to commit, and how a studio binds
 * its own matching function.
 */
describe(MatchingPass.name, () => {
  let api: PlayerApi;
  const contexts: INestApplicationContext[] = [];

  beforeAll(async () => {
    api = await startPlayerApi();
  });
  const players: { token: string; ticket: TicketResponse }[] = [];
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()));
    // Each test starts from an empty queue: its players cancel what is still searching (a 409
    // for tickets already matched or finished).
    for (const { token, ticket } of players.splice(0)) {
      await api.request('DELETE', `/v1/queue/tickets/${ticket.id}`, {
        token,
        idempotencyKey: randomUUID(),
      });
    }
  });
  afterAll(() => api.close());

  function matcherConfig(env: Record<string, string> = {}): Promise<MatcherConfig> {
    return inProcessMatcherConfig(api, env);
  }

  async function startMatcher(
    options: MatcherModuleOptions = {},
    env: Record<string, string> = {},
  ) {
    const context = await NestFactory.createApplicationContext(
      MatcherModule.forRoot(await matcherConfig(env), { schedule: 'manual', ...options }),
      { logger: false, abortOnError: false },
    );
    contexts.push(context);
    return { context, loop: context.get(MatcherLoop) };
  }

  /** A player queued through the routes, having probed `regions` (each ~1 ms away in process). */
  async function queued(mode: string, regions: readonly string[] = ['eu-west']) {
    const player = await api.newPlayer();
    for (const region of regions)
      expect((await api.probe(player.token, region)).statusCode).toBe(200);
    const response = await api.enqueue(player.token, mode);
    expect(response.statusCode).toBe(201);
    const queuedPlayer = { token: player.token, ticket: response.json<TicketResponse>() };
    players.push(queuedPlayer);
    return queuedPlayer;
  }

  const ticketOf = async (token: string, id: string) =>
    (await api.request('GET', `/v1/queue/tickets/${id}`, { token })).json<TicketResponse>();

  const participantsOf = (matchId: string) =>
    api.ds.query<{ ticket_id: string; team: number }[]>(
      `SELECT ticket_id, team FROM match_participants WHERE match_id = $1 ORDER BY team`,
      [matchId],
    );

  /** Holds the next commit until `release()`, to change the world between read and commit. */
  function holdNextCommit(context: INestApplicationContext) {
    const committer = context.get(MatchCommitter);
    const original = committer.commit.bind(committer);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const waiting = new Promise<void>((resolve) => (reached = resolve));
    jest.spyOn(committer, 'commit').mockImplementationOnce(async (...args) => {
      reached();
      await released;
      return original(...args);
    });
    return { waiting, release };
  }

  it('commits a match of two searching duel tickets, moves both to MATCHED and removes them from the pool', async () => {
    const { loop } = await startMatcher();
    const a = await queued('duel');
    const b = await queued('duel');
    const report = await loop.passNow('duel');
    expect(report?.committed).toHaveLength(1);
    const matchId = report!.committed[0]!.matchId;

    for (const player of [a, b]) {
      const ticket = await ticketOf(player.token, player.ticket.id);
      expect(ticket).toMatchObject({ state: 'MATCHED', matchId });
    }
    const [match] = await api.ds.query<
      { state: string; revision: string; mode: string; region: string }[]
    >(`SELECT state, revision, mode, region FROM matches WHERE id = $1`, [matchId]);
    expect(match).toEqual({ state: 'ALLOCATING', revision: '1', mode: 'duel', region: 'eu-west' });
    expect((await participantsOf(matchId)).map((p) => p.team)).toEqual([0, 1]);
    const [event] = await api.ds.query<{ player_ids: string[]; revision: string }[]>(
      `SELECT player_ids, revision FROM outbox WHERE aggregate_id = $1`,
      [matchId],
    );
    expect(event?.revision).toBe('1');
    expect([...(event?.player_ids ?? [])].sort()).toEqual(
      [a.ticket.playerId, b.ticket.playerId].sort(),
    );
    const projection = api.app.get(CandidateProjection);
    expect(await projection.candidates('duel')).toEqual([]);
  });

  it('matches tickets heartbeating only through the liveness store, their rows older than the timeout', async () => {
    const { loop } = await startMatcher({}, { TICKET_HEARTBEAT_TIMEOUT_MS: '1000' });
    const pair = [await queued('duel'), await queued('duel')];
    const started = Date.now();
    while (Date.now() - started < 1_400) {
      for (const { token, ticket } of pair) {
        const beat = await api.request('POST', `/v1/queue/tickets/${ticket.id}/heartbeat`, {
          token,
          idempotencyKey: randomUUID(),
        });
        expect(beat.statusCode).toBe(200);
      }
      await sleep(200);
    }
    // No checkpoint ran: by their rows both are stale; the screen and the commit read Redis's beat.
    const rows = await api.ds.query<{ last_heartbeat_at: Date }[]>(
      `SELECT last_heartbeat_at FROM queue_tickets WHERE id = ANY($1)`,
      [pair.map(({ ticket }) => ticket.id)],
    );
    for (const row of rows)
      expect(Date.now() - row.last_heartbeat_at.getTime()).toBeGreaterThan(1_000);
    const report = await loop.passNow('duel');
    expect(report?.committed).toHaveLength(1);
    expect(report?.dropped).toEqual([]);
  });

  it('explains a ticket it cannot match yet through GET /v1/queue/tickets/{id}, and clears it once matched', async () => {
    const { loop } = await startMatcher();
    const lone = await queued('squad');
    await loop.passNow('squad');
    const ticket = await ticketOf(lone.token, lone.ticket.id);
    expect(ticket.state).toBe('SEARCHING');
    expect(ticket.explanation).toEqual({
      code: 'NOT_ENOUGH_PLAYERS',
      message: expect.stringMatching(
        /^waiting for 7 more players in eu-west; the search widens in \d+ s$/,
      ),
      evaluatedAt: expect.any(String),
    });
    expect(Date.now() - Date.parse(ticket.explanation!.evaluatedAt)).toBeLessThan(5_000);
    const redis = testRedis();
    try {
      const key = ticketExplanationKey(api.prefix, lone.ticket.id);
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(30_000);

      for (let i = 0; i < 7; i += 1) await queued('squad');
      const report = await loop.passNow('squad');
      expect(report?.committed).toHaveLength(1);
      expect(await redis.exists(key)).toBe(0);
      expect((await ticketOf(lone.token, lone.ticket.id)).explanation).toBeUndefined();
    } finally {
      redis.disconnect();
    }
  });

  it('removes the matched tickets from the pool and clears their explanations when the commit commits, not when it rolls back', async () => {
    const { context } = await startMatcher();
    const a = await queued('duel');
    const b = await queued('duel');
    const projection = api.app.get(CandidateProjection);
    const candidates = await projection.candidates('duel');
    expect(candidates).toHaveLength(2);
    const seen = new Map(
      candidates.map((c) => [
        c.ticketId,
        { ...c, predictedRtt: c.predictedRtt as Record<string, number> },
      ]),
    );
    const proposals = formMatches(
      [...seen.values()],
      [
        {
          mode: 'duel',
          teamSize: 1,
          teamCount: 2,
          widening: [{ afterMs: 0, maxRttMs: 500, ratingWindow: Infinity }],
        },
      ],
      new Date(),
    ).matches;
    expect(proposals).toHaveLength(1);
    const ids = [a.ticket.id, b.ticket.id];
    await context.get(TicketExplanations).explain(
      ids.map((ticketId) => ({ ticketId, code: 'NOT_ENOUGH_PLAYERS', message: 'waiting' })),
      new Date(),
    );
    const dataSource = context.get(DataSource);
    const committer = context.get(MatchCommitter);
    const redis = testRedis();
    try {
      const explained = () =>
        redis.exists(...ids.map((id) => ticketExplanationKey(api.prefix, id)));
      // Everything is written, then the transaction rolls back: nothing registered runs.
      const rollsBack: CommitSession = {
        mode: 'duel',
        transaction: (work) =>
          runInTransaction(dataSource, async (manager, unit) => {
            await work(manager, unit);
            throw new Error('rolled back after the writes');
          }),
      };
      await expect(committer.commit(rollsBack, proposals, seen)).rejects.toThrow(
        'rolled back after the writes',
      );
      expect((await projection.candidates('duel')).map((c) => c.ticketId).sort()).toEqual(
        [...ids].sort(),
      );
      expect(await explained()).toBe(2);

      // The commit alone (no pass around it) leaves the pool and the explanations up to date.
      const commits: CommitSession = {
        mode: 'duel',
        transaction: (work) => runInTransaction(dataSource, work),
      };
      const outcome = await committer.commit(commits, proposals, seen);
      expect(outcome.committed).toHaveLength(1);
      expect(await projection.candidates('duel')).toEqual([]);
      expect(await explained()).toBe(0);
    } finally {
      redis.disconnect();
    }
  });

  it('runs a proposed rule set in shadow: both rule sets as metrics, only the active one committed', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mp-shadow-'));
    const file = path.join(dir, 'proposed.json');
    // Duel as 2 v 2: the two searching players make no match under it.
    writeFileSync(file, JSON.stringify({ QUEUE_MODES: 'duel:2x2,squad:4x2' }));
    try {
      const { context, loop } = await startMatcher({}, { MATCHER_SHADOW_RULES_FILE: file });
      const a = await queued('duel');
      const b = await queued('duel');
      const report = await loop.passNow('duel');
      expect(report?.committed).toHaveLength(1);
      const metrics = await context.get(MetricsRegistry).metrics();
      expect(metrics).toContain(
        'matcher_shadow_matches_total{mode="duel",rule_set="active",app="matcher"} 1',
      );
      expect(metrics).toContain(
        'matcher_shadow_matches_total{mode="duel",rule_set="proposed",app="matcher"} 0',
      );
      expect(metrics).toContain(
        'matcher_shadow_players_matched_total{mode="duel",rule_set="active",app="matcher"} 2',
      );
      // The proposed rule set's pass committed nothing: one match holds both tickets.
      expect(
        await api.ds.query(
          `SELECT DISTINCT match_id FROM match_participants WHERE ticket_id = ANY($1::uuid[])`,
          [[a.ticket.id, b.ticket.id]],
        ),
      ).toEqual([{ match_id: report!.committed[0]!.matchId }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start with a shadow rule set the matcher would refuse, naming the variable', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mp-shadow-'));
    const file = path.join(dir, 'narrowing.json');
    writeFileSync(file, JSON.stringify({ MATCH_WIDENING: '0:100:100,1000:50:100' }));
    try {
      await expect(startMatcher({}, { MATCHER_SHADOW_RULES_FILE: file })).rejects.toThrow(
        /MATCHER_SHADOW_RULES_FILE .*MATCH_WIDENING/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('skips a ticket cancelled between the read and the commit and leaves its partner for the next pass', async () => {
    const { context, loop } = await startMatcher();
    const a = await queued('duel');
    const b = await queued('duel');
    const hold = holdNextCommit(context);
    const pass = loop.passNow('duel');
    await hold.waiting;
    const cancel = await api.request('DELETE', `/v1/queue/tickets/${b.ticket.id}`, {
      token: b.token,
      idempotencyKey: randomUUID(),
    });
    expect(cancel.statusCode).toBe(200);
    hold.release();
    const report = await pass;
    expect(report?.committed).toEqual([]);
    expect(report?.dropped).toEqual([
      expect.objectContaining({ reason: 'ticket_unavailable', ticketId: b.ticket.id }),
    ]);
    expect((await ticketOf(a.token, a.ticket.id)).state).toBe('SEARCHING');
    expect(
      await api.ds.query(`SELECT 1 FROM match_participants WHERE ticket_id = ANY($1::uuid[])`, [
        [a.ticket.id, b.ticket.id],
      ]),
    ).toEqual([]);

    const c = await queued('duel');
    const next = await loop.passNow('duel');
    expect(next?.committed).toHaveLength(1);
    expect((await ticketOf(a.token, a.ticket.id)).state).toBe('MATCHED');
    expect((await ticketOf(c.token, c.ticket.id)).state).toBe('MATCHED');
    expect((await ticketOf(b.token, b.ticket.id)).state).toBe('CANCELLED');
  });

  it('drops a match whose member changed before the commit: its new RTT exceeds the limit the match was formed under', async () => {
    const { context, loop } = await startMatcher();
    const a = await queued('duel');
    const b = await queued('duel');
    const hold = holdNextCommit(context);
    const pass = loop.passNow('duel');
    await hold.waiting;
    // Slow probe answers: the median of the kept samples becomes ~500 ms, over step 0's 400 ms.
    for (let sample = 0; sample < 3; sample += 1) {
      const challenge = await api.request('POST', '/v1/probes/eu-west/challenge', {
        token: b.token,
      });
      const { challengeId, nonce } = challenge.json<ProbeChallengeResponse>();
      await sleep(500);
      const answer = await api.request('POST', '/v1/probes/eu-west/answer', {
        token: b.token,
        body: { challengeId, nonce },
      });
      expect(answer.statusCode).toBe(200);
    }
    expect((await ticketOf(b.token, b.ticket.id)).predictedRttMs['eu-west']).toBeGreaterThan(400);
    hold.release();
    const report = await pass;
    expect(report?.committed).toEqual([]);
    expect(report?.dropped).toEqual([
      expect.objectContaining({ reason: 'ticket_changed', ticketId: b.ticket.id }),
    ]);
    expect((await ticketOf(a.token, a.ticket.id)).state).toBe('SEARCHING');
    expect((await ticketOf(b.token, b.ticket.id)).state).toBe('SEARCHING');
  });

  it('rematches requeued tickets (allocation failed) with their original enqueue time, ahead of younger tickets', async () => {
    const { context, loop } = await startMatcher();
    const a = await queued('duel');
    const b = await queued('duel');
    const first = await loop.passNow('duel');
    const failedMatchId = first!.committed[0]!.matchId;

    await context
      .get(MatchLifecycle, { strict: false })
      .failNow(failedMatchId, 'ALLOCATION_FAILED');
    expect((await ticketOf(a.token, a.ticket.id)).state).toBe('SEARCHING');
    const younger = await queued('duel');

    const second = await loop.passNow('duel');
    expect(second?.committed).toHaveLength(1);
    const rematch = second!.committed[0]!;
    expect(rematch.matchId).not.toBe(failedMatchId);
    expect(rematch.tickets.map((t) => t.id).sort()).toEqual([a.ticket.id, b.ticket.id].sort());
    for (const player of [a, b]) {
      const ticket = await ticketOf(player.token, player.ticket.id);
      expect(ticket).toMatchObject({
        state: 'MATCHED',
        matchId: rematch.matchId,
        enqueuedAt: player.ticket.enqueuedAt,
      });
    }
    expect((await ticketOf(younger.token, younger.ticket.id)).state).toBe('SEARCHING');
    // The failed match keeps its roster; each ticket is in one live match.
    const rows = await api.ds.query<{ ticket_id: string; state: string }[]>(
      `SELECT p.ticket_id, m.state FROM match_participants p JOIN matches m ON m.id = p.match_id
        WHERE p.ticket_id = ANY($1::uuid[]) ORDER BY m.state, p.ticket_id`,
      [[a.ticket.id, b.ticket.id]],
    );
    expect(rows.map((row) => row.state)).toEqual(['ALLOCATING', 'ALLOCATING', 'FAILED', 'FAILED']);
  });

  describe('binding the matching function', () => {
    @Injectable()
    class StudioPolicy {
      readonly calls: number[] = [];
      /** Holds every match back (say, a tournament not open yet) and says so. */
      wrap(inner: MatchingFunction): MatchingFunction {
        return (candidates, rules, now) => {
          this.calls.push(candidates.length);
          const formation = inner(candidates, rules, now);
          return {
            matches: [],
            unmatched: [
              ...formation.unmatched,
              ...formation.matches.flatMap((match) =>
                match.participants.map((p) => ({
                  ticketId: p.ticketId,
                  reason: {
                    code: 'INVALID_CANDIDATE' as const,
                    message: 'held by the studio policy',
                    details: { problems: [] },
                  },
                })),
              ),
            ],
          };
        };
      }
    }
    @Module({ providers: [StudioPolicy], exports: [StudioPolicy] })
    class StudioModule {}

    it("runs a studio's policy built from its own module's providers (forRoot imports + factory)", async () => {
      const { context, loop } = await startMatcher({
        imports: [StudioModule],
        matchingFunction: {
          inject: [StudioPolicy],
          useFactory: (policy: StudioPolicy) => policy.wrap(formMatches),
        },
      });
      const a = await queued('duel');
      await queued('duel');
      const report = await loop.passNow('duel');
      expect(report?.committed).toEqual([]);
      expect(context.get(StudioPolicy, { strict: false }).calls).toEqual([2]);
      expect((await ticketOf(a.token, a.ticket.id)).explanation?.message).toBe(
        'held by the studio policy',
      );
    });

    it('runs a function bound by overriding the MATCHING_FUNCTION provider, and screens what it proposes', async () => {
      const seen: number[] = [];
      // Proposes every match twice, as a buggy policy might: the copy must never be committed.
      const twice: MatchingFunction = (candidates, rules, now) => {
        seen.push(candidates.length);
        const formation = formMatches(candidates, rules, now);
        return { ...formation, matches: [...formation.matches, ...formation.matches] };
      };
      const moduleRef = await Test.createTestingModule({
        imports: [MatcherModule.forRoot(await matcherConfig(), { schedule: 'manual' })],
      })
        .overrideProvider(MATCHING_FUNCTION)
        .useValue(twice)
        .compile();
      moduleRef.useLogger(false);
      await moduleRef.init();
      contexts.push(moduleRef);
      const a = await queued('duel');
      const b = await queued('duel');
      const report = await moduleRef.get(MatcherLoop).passNow('duel');
      expect(seen).toEqual([2]);
      expect(report).toMatchObject({ proposed: 2, rejected: 1 });
      expect(report?.committed).toHaveLength(1);
      expect(
        await api.ds.query(
          `SELECT DISTINCT match_id FROM match_participants WHERE ticket_id = ANY($1::uuid[])`,
          [[a.ticket.id, b.ticket.id]],
        ),
      ).toEqual([{ match_id: report!.committed[0]!.matchId }]);
    });
  });
});
