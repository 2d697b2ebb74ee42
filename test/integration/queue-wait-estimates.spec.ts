import type { INestApplicationContext } from '@nestjs/common';
import type { QueueOptionsResponse, TicketResponse } from '@matchplane/contracts';
import { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { startInProcessMatcher } from '../support/in-process-matcher';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { waitFor } from '../support/processes';

/**
 * Queue statistics through the real player routes and a real matcher pass: the options route's
 * per-mode queue depth, and a searching ticket's estimated wait, the median wait of the players
 * matched recently in its mode and region.
 */
describe('queue depth and wait estimates', () => {
  let api: PlayerApi;
  let matcher: INestApplicationContext;

  beforeAll(async () => {
    api = await startPlayerApi();
    ({ context: matcher } = await startInProcessMatcher(api));
  });

  afterAll(async () => {
    await matcher?.close();
    await api?.close();
  });

  async function queued(): Promise<{ token: string; ticket: TicketResponse }> {
    const player = await api.newPlayer();
    expect((await api.probe(player.token, 'eu-west')).statusCode).toBe(200);
    const response = await api.enqueue(player.token, 'duel');
    expect(response.statusCode).toBe(201);
    return { token: player.token, ticket: response.json<TicketResponse>() };
  }

  async function depths(token: string): Promise<Record<string, number>> {
    const response = await api.request('GET', '/v1/queue/options', { token });
    expect(response.statusCode).toBe(200);
    const options = response.json<QueueOptionsResponse>();
    return Object.fromEntries(options.modes.map((mode) => [mode.mode, mode.queueDepth]));
  }

  it('reports queue depth per mode and estimates a wait from the waits of recent matches', async () => {
    const first = await queued();
    const second = await queued();
    expect(await depths(first.token)).toMatchObject({ duel: 2, squad: 0 });
    // No match formed in duel/eu-west yet: nothing to go by.
    expect(first.ticket.estimatedWaitSeconds).toBeNull();

    const passStarted = Date.now();
    await matcher.get(MatcherLoop).passNow('duel');
    const passEnded = Date.now();
    const [matchedFirst, matchedSecond] = await Promise.all(
      [first, second].map(async ({ token, ticket }) =>
        (
          await api.request('GET', `/v1/queue/tickets/${ticket.id}`, { token })
        ).json<TicketResponse>(),
      ),
    );
    expect([matchedFirst?.state, matchedSecond?.state]).toEqual(['MATCHED', 'MATCHED']);
    // Not searching: no estimate on a matched ticket.
    expect(matchedFirst).not.toHaveProperty('estimatedWaitSeconds');

    const third = await queued();
    expect(await depths(third.token)).toMatchObject({ duel: 1 });
    // The median of the two matched players' waits (enqueue to the pass that matched them).
    const waitAt = (at: number) =>
      [first, second]
        .map(({ ticket }) => at - Date.parse(ticket.enqueuedAt))
        .reduce((a, b) => a + b) /
      2 /
      1000;
    const estimate = await waitFor(
      async () =>
        (
          await api.request('GET', `/v1/queue/tickets/${third.ticket.id}`, { token: third.token })
        ).json<TicketResponse>().estimatedWaitSeconds ?? undefined,
      { what: 'an estimate for duel in eu-west' },
    );
    expect(estimate).toBeGreaterThanOrEqual(Math.floor(waitAt(passStarted) * 10) / 10);
    expect(estimate).toBeLessThanOrEqual(Math.ceil(waitAt(passEnded) * 10) / 10);
  });
});
