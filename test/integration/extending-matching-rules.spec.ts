import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@matchplane/config';
import { MatcherConfig } from '../../apps/matcher/src/matcher.config';
import type { TicketResponse } from '@matchplane/contracts';
import { formMatches } from '@matchplane/domain';
import { CandidateProjection } from '@matchplane/tickets';
import { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { MatcherModule } from '../../apps/matcher/src/matcher.module';
import { MATCHER_RULES, type MatcherRules } from '../../apps/matcher/src/matching-function';
import {
  clanMatchingFunction,
  HELD_FOR_CLANMATE,
  StudioClans,
  StudioClansModule,
} from '../../apps/studio-example/src/studio-clans.module';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { freePort } from '../support/processes';

interface Queued {
  token: string;
  ticket: TicketResponse;
}

/** docs/EXTENDING.md "Your own matching rules": the example rule in the real matcher. */
describe('extending: a studio matching rule keeping clanmates apart', () => {
  let api: PlayerApi;
  let matcher: INestApplicationContext;
  let loop: MatcherLoop;
  let clans: StudioClans;
  const queued: Queued[] = [];

  beforeAll(async () => {
    api = await startPlayerApi();
    const config = loadConfig(MatcherConfig, {
      ...api.db.env,
      REDIS_KEY_PREFIX: api.prefix,
      LOG_LEVEL: 'silent',
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: String(await freePort()),
      DATABASE_POOL_SIZE: '4',
      // In process every probe is ~1 ms, but a loaded machine can stretch one past a tight limit.
      MATCH_WIDENING: '0:400:100,10000:1000:200',
    });
    matcher = await NestFactory.createApplicationContext(
      MatcherModule.forRoot(config, {
        imports: [StudioClansModule],
        matchingFunction: clanMatchingFunction,
        schedule: 'manual',
      }),
      { logger: false, abortOnError: false },
    );
    loop = matcher.get(MatcherLoop);
    clans = matcher.get(StudioClans, { strict: false });
  });

  afterEach(async () => {
    // Each test starts from an empty queue (a 409 for tickets already matched).
    for (const { token, ticket } of queued.splice(0)) {
      await api.request('DELETE', `/v1/queue/tickets/${ticket.id}`, {
        token,
        idempotencyKey: randomUUID(),
      });
    }
  });

  afterAll(async () => {
    await matcher?.close();
    await api?.close();
  });

  /** A player through the real routes (session, probe, ticket), in the given clan. */
  async function player(mode: string, clan?: string): Promise<Queued> {
    const session = await api.newPlayer();
    if (clan !== undefined) clans.join(session.playerId, clan);
    expect((await api.probe(session.token, 'eu-west')).statusCode).toBe(200);
    const created = await api.enqueue(session.token, mode);
    expect(created.statusCode).toBe(201);
    const entry = { token: session.token, ticket: created.json<TicketResponse>() };
    queued.push(entry);
    return entry;
  }

  const ticketOf = async ({ token, ticket }: Queued) =>
    (await api.request('GET', `/v1/queue/tickets/${ticket.id}`, { token })).json<TicketResponse>();

  const teamSizes = async (matchId: string) =>
    (
      await api.ds.query<{ team: number; size: number }[]>(
        `SELECT team, count(*)::int AS size FROM match_participants WHERE match_id = $1
          GROUP BY team ORDER BY team`,
        [matchId],
      )
    ).map((row) => row.size);

  it('pairs each clan member with someone outside the clan where formMatches alone would pair the two clanmates', async () => {
    const red1 = await player('duel', 'red');
    const red2 = await player('duel', 'red');
    const blue = await player('duel', 'blue');
    const loner = await player('duel');
    // The control: the default function over the same pool pairs the two clanmates.
    const pool = (await api.app.get(CandidateProjection).candidates('duel')).map((c) => ({
      ...c,
      predictedRtt: c.predictedRtt as Record<string, number>,
    }));
    const plain = formMatches(pool, matcher.get<MatcherRules>(MATCHER_RULES), new Date());
    expect(plain.matches[0]?.participants.map((p) => p.ticketId).sort()).toEqual(
      [red1.ticket.id, red2.ticket.id].sort(),
    );

    const report = await loop.passNow('duel');
    expect(report?.rejected).toBe(0);
    const pairs = report!.committed.map((match) => match.tickets.map((t) => t.id).sort());
    expect(pairs.sort()).toEqual(
      [[red1.ticket.id, blue.ticket.id].sort(), [red2.ticket.id, loner.ticket.id].sort()].sort(),
    );
    for (const match of report!.committed) expect(await teamSizes(match.matchId)).toEqual([1, 1]);
    for (const entry of [red1, red2, blue, loner]) {
      expect((await ticketOf(entry)).state).toBe('MATCHED');
    }
  });

  it('holds the younger clanmate back, even if that leaves a squad unfilled, and forms it with exact team sizes once another player comes', async () => {
    const elder = await player('squad', 'red');
    const younger = await player('squad', 'red');
    const others: Queued[] = [];
    for (let i = 0; i < 6; i += 1) others.push(await player('squad'));

    // Eight players, two of them clanmates: formMatches alone would form a squad of all eight.
    const first = await loop.passNow('squad');
    expect(first?.committed).toEqual([]);
    expect((await ticketOf(younger)).explanation).toMatchObject({
      code: HELD_FOR_CLANMATE.code,
      message: HELD_FOR_CLANMATE.message,
    });
    expect((await ticketOf(elder)).explanation?.message).toMatch(/^waiting for 1 more player/);

    others.push(await player('squad'));
    const second = await loop.passNow('squad');
    expect(second?.committed).toHaveLength(1);
    const match = second!.committed[0]!;
    expect(match.tickets.map((t) => t.id).sort()).toEqual(
      [elder, ...others].map((entry) => entry.ticket.id).sort(),
    );
    expect(await teamSizes(match.matchId)).toEqual([4, 4]);
    // Its clanmate plays now, so within the same pass it is an ordinary searching ticket again.
    const released = await ticketOf(younger);
    expect(released.state).toBe('SEARCHING');
    expect(released.explanation).toMatchObject({ code: 'NOT_ENOUGH_PLAYERS' });
  });
});
