import { randomUUID } from 'node:crypto';
import type { TicketResponse } from '@matchplane/contracts';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { RoundTrips } from '../support/round-trips';

/**
 * What a heartbeat costs in round trips, counted at the drivers (load-independent): the figure
 * the player API's throughput rests on. A session looked up once is cached on its replica; heartbeats
 * arriving together share the Redis pipeline (the liveness store), or on PostgreSQL's path the
 * transaction.
 */
describe.each([
  ['the liveness store', 'true'],
  ['PostgreSQL', 'false'],
])('Player API round trips per heartbeat through %s', (_path, livenessInRedis) => {
  const inRedis = livenessInRedis === 'true';
  let api: PlayerApi;
  beforeAll(async () => {
    // The abuse limits are off here: they add one Redis count per limit to every request (tested
    // in test/e2e/api-abuse-limits.spec.ts), and while each request awaits its own count, requests
    // that would have arrived together reach the batcher in different turns. This measures the
    // heartbeat path itself.
    api = await startPlayerApi({
      API_RATE_LIMIT_REQUESTS_PER_SESSION: '0',
      API_RATE_LIMIT_REQUESTS_PER_ADDRESS: '0',
      TICKET_LIVENESS_IN_REDIS: livenessInRedis,
    });
  });
  afterAll(() => api.close());

  const queued = async () => {
    const player = await api.newPlayer();
    expect((await api.probe(player.token, 'eu-west')).statusCode).toBe(200);
    const ticket = (await api.enqueue(player.token, 'duel')).json<TicketResponse>();
    return { token: player.token, ticketId: ticket.id };
  };
  const heartbeat = (player: { token: string; ticketId: string }) =>
    api.request('POST', `/v1/queue/tickets/${player.ticketId}/heartbeat`, {
      token: player.token,
      idempotencyKey: randomUUID(),
    });
  // No session lookup: each player's session was looked up by its enqueue on this replica and is
  // cached (SessionCache). Then update the tickets and insert the keys with their answers (every
  // key is new). The SET LOCAL (HEARTBEAT_SYNCHRONOUS_COMMIT=false) goes out in one write with
  // START TRANSACTION and the update (DATABASE_PIPELINING), as the keys go with the COMMIT: two
  // round trips for the transaction.
  // Through the liveness store: no statement at all, no row changed.
  // The first heartbeat after Redis starts (or SCRIPT FLUSH) finds the liveness script missing
  // and sends it once (EVAL after EVALSHA's NOSCRIPT); these tests count the steady state, so one
  // heartbeat goes first, outside any recording.
  beforeAll(async () => {
    expect((await heartbeat(await queued())).statusCode).toBe(200);
  });
  const ONE_HEARTBEAT_BATCH = inRedis
    ? []
    : ['START TRANSACTION', 'SET LOCAL synchronous_commit = off', 'UPDATE', 'INSERT', 'COMMIT'];
  // The wait estimate in each answer is re-read from Redis (one LRANGE) at most every two seconds
  // per mode and region, whatever the traffic (queue-wait.estimates.ts): a 2 s tick may land inside
  // a recording, so it is counted apart from the heartbeat's own commands.
  const ESTIMATE_READ = 'lrange';
  const heartbeatCommands = (commands: readonly string[]) =>
    commands.filter((command) => command !== ESTIMATE_READ);
  const estimateReads = (commands: readonly string[]) =>
    commands.filter((command) => command === ESTIMATE_READ).length;
  const kinds = (statements: readonly string[]) =>
    statements.map(
      (statement) =>
        /^(WITH|SELECT|INSERT|UPDATE|DELETE|START TRANSACTION|COMMIT)\b/.exec(statement)?.[1] ??
        statement,
    );

  it('a lone heartbeat of a cached session: one Redis call (or one transaction of two statements and its SET LOCAL)', async () => {
    const player = await queued();
    const recorder = RoundTrips.start();
    expect((await heartbeat(player)).statusCode).toBe(200);
    const sent = recorder.stop();
    expect(kinds(sent.statements)).toEqual(ONE_HEARTBEAT_BATCH);
    expect(heartbeatCommands(sent.redisCommands)).toEqual(['evalsha']);
    expect(estimateReads(sent.redisCommands)).toBeLessThanOrEqual(1);
  });

  it('twenty heartbeats arriving together cost what one does', async () => {
    const players = await Promise.all(Array.from({ length: 20 }, queued));
    const recorder = RoundTrips.start();
    const answers = await Promise.all(players.map(heartbeat));
    const sent = recorder.stop();
    expect(answers.every((answer) => answer.statusCode === 200)).toBe(true);
    expect(kinds(sent.statements)).toEqual(ONE_HEARTBEAT_BATCH);
    // One pipeline (a single write) of twenty script calls: the beats, or the projection updates.
    expect(heartbeatCommands(sent.redisCommands)).toEqual(
      Array.from({ length: 20 }, () => 'evalsha'),
    );
    expect(estimateReads(sent.redisCommands)).toBeLessThanOrEqual(1);
  });
});
