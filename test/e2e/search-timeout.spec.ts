import { readyPlayer, useControlPlane, type JourneyPlayer } from '../support/journey';

/*
 * A mode's search timeout through the real apps: a player alone in the queue, heartbeating through
 * the SDK, is ended by the maintenance app once the mode's timeout passes, and the SDK's heartbeat
 * loop ends with the ticket and its reason.
 */
const SEARCH_TIMEOUT_MS = 5_000;

describe('search timeout', () => {
  const plane = useControlPlane({
    apis: 1,
    allocator: false,
    maintenance: true,
    env: { QUEUE_SEARCH_TIMEOUTS: `duel=${SEARCH_TIMEOUT_MS}` },
    appEnv: { maintenance: { RECONCILE_INTERVAL_MS: '500' } },
  });
  const players: JourneyPlayer[] = [];

  afterAll(() => {
    for (const player of players) player.close();
  });

  it('ends a ticket nobody matched once the mode timeout passes; the SDK hands back the ticket and why', () =>
    plane.diagnose(async () => {
      const lonely = await readyPlayer(plane.apiUrl(0), 'lonely');
      players.push(lonely);
      const { modes } = await lonely.client.queueOptions();
      expect(modes.find((m) => m.mode === 'duel')?.searchTimeoutMs).toBe(SEARCH_TIMEOUT_MS);
      expect(modes.find((m) => m.mode === 'squad')).not.toHaveProperty('searchTimeoutMs');
      const queuedAt = Date.now();
      await lonely.enqueue();
      const ended = await lonely.heartbeats!.done;
      const endedAfterMs = Date.now() - queuedAt;
      expect(ended).toMatchObject({
        reason: 'finished',
        error: {
          status: 409,
          code: 'TICKET_FINISHED',
          problem: { ticketState: 'EXPIRED', endReason: 'SEARCH_TIMED_OUT' },
        },
      });
      await expect(lonely.refreshTicket()).resolves.toMatchObject({
        state: 'EXPIRED',
        endReason: 'SEARCH_TIMED_OUT',
      });
      expect(endedAfterMs).toBeGreaterThanOrEqual(SEARCH_TIMEOUT_MS);
      expect(lonely.heartbeatErrors).toEqual([]);
      // Free to queue again at once.
      await expect(lonely.enqueue()).resolves.toMatchObject({ state: 'SEARCHING' });
    }));
});
