import { PlayerClient } from '@matchplane/sdk';
import type { DataSource } from 'typeorm';
import { shardLockKey, MATCHER_LOCK_CLASS } from '../../apps/matcher/src/mode-lease';
import { createTestDatabase, type TestDatabase } from '../support/database';
import {
  freePort,
  runApp,
  startApp,
  waitFor,
  waitForHttp,
  type RunningApp,
} from '../support/processes';
import { deleteRedisPrefix, testRedis, testRedisPrefix } from '../support/redis';

const PLATFORMS = ['pc', 'ps', 'xbox', 'switch'];
const PLAYERS_PER_PLATFORM = 40;
const OPERATOR_TOKEN = 'matcher-shards-token-0123456789abcdefghijk';
const SHARED_ENV = {
  QUEUE_MODE_ATTRIBUTES: JSON.stringify({
    duel: {
      attributes: { platform: { type: 'string', values: PLATFORMS } },
      rules: [{ equal: 'platform' }],
    },
  }),
  // The API indexes each candidate under its shard; the matchers read only their shards' sets.
  MATCHER_SHARDS: JSON.stringify({ duel: { attribute: 'platform' } }),
  // Nobody heartbeats here: the tickets must stay matchable for the whole test.
  TICKET_HEARTBEAT_INTERVAL_MS: '60000',
  TICKET_HEARTBEAT_TIMEOUT_MS: '600000',
};
const PASS_INTERVAL_MS = 100;
/**
 * How long a dead holder's lease can outlive it: PostgreSQL frees it when the session ends, at
 * once for a killed process (its kernel closes the socket), at worst after the lease session's
 * keepalives (10 s idle, then 3 probes 5 s apart) for a vanished host; then the survivor counts
 * the matchers and takes the shard within two pass intervals.
 */
const LEASE_BOUND_MS = 10_000 + 3 * 5_000 + 2 * PASS_INTERVAL_MS;

/*
 * Issue 35 item 1 through real processes: one API and two matcher processes share the duel
 * shards (one per platform, MATCHER_SHARDS). A burst of tickets is released at once; one matcher
 * is SIGKILLed while a commit of one of its shards is open. What production wrote must show no
 * ticket in two matches, every player matched with their own platform, and the survivor holding
 * every shard.
 */
describe('matcher shards shared by two matcher processes, one killed mid-pass', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const prefix = testRedisPrefix();
  const running: RunningApp[] = [];
  let apiUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
    const apiPort = await freePort();
    running.push(
      startApp('api', {
        ...db.env,
        ...SHARED_ENV,
        REDIS_KEY_PREFIX: prefix,
        DATABASE_POOL_SIZE: '4',
        API_PORT: String(apiPort),
        OPERATOR_TOKENS: `ops=${OPERATOR_TOKEN}`,
      }),
    );
    apiUrl = `http://127.0.0.1:${apiPort}`;
    await waitForHttp(`${apiUrl}/health`);
  });

  afterAll(async () => {
    await Promise.all(running.map((app) => app.stop('SIGKILL')));
    await db.drop();
    await deleteRedisPrefix(prefix);
  });

  async function startMatcher(): Promise<{ app: RunningApp; url: string }> {
    const port = await freePort();
    const app = startApp('matcher', {
      ...db.env,
      ...SHARED_ENV,
      REDIS_KEY_PREFIX: prefix,
      HEALTH_PORT: String(port),
      // Four duel shards and squad's whole mode, the presence and the passes' reads.
      DATABASE_POOL_SIZE: '8',
      MATCHER_PASS_INTERVAL_MS: String(PASS_INTERVAL_MS),
      // A commit per match, so a burst keeps each shard's lease session committing a while.
      MATCHER_COMMIT_BATCH: '1',
      MATCH_WIDENING: '0:400:100',
    });
    running.push(app);
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/health`);
    return { app, url };
  }

  /** The duel shards a matcher process reports holding (its matcher_shard_held gauge). */
  async function heldShards(url: string): Promise<string[]> {
    const text = await fetch(`${url}/metrics`).then((response) => response.text());
    return [...text.matchAll(/^matcher_shard_held\{([^}]*)\} 1$/gm)]
      .map((line) => line[1] ?? '')
      .filter((labels) => labels.includes('mode="duel"'))
      .map((labels) => /shard="([^"]+)"/.exec(labels)?.[1] ?? '')
      .sort();
  }

  async function operator(action: 'pause' | 'resume') {
    const response = await fetch(`${apiUrl}/v1/admin/queue-controls/mode/duel/${action}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'matcher shards e2e' }),
    });
    expect(response.status).toBe(200);
  }

  it('matches every player once, and the survivor takes the dead matcher’s shards within the lease’s bound', async () => {
    // Tickets first, held by a pause so that no pass matches them before both matchers run.
    const tickets = new Map<string, string>();
    for (const platform of PLATFORMS) {
      for (let i = 0; i < PLAYERS_PER_PLATFORM; i += 1) {
        const client = new PlayerClient({ baseUrl: apiUrl });
        await client.createSession();
        await client.probe('eu-west', { samples: 1 });
        tickets.set((await client.enqueue('duel', { attributes: { platform } })).id, platform);
      }
    }
    await operator('pause');

    const first = await startMatcher();
    const second = await startMatcher();
    const split = await waitFor(
      async () => {
        const held = [await heldShards(first.url), await heldShards(second.url)];
        return held[0]?.length === 2 && held[1]?.length === 2 ? held : undefined;
      },
      { what: 'each matcher to hold two of the four duel shards' },
    );
    expect(split.flat().sort()).toEqual([...PLATFORMS].sort());
    const [victimShards = []] = split;

    // Released at once: each shard's pass commits its 20 matches one transaction at a time.
    await operator('resume');
    const victimKeys = victimShards.map((shard) => shardLockKey('duel', shard) >>> 0);
    const caught = await waitFor(
      async () => {
        const [open] = await ds.query<{ pid: number }[]>(
          `SELECT a.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::oid AND l.objsubid = 2
              AND l.objid = ANY($2::oid[]) AND a.xact_start IS NOT NULL
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          [MATCHER_LOCK_CLASS, victimKeys],
        );
        return open;
      },
      { intervalMs: 5, what: 'a commit on one of the victim’s shard sessions' },
    );
    expect(caught.pid).toBeGreaterThan(0);
    expect(await first.app.stop('SIGKILL')).toBe('SIGKILL');

    const taken = await waitFor(
      async () => {
        const held = await heldShards(second.url);
        return held.length === PLATFORMS.length ? held : undefined;
      },
      { timeoutMs: LEASE_BOUND_MS, what: 'the survivor to hold every duel shard' },
    );
    expect(taken).toEqual([...PLATFORMS].sort());

    await waitFor(
      async () => {
        const [row] = await ds.query<{ searching: number }[]>(
          `SELECT count(*)::int AS searching FROM queue_tickets WHERE id = ANY($1::uuid[]) AND state <> 'MATCHED'`,
          [[...tickets.keys()]],
        );
        return row?.searching === 0 ? true : undefined;
      },
      { what: 'every player to be matched' },
    );
    // No ticket in two matches, and each match a pair of one platform.
    expect(
      await ds.query(
        `SELECT ticket_id FROM match_participants WHERE ticket_id = ANY($1::uuid[])
          GROUP BY ticket_id HAVING count(*) > 1`,
        [[...tickets.keys()]],
      ),
    ).toEqual([]);
    const matches = await ds.query<{ match_id: string; tickets: string[] }[]>(
      `SELECT match_id, array_agg(ticket_id::text) AS tickets FROM match_participants
        WHERE ticket_id = ANY($1::uuid[]) GROUP BY match_id`,
      [[...tickets.keys()]],
    );
    expect(matches).toHaveLength(tickets.size / 2);
    // Every shard's set of the candidate index emptied as its players were matched.
    const redis = testRedis();
    try {
      for (const set of [...PLATFORMS.map((p) => `shard:${p}`), 'unsharded'])
        expect(await redis.zcard(`${prefix}:candidates:duel:${set}`)).toBe(0);
    } finally {
      redis.disconnect();
    }
    for (const match of matches) {
      expect(match.tickets).toHaveLength(2);
      expect(new Set(match.tickets.map((id) => tickets.get(id))).size).toBe(1);
    }
    // Each matched ticket points at the one match listing it.
    const mismatched = await ds.query(
      `SELECT t.id FROM queue_tickets t JOIN match_participants p ON p.ticket_id = t.id
        WHERE t.id = ANY($1::uuid[]) AND t.match_id IS DISTINCT FROM p.match_id`,
      [[...tickets.keys()]],
    );
    expect(mismatched).toEqual([]);
  });

  it('refuses to start, in one line, on a shard key that is no equal rule of the mode', async () => {
    const { code, output } = await runApp('matcher', {
      ...db.env,
      ...SHARED_ENV,
      REDIS_KEY_PREFIX: prefix,
      MATCHER_SHARDS: JSON.stringify({ squad: { attribute: 'platform' } }),
    });
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      'matcher: Invalid configuration: MATCHER_SHARDS.squad.attribute must name an attribute of an "equal" rule of mode squad in QUEUE_MODE_ATTRIBUTES (it has none; got "platform")',
    ]);
  });
});
