import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { loadConfig } from '@matchplane/config';
import { MatcherConfig } from '../../apps/matcher/src/matcher.config';
import type { TicketResponse } from '@matchplane/contracts';
import { formMatches, type MatchCandidate, type MatchingFunction } from '@matchplane/domain';
import { runInTransaction } from '@matchplane/persistence';
import { MetricsRegistry } from '@matchplane/observability';
import { CandidateProjection } from '@matchplane/tickets';
import { MatchCommitter } from '../../apps/matcher/src/match-committer';
import { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { MatcherModule, type MatcherModuleOptions } from '../../apps/matcher/src/matcher.module';
import { MATCHER_LOCK_CLASS, type CommitSession } from '../../apps/matcher/src/mode-lease';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { freePort, waitFor } from '../support/processes';

const REGIONS = ['eu-west', 'us-east', 'us-west', 'ap-southeast'];
const TEAMS: Record<string, { teamSize: number; teamCount: number }> = {
  duel: { teamSize: 1, teamCount: 2 },
  squad: { teamSize: 4, teamCount: 2 },
};

/*
 * Several matcher replicas over one pool of real tickets (created, heartbeaten and cancelled
 * through the player routes while the passes run): whoever holds a mode's lease, and however often
 * it changes hands, no ticket lands in two matches and nothing a player cancelled is matched.
 * Each replica is its own Nest application context with its own DataSource and Redis connection.
 */
describe(`${MatcherLoop.name} replicas`, () => {
  let api: PlayerApi;
  const contexts: INestApplicationContext[] = [];

  beforeAll(async () => {
    api = await startPlayerApi();
  });
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()));
  });
  afterAll(() => api.close());

  async function startMatcher(
    options: MatcherModuleOptions = {},
    env: Record<string, string> = {},
  ) {
    const config = loadConfig(MatcherConfig, {
      ...api.db.env,
      REDIS_KEY_PREFIX: api.prefix,
      LOG_LEVEL: 'silent',
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: String(await freePort()),
      DATABASE_POOL_SIZE: '4',
      MATCHER_PASS_INTERVAL_MS: '50',
      MATCHER_COMMIT_BATCH: '3',
      // In process every probe is ~1 ms, but a loaded machine can stretch one past a tight limit.
      MATCH_WIDENING: '0:400:100',
      ...env,
    });
    const context = await NestFactory.createApplicationContext(
      MatcherModule.forRoot(config, options),
      {
        logger: false,
        abortOnError: false,
      },
    );
    contexts.push(context);
    return { context, loop: context.get(MatcherLoop), dataSource: context.get(DataSource) };
  }

  interface Queued {
    token: string;
    ticket: TicketResponse;
    regions: string[];
  }

  async function queued(mode: string, regions: readonly string[]): Promise<Queued> {
    const player = await api.newPlayer();
    for (const region of regions)
      expect((await api.probe(player.token, region)).statusCode).toBe(200);
    const response = await api.enqueue(player.token, mode);
    expect(response.statusCode).toBe(201);
    return { token: player.token, ticket: response.json<TicketResponse>(), regions: [...regions] };
  }

  async function leaseLosses(context: INestApplicationContext, mode: string): Promise<number> {
    const metric = await context
      .get(MetricsRegistry)
      .getSingleMetric('matcher_lease_losses_total')
      ?.get();
    return metric?.values.find((v) => v.labels.mode === mode)?.value ?? 0;
  }

  const leaseHolders = () =>
    api.ds.query<{ pid: number }[]>(
      // This file's database only: terminating another suite's lease holder would break it.
      `SELECT pid FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND classid = $1::oid AND objsubid = 2
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [MATCHER_LOCK_CLASS],
    );

  it('never puts a ticket in two matches nor matches a cancelled one, with passes, takeovers, cancels and heartbeats interleaved', async () => {
    await startMatcher();
    await startMatcher();
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pickRegions = () => {
      const first = REGIONS[Math.floor(random() * REGIONS.length)]!;
      const second = REGIONS[Math.floor(random() * REGIONS.length)]!;
      return random() < 0.5 ? [first] : [...new Set([first, second])];
    };

    const all: Queued[] = [];
    const cancelled = new Set<string>();
    const notCancellable = new Set<string>();
    let stop = false;
    // Players queue, heartbeat and cancel through the routes while both replicas pass.
    const players = (async () => {
      for (let i = 0; i < 120; i += 1) {
        all.push(await queued(random() < 0.6 ? 'duel' : 'squad', pickRegions()));
        const target = all[Math.floor(random() * all.length)]!;
        const roll = random();
        if (roll < 0.3) {
          const response = await api.request('DELETE', `/v1/queue/tickets/${target.ticket.id}`, {
            token: target.token,
            idempotencyKey: randomUUID(),
          });
          if (response.statusCode === 200) cancelled.add(target.ticket.id);
          else if (response.json<{ code: string }>().code === 'TICKET_NOT_CANCELLABLE') {
            notCancellable.add(target.ticket.id);
          }
        } else if (roll < 0.7) {
          await api.request('POST', `/v1/queue/tickets/${target.ticket.id}/heartbeat`, {
            token: target.token,
            idempotencyKey: randomUUID(),
          });
        }
      }
    })().finally(() => (stop = true));
    // The lease changes hands over and over, in the middle of passes and commits.
    let takeovers = 0;
    const chaos = (async () => {
      while (!stop) {
        await sleep(40 + Math.floor(random() * 80));
        const [holder] = await leaseHolders();
        if (holder) {
          await api.ds.query(`SELECT pg_terminate_backend($1)`, [holder.pid]);
          takeovers += 1;
        }
      }
    })();
    await Promise.all([players, chaos]);
    // Let the replicas settle on what is left.
    await waitFor(
      async () => {
        const [row] = await api.ds.query<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM queue_tickets t
            WHERE t.state = 'SEARCHING' AND t.mode = 'duel'
              AND EXISTS (SELECT 1 FROM queue_tickets o WHERE o.id <> t.id AND o.state = 'SEARCHING' AND o.mode = 'duel'
                           AND o.predicted_rtt ?| ARRAY(SELECT jsonb_object_keys(t.predicted_rtt)))`,
        );
        return row?.n === 0 ? true : undefined;
      },
      { timeoutMs: 20_000, what: 'every duel ticket with a partner to be matched' },
    );

    const ids = all.map((q) => q.ticket.id);
    expect(takeovers).toBeGreaterThan(3);
    // Cancels raced the matcher: won (cancelled) or lost (already matched) — how many of each
    // depends on the machine's load, but both kinds must have happened often enough.
    expect(cancelled.size).toBeGreaterThan(0);
    expect(cancelled.size + notCancellable.size).toBeGreaterThan(5);

    // No ticket in two matches.
    expect(
      await api.ds.query(
        `SELECT ticket_id FROM match_participants WHERE ticket_id = ANY($1::uuid[]) GROUP BY ticket_id HAVING count(*) > 1`,
        [ids],
      ),
    ).toEqual([]);
    // Every MATCHED ticket's match lists it, and every listed ticket is MATCHED into that match.
    const tickets = await api.ds.query<
      { id: string; state: string; match_id: string | null; listed_in: string | null }[]
    >(
      `SELECT t.id, t.state, t.match_id, p.match_id AS listed_in
         FROM queue_tickets t LEFT JOIN match_participants p ON p.ticket_id = t.id
        WHERE t.id = ANY($1::uuid[])`,
      [ids],
    );
    const matched = tickets.filter((t) => t.state === 'MATCHED');
    expect(matched.length).toBeGreaterThan(20);
    for (const ticket of tickets) {
      if (ticket.state === 'MATCHED') expect(ticket.listed_in).toBe(ticket.match_id);
      else expect(ticket.listed_in).toBeNull();
    }
    // Nothing a player cancelled was matched; a refused cancel was refused because of a match.
    for (const id of cancelled) expect(tickets.find((t) => t.id === id)?.state).toBe('CANCELLED');
    for (const id of notCancellable)
      expect(tickets.find((t) => t.id === id)?.state).toBe('MATCHED');

    // Every match: region measured by all its participants, exact team sizes, one event to all.
    const matches = await api.ds.query<
      {
        id: string;
        mode: string;
        region: string;
        revision: string;
        state: string;
        teams: number[];
        measured: boolean[];
        players: string[];
      }[]
    >(
      `SELECT m.id, m.mode, m.region, m.revision, m.state,
              array_agg(p.team ORDER BY p.team) AS teams,
              array_agg(t.predicted_rtt ? m.region) AS measured,
              array_agg(p.player_id::text ORDER BY p.player_id) AS players
         FROM matches m JOIN match_participants p ON p.match_id = m.id JOIN queue_tickets t ON t.id = p.ticket_id
        WHERE t.id = ANY($1::uuid[]) GROUP BY m.id`,
      [ids],
    );
    expect(matches.length).toBeGreaterThan(10);
    for (const match of matches) {
      const { teamSize, teamCount } = TEAMS[match.mode]!;
      expect(match.teams).toEqual(
        Array.from({ length: teamCount * teamSize }, (_, i) => Math.floor(i / teamSize)),
      );
      expect(match.measured.every(Boolean)).toBe(true);
      expect([match.state, match.revision]).toEqual(['ALLOCATING', '1']);
      const [event] = await api.ds.query<{ player_ids: string[] }[]>(
        `SELECT player_ids FROM outbox WHERE aggregate_id = $1 AND revision = 1`,
        [match.id],
      );
      expect([...(event?.player_ids ?? [])].sort()).toEqual(match.players);
    }
    // And the pool no longer offers what was matched or cancelled.
    const projection = api.app.get(CandidateProjection);
    const pooled = new Set([
      ...(await projection.candidates('duel')).map((c) => c.ticketId),
      ...(await projection.candidates('squad')).map((c) => c.ticketId),
    ]);
    for (const ticket of tickets)
      if (ticket.state !== 'SEARCHING') expect(pooled.has(ticket.id)).toBe(false);
  });

  it('commits nothing from a pass whose lease was taken over before it committed', async () => {
    const a = await startMatcher({ schedule: 'manual' });
    // The replica that takes over proposes nothing, so only fencing can keep A's pass out.
    const none: MatchingFunction = (candidates) => ({
      matches: [],
      unmatched: candidates.map((c) => ({
        ticketId: c.ticketId,
        reason: { code: 'INVALID_CANDIDATE', message: 'standby', details: { problems: [] } },
      })),
    });
    const b = await startMatcher({ matchingFunction: none, schedule: 'manual' });
    const x = await queued('duel', ['eu-west']);
    const y = await queued('duel', ['eu-west']);

    const committer = a.context.get(MatchCommitter);
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
    const pass = a.loop.passNow('duel');
    await waiting;
    const pid = a.loop.lease('duel').backendPid;
    expect(pid).toBeDefined();
    // The holder's session ends (a partition, a crash of its connection); B takes the lease.
    await api.ds.query(`SELECT pg_terminate_backend($1)`, [pid]);
    await waitFor(async () => ((await b.loop.passNow('duel')) ? true : undefined), {
      what: 'B to take the lease',
    });
    expect(b.loop.lease('duel').held).toBe(true);

    release();
    const report = await pass;
    expect(report?.aborted).toBe('lease lost');
    expect(report?.committed).toEqual([]);
    // The loss is what the MatcherLeaseLost alert (docker/prometheus/alerts.yml) watches.
    expect(await leaseLosses(a.context, 'duel')).toBe(1);
    expect(await leaseLosses(b.context, 'duel')).toBe(0);
    const rows = await api.ds.query<{ state: string }[]>(
      `SELECT state FROM queue_tickets WHERE id = ANY($1::uuid[])`,
      [[x.ticket.id, y.ticket.id]],
    );
    expect(rows.map((r) => r.state)).toEqual(['SEARCHING', 'SEARCHING']);
    expect(
      await api.ds.query(`SELECT 1 FROM match_participants WHERE ticket_id = ANY($1::uuid[])`, [
        [x.ticket.id, y.ticket.id],
      ]),
    ).toEqual([]);
  });

  it('lets two committers racing over overlapping proposals (no lease at all) put each ticket in one match at most', async () => {
    const first = await startMatcher({ schedule: 'manual' });
    const second = await startMatcher({ schedule: 'manual' });
    const pool: Queued[] = [];
    for (let i = 0; i < 16; i += 1) pool.push(await queued('duel', ['eu-west']));
    const candidates = (await api.app.get(CandidateProjection).candidates('duel'))
      .filter((c) => pool.some((q) => q.ticket.id === c.ticketId))
      .map((c): MatchCandidate => ({
        ticketId: c.ticketId,
        playerId: c.playerId,
        mode: c.mode,
        rating: c.rating,
        predictedRtt: c.predictedRtt as Record<string, number>,
        enqueuedAt: c.enqueuedAt,
      }));
    expect(candidates).toHaveLength(16);
    const seen = new Map(candidates.map((c) => [c.ticketId, c]));
    // Pairs (0,1),(2,3)... for one, (1,2),(3,4)... for the other: every ticket wanted twice.
    const pairs = (offset: number) => {
      const rotated = [...candidates.slice(offset), ...candidates.slice(0, offset)];
      const matches = [];
      for (let i = 0; i + 1 < rotated.length; i += 2) {
        matches.push(
          ...formMatches(
            [rotated[i]!, rotated[i + 1]!],
            [
              {
                mode: 'duel',
                teamSize: 1,
                teamCount: 2,
                widening: [{ afterMs: 0, maxRttMs: 500, ratingWindow: Infinity }],
              },
            ],
            new Date(),
          ).matches,
        );
      }
      return matches;
    };
    const session = (dataSource: DataSource): CommitSession => ({
      mode: 'duel',
      transaction: (work) => runInTransaction(dataSource, work),
    });
    const outcomes = await Promise.all([
      first.context.get(MatchCommitter).commit(session(first.dataSource), pairs(0), seen),
      second.context.get(MatchCommitter).commit(session(second.dataSource), pairs(1), seen),
    ]);
    const committed = outcomes.flatMap((o) => o.committed);
    expect(committed.length).toBeGreaterThan(0);
    const ticketIds = committed.flatMap((match) => match.tickets.map((t) => t.id));
    expect(new Set(ticketIds).size).toBe(ticketIds.length);
    const listed = await api.ds.query<{ ticket_id: string; n: number }[]>(
      `SELECT ticket_id, count(*)::int AS n FROM match_participants WHERE ticket_id = ANY($1::uuid[]) GROUP BY ticket_id`,
      [pool.map((q) => q.ticket.id)],
    );
    expect(listed.every((row) => row.n === 1)).toBe(true);
    expect(listed).toHaveLength(ticketIds.length);
  });
});
