import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import type { TicketResponse } from '@matchplane/contracts';
import { MetricsRegistry } from '@matchplane/observability';
import { DataSource } from 'typeorm';
import { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { ModeLease, MATCHER_LOCK_CLASS } from '../../apps/matcher/src/mode-lease';
import { MATCHER_SHARD_PLAN, type MatcherShardPlan } from '@matchplane/config';
import { cancelQueued, startInProcessMatcher } from '../support/in-process-matcher';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { waitFor } from '../support/processes';

const PLATFORMS = ['pc', 'ps', 'xbox', 'switch'];
const QUEUE_MODE_ATTRIBUTES = JSON.stringify({
  duel: {
    attributes: { platform: { type: 'string', values: PLATFORMS } },
    rules: [{ equal: 'platform' }],
  },
});
const MATCHER_SHARDS = JSON.stringify({ duel: { attribute: 'platform' } });

interface Queued {
  token: string;
  ticket: TicketResponse;
}

/*
 * Issue 35 item 1: a mode split into shards by an equal-rule attribute, a lease per shard, and
 * matchers sharing the shards fairly. The players queue through the real routes; the matchers are
 * the real module graph in process (the e2e suite kills real processes).
 */
describe(`${MatcherLoop.name} shards`, () => {
  let api: PlayerApi;
  const contexts: INestApplicationContext[] = [];
  const queued: Queued[] = [];

  beforeAll(async () => {
    // The API indexes each candidate under its shard, so it reads MATCHER_SHARDS too.
    api = await startPlayerApi({ QUEUE_MODE_ATTRIBUTES, MATCHER_SHARDS });
  });
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()));
    await cancelQueued(api, queued);
  });
  afterAll(() => api.close());

  async function matcher(
    schedule: 'manual' | 'scheduled' = 'manual',
    env: Record<string, string> = {
      MATCHER_SHARDS,
      // Five leases (four duel shards, squad whole), the presence and the passes' reads.
      DATABASE_POOL_SIZE: '8',
    },
  ) {
    const started = await startInProcessMatcher(
      api,
      { QUEUE_MODE_ATTRIBUTES, MATCHER_PASS_INTERVAL_MS: '50', ...env },
      { schedule },
    );
    contexts.push(started.context);
    return started;
  }

  /** A player through the real routes: session, a probe of each region, a ticket. */
  async function queue(
    mode: string,
    attributes: Record<string, string> = {},
    regions = ['eu-west'],
  ): Promise<Queued> {
    const session = await api.newPlayer();
    for (const region of regions)
      expect((await api.probe(session.token, region)).statusCode).toBe(200);
    const created = await api.request('POST', '/v1/queue/tickets', {
      token: session.token,
      body: { mode, attributes },
      idempotencyKey: randomUUID(),
    });
    expect(created.statusCode).toBe(201);
    const entry = { token: session.token, ticket: created.json<TicketResponse>() };
    queued.push(entry);
    return entry;
  }

  const player = (platform: string) => queue('duel', { platform });

  async function squad(regions?: string[]): Promise<Queued[]> {
    const players: Queued[] = [];
    for (let i = 0; i < 8; i += 1) players.push(await queue('squad', {}, regions));
    return players;
  }

  const states = async (players: readonly Queued[]) =>
    (
      await api.ds.query<{ id: string; state: string }[]>(
        `SELECT id, state FROM queue_tickets WHERE id = ANY($1::uuid[])`,
        [players.map((p) => p.ticket.id)],
      )
    )
      .sort(
        (a, b) =>
          players.findIndex((p) => p.ticket.id === a.id) -
          players.findIndex((p) => p.ticket.id === b.id),
      )
      .map((row) => row.state);

  const shardHeld = async (context: INestApplicationContext) => {
    const metric = await context.get(MetricsRegistry).getSingleMetric('matcher_shard_held')?.get();
    return Object.fromEntries(
      (metric?.values ?? [])
        .filter((value) => value.labels.mode === 'duel')
        .map((value) => [String(value.labels.shard), value.value]),
    );
  };

  const candidatesRead = async (context: INestApplicationContext) => {
    const metric = context.get(MetricsRegistry).getSingleMetric('matcher_candidates_read_total');
    return Object.fromEntries(
      ((await metric?.get())?.values ?? [])
        .filter((value) => value.labels.mode === 'duel')
        .map((value) => [String(value.labels.shard), value.value]),
    );
  };

  it('holds a lease per shard: one holder per (mode, shard), shards of one mode held apart', async () => {
    const { context } = await matcher();
    const shards = context.get<MatcherShardPlan>(MATCHER_SHARD_PLAN).get('duel') ?? [];
    const dataSource = context.get(DataSource);
    const [pc, ps] = shards;
    const first = new ModeLease(dataSource, pc!);
    const rival = new ModeLease(api.ds, pc!);
    const other = new ModeLease(api.ds, ps!);
    try {
      expect(await first.tryAcquire()).toBe(true);
      expect(await rival.tryAcquire()).toBe(false);
      expect(await other.tryAcquire()).toBe(true);
      const locks = await api.ds.query<{ pid: number }[]>(
        // This test's database only: other suites' matchers lock the same keys in theirs.
        `SELECT pid FROM pg_locks
          WHERE locktype = 'advisory' AND granted AND classid = $1::oid AND objsubid = 2
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [MATCHER_LOCK_CLASS],
      );
      expect(locks.map((l) => l.pid).sort()).toEqual([first.backendPid, other.backendPid].sort());
      // The holder's session ends: the shard is free for the rival, the other shard untouched.
      await api.ds.query(`SELECT pg_terminate_backend($1)`, [first.backendPid]);
      await waitFor(async () => ((await rival.tryAcquire()) ? true : undefined), {
        what: 'the rival to take the shard',
      });
      expect(other.held).toBe(true);
    } finally {
      await Promise.all([first.release(), rival.release(), other.release()]);
    }
  });

  it("matches a shard's pass only among that shard's tickets", async () => {
    const { loop, context } = await matcher();
    const pcs = [await player('pc'), await player('pc')];
    const consoles = [await player('ps'), await player('ps')];
    expect(() => loop.lease('duel')).toThrow(/duel is sharded: name the shard/);

    const report = await loop.passNow('duel', 'pc');
    // It read the pc shard's set alone, not the mode's four candidates.
    expect(report).toMatchObject({ shard: 'pc', read: 2, candidates: 2, matchable: 2 });
    expect(await candidatesRead(context)).toEqual({ pc: 2 });
    expect(report?.committed).toHaveLength(1);
    expect(await states([...pcs, ...consoles])).toEqual([
      'MATCHED',
      'MATCHED',
      'SEARCHING',
      'SEARCHING',
    ]);
    expect((await loop.passNow('duel', 'ps'))?.committed).toHaveLength(1);
    expect(await states(consoles)).toEqual(['MATCHED', 'MATCHED']);
  });

  it('shares the shards fairly between two matchers, and the survivor takes all of them when one goes', async () => {
    const a = await matcher('scheduled');
    const b = await matcher('scheduled');
    const split = await waitFor(
      () => {
        const held = [a.loop.heldShards('duel'), b.loop.heldShards('duel')];
        return Promise.resolve(held[0]?.length === 2 && held[1]?.length === 2 ? held : undefined);
      },
      { what: 'each matcher to hold two of the four shards' },
    );
    expect(new Set(split.flat())).toEqual(new Set(PLATFORMS));
    expect(Object.values(await shardHeld(a.context)).reduce((x, y) => x + y, 0)).toBe(2);

    // Tickets of every platform are matched, whichever matcher holds their shard.
    const players: Queued[] = [];
    for (const platform of PLATFORMS) players.push(await player(platform), await player(platform));
    await waitFor(
      async () => ((await states(players)).every((s) => s === 'MATCHED') ? true : undefined),
      {
        what: 'every platform to be matched',
      },
    );

    await b.context.close();
    contexts.splice(contexts.indexOf(b.context), 1);
    await waitFor(() => Promise.resolve(a.loop.heldShards('duel').length === 4 || undefined), {
      what: 'the survivor to take every shard',
    });
    expect(await shardHeld(a.context)).toEqual({ pc: 1, ps: 1, xbox: 1, switch: 1 });
  });

  it('never lets its leases fill the pool: with room for one lease, it holds one mode and matches it', async () => {
    // Unsharded, two modes, three connections: a lease, the presence and the passes' reads.
    const { loop } = await matcher('scheduled', { DATABASE_POOL_SIZE: '3' });
    const duel = [await player('pc'), await player('pc')];
    const squads = await squad();
    const held = await waitFor(
      () => {
        const modes = ['duel', 'squad'].filter((mode) => loop.heldShards(mode).length > 0);
        return Promise.resolve(modes.length > 0 ? modes : undefined);
      },
      { what: 'the matcher to hold a mode' },
    );
    expect(held).toHaveLength(1);
    const matched = held[0] === 'duel' ? duel : squads;
    await waitFor(
      async () => ((await states(matched)).every((s) => s === 'MATCHED') ? true : undefined),
      { what: `the held mode's players to be matched` },
    );
    expect(['duel', 'squad'].filter((mode) => loop.heldShards(mode).length > 0)).toEqual(held);
  });

  it('lets two region-group shards racing over a ticket that measured both put it in one match only', async () => {
    const { loop } = await matcher('manual', {
      MATCHER_SHARDS: JSON.stringify({ squad: { regions: { eu: ['eu-west'], am: ['us-east'] } } }),
      DATABASE_POOL_SIZE: '6',
    });
    // Eight squad players who measured both groups' regions: each shard can form the match.
    const players = await squad(['eu-west', 'us-east']);
    const [eu, am] = await Promise.all([loop.passNow('squad', 'eu'), loop.passNow('squad', 'am')]);
    expect([eu?.matchable, am?.matchable]).toEqual([8, 8]);
    const committed = [...(eu?.committed ?? []), ...(am?.committed ?? [])];
    expect(committed).toHaveLength(1);
    expect(committed[0]?.proposal.region).toBe(eu?.committed.length ? 'eu-west' : 'us-east');
    expect(await states(players)).toEqual(Array(8).fill('MATCHED'));
    expect(
      await api.ds.query(
        `SELECT ticket_id FROM match_participants WHERE ticket_id = ANY($1::uuid[])
          GROUP BY ticket_id HAVING count(*) > 1`,
        [players.map((q) => q.ticket.id)],
      ),
    ).toEqual([]);
  });
});
