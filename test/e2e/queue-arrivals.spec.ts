import { formMatches } from '@matchplane/domain';
import type { QueueArrivalPage } from '@matchplane/tickets';
import { replay } from '../../apps/matcher/src/simulation/replay';
import { ruleSetFromEnvironment } from '../../apps/matcher/src/simulation/rule-sets';
import { parseCapture } from '../../apps/matcher/src/simulation/traffic';
import { readyPlayer, useControlPlane, type JourneyPlayer } from '../support/journey';

/*
 * The operator's capture of recent queue arrivals (GET /v1/admin/queue/arrivals) through the real
 * apps: players queue, two are matched, one cancels; the export lists them oldest first, says
 * after how long the canceller left and whom each player blocked or avoids, pages by cursor, and
 * replays in the simulator as it is.
 */
const OPERATOR_TOKEN = 'arrivals-token-0123456789abcdefghijklmnop';

interface ProblemBody {
  code?: string;
  detail?: string;
}

describe('queue arrivals export', () => {
  const plane = useControlPlane({
    apis: 1,
    allocator: false,
    env: { OPERATOR_TOKENS: `ops=${OPERATOR_TOKEN}` },
  });
  const players: JourneyPlayer[] = [];
  afterAll(() => players.forEach((player) => player.close()));

  async function arrivals(query: string, token = OPERATOR_TOKEN) {
    const response = await fetch(`${plane.apiUrl(0)}/v1/admin/queue/arrivals?${query}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return {
      status: response.status,
      body: (await response.json()) as QueueArrivalPage & ProblemBody,
    };
  }

  it('lists arrivals oldest first with who left unmatched and when, pages by cursor, and replays in the simulator', () =>
    plane.diagnose(async () => {
      const from = new Date(Date.now() - 1_000).toISOString();
      const canceller = await readyPlayer(plane.apiUrl(0), 'canceller');
      players.push(canceller);
      await canceller.enqueue();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await canceller.cancel();
      const [a, b] = await Promise.all([
        readyPlayer(plane.apiUrl(0), 'a'),
        readyPlayer(plane.apiUrl(0), 'b'),
      ]);
      players.push(a, b);
      // a would rather not meet b, but b is all there is: they are matched all the same.
      await a.client.avoids.add(b.playerId);
      await a.client.blockPlayer(canceller.playerId);
      await a.enqueue();
      await b.enqueue();
      await Promise.all([a.waitForMatch(), b.waitForMatch()]);

      const all = await arrivals(`from=${encodeURIComponent(from)}`);
      expect(all.status).toBe(200);
      expect(all.body.nextCursor).toBeNull();
      const listed = all.body.arrivals;
      expect(listed.map((arrival) => arrival.ticketId)).toEqual([
        canceller.ticketId,
        a.ticketId,
        b.ticketId,
      ]);
      expect(listed[0]).toMatchObject({
        playerId: canceller.playerId,
        mode: 'duel',
        rtt: { 'eu-west': expect.any(Number) },
        cancelAfterMs: expect.any(Number),
      });
      expect(listed[0]?.cancelAfterMs).toBeGreaterThanOrEqual(250);
      expect(listed[1]).not.toHaveProperty('cancelAfterMs');
      expect(listed[2]).not.toHaveProperty('cancelAfterMs');
      expect(listed[1]).toMatchObject({
        blockedPlayerIds: [canceller.playerId],
        avoidedPlayerIds: [b.playerId],
      });
      for (const arrival of [listed[0], listed[2]]) {
        expect(arrival).not.toHaveProperty('blockedPlayerIds');
        expect(arrival).not.toHaveProperty('avoidedPlayerIds');
      }

      const first = await arrivals(`from=${encodeURIComponent(from)}&limit=2`);
      expect(first.body.arrivals).toHaveLength(2);
      const rest = await arrivals(
        `from=${encodeURIComponent(from)}&limit=2&cursor=${first.body.nextCursor ?? ''}`,
      );
      expect(rest.body).toEqual({ arrivals: [listed[2]], nextCursor: null });

      // The export is a capture: the two who met here meet in the simulation too, an avoided pair
      // there as here.
      const capture = parseCapture(listed.map((arrival) => JSON.stringify(arrival)).join('\n'));
      const outcome = replay(capture, ruleSetFromEnvironment({}).rules, formMatches, {
        passIntervalMs: 500,
        drainMs: 60_000,
        startAt: new Date('2026-01-01T00:00:00Z'),
      });
      expect(outcome.duel).toMatchObject({
        players: 3,
        matched_players: 2,
        cancelled_players: 1,
        avoided_pairs_matched: 1,
        blocked_pairs_matched: 0,
      });
    }));

  it('refuses a bad window, a forged cursor and a caller without an operator token', () =>
    plane.diagnose(async () => {
      const from = new Date().toISOString();
      expect(await arrivals('')).toMatchObject({
        status: 400,
        body: { code: 'VALIDATION_FAILED' },
      });
      expect(await arrivals(`from=${from}&until=${from}`)).toMatchObject({
        status: 400,
        body: {
          code: 'VALIDATION_FAILED',
          detail: expect.stringContaining('until must be after from'),
        },
      });
      expect(await arrivals('from=2026-12-01T10:00:00')).toMatchObject({
        status: 400,
        body: { detail: expect.stringContaining('time zone') },
      });
      expect(await arrivals(`from=${from}&cursor=bm9wZQ`)).toMatchObject({
        status: 400,
        body: { code: 'INVALID_CURSOR' },
      });
      expect((await arrivals(`from=${from}`, 'not-an-operator-token-at-all-000000')).status).toBe(
        403,
      );
    }));
});
