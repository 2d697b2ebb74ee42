import { setTimeout as sleep } from 'node:timers/promises';
import { deleteRedisPrefix } from '../support/redis';
import { readyPlayer, useControlPlane, type JourneyPlayer } from '../support/journey';
import { heartbeatKeyCount } from '../support/heartbeat-keys';

/*
 * Ticket liveness through the real apps (decision 2026-12-07-ticket-liveness): a player alone in
 * the queue heartbeats through the SDK, answered from Redis; the maintenance app checkpoints the
 * beats into PostgreSQL, so the ticket outlives its heartbeat timeout many times over, a flush of
 * Redis included; once the player stops, the ticket expires.
 */
const HEARTBEAT_TIMEOUT_MS = 4_000;

describe('ticket liveness', () => {
  const plane = useControlPlane({
    apis: 1,
    matchers: 0,
    allocator: false,
    maintenance: true,
    env: { TICKET_HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS) },
    appEnv: {
      maintenance: { RECONCILE_INTERVAL_MS: '300', TICKET_LIVENESS_CHECKPOINT_INTERVAL_MS: '1000' },
    },
  });
  const players: JourneyPlayer[] = [];
  afterAll(() => {
    for (const player of players) player.close();
  });

  const row = async (ticketId: string) =>
    (
      await plane.ds.query<{ state: string; end_reason: string | null; last_heartbeat_at: Date }[]>(
        `SELECT state, end_reason, last_heartbeat_at FROM queue_tickets WHERE id = $1`,
        [ticketId],
      )
    )[0]!;
  const heartbeatKeys = (playerId: string) => heartbeatKeyCount(plane.ds, playerId);

  it('keeps a heartbeating ticket past its timeout through checkpoints, a Redis flush included, and expires it once it stops', () =>
    plane.diagnose(async () => {
      const lonely = await readyPlayer(plane.apiUrl(0), 'lonely');
      players.push(lonely);
      const ticket = await lonely.enqueue('duel');
      await sleep(2 * HEARTBEAT_TIMEOUT_MS);
      let now = await row(ticket.id);
      expect(now.state).toBe('SEARCHING');
      // The row follows the beats (checkpoints), though no heartbeat wrote it.
      expect(Date.now() - now.last_heartbeat_at.getTime()).toBeLessThan(HEARTBEAT_TIMEOUT_MS / 2);
      expect(await heartbeatKeys(ticket.playerId)).toBe(0);

      // Redis loses the candidate and every beat not yet checkpointed.
      await deleteRedisPrefix(plane.prefix);
      await sleep(2 * HEARTBEAT_TIMEOUT_MS);
      now = await row(ticket.id);
      expect(now.state).toBe('SEARCHING');
      expect(lonely.heartbeatErrors).toEqual([]);

      lonely.heartbeats?.stop();
      const stoppedAt = Date.now();
      while (now.state === 'SEARCHING' && Date.now() - stoppedAt < 4 * HEARTBEAT_TIMEOUT_MS) {
        await sleep(200);
        now = await row(ticket.id);
      }
      expect(now).toMatchObject({ state: 'EXPIRED', end_reason: 'HEARTBEAT_TIMEOUT' });
      expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(HEARTBEAT_TIMEOUT_MS - 1_500);
    }));
});
