import { AssignmentUnavailableError, MatchplaneApiError } from '@matchplane/sdk';
import { ErrorCode } from '@matchplane/contracts';
import { waitFor } from '../support/processes';
import {
  allocationRow,
  lastTicketChange,
  matchRow,
  processAlive,
  readyPlayer,
  rejectionOf,
  useControlPlane,
  type JourneyPlayer,
} from '../support/journey';

/*
 * Server liveness (issue 30) through real processes: a duel is played on the reference game
 * server the local provider launched; the server heartbeats by itself. SIGKILLed mid-match
 * (IN_PROGRESS), it stops beating; the maintenance app's reconciler fails the match SERVER_LOST
 * once SERVER_HEARTBEAT_TIMEOUT_MS has passed, its allocation is released through the allocator,
 * every client is told over its notification socket, and each player's next enqueue answers 201
 * at once, keeping the lost ticket's enqueue time (served ahead).
 */

const TIMEOUT_MS = 2_000;
const RECONCILE_INTERVAL_MS = 200;

describe('server loss: a game server killed mid-match frees its players', () => {
  const plane = useControlPlane({
    apis: 2,
    maintenance: true,
    env: { SERVER_HEARTBEAT_TIMEOUT_MS: String(TIMEOUT_MS) },
    appEnv: { maintenance: { RECONCILE_INTERVAL_MS: String(RECONCILE_INTERVAL_MS) } },
    // A match long enough to be killed while it plays. The server beats every 250 ms rather than
    // every third of the short timeout: on a loaded 2-core machine a beat can take over a second.
    gameServerEnv: {
      MATCH_DURATION_MS: '120000',
      SERVER_HEARTBEAT_TIMEOUT_MS: String(TIMEOUT_MS),
      SERVER_HEARTBEAT_INTERVAL_MS: '250',
    },
  });
  const players: JourneyPlayer[] = [];

  afterAll(() => {
    for (const player of players) player.close();
  });

  /**
   * Enqueues until the API takes the ticket (409 TICKET_ALREADY_LIVE while the match is live). In
   * squad, whose matches need eight players: two duel tickets searching at once would be matched
   * together at the next pass, before the test could look at them and cancel them.
   */
  async function enqueueOnceFree(player: JourneyPlayer): Promise<number> {
    return waitFor(
      async () => {
        try {
          await player.enqueue('squad');
          return Date.now();
        } catch (error) {
          if (error instanceof MatchplaneApiError && error.code === ErrorCode.TICKET_ALREADY_LIVE)
            return undefined;
          throw error;
        }
      },
      { timeoutMs: TIMEOUT_MS + 20_000, intervalMs: 50, what: `${player.name} to queue again` },
    );
  }

  it('fails the match SERVER_LOST within the timeout, releases its allocation, and lets its players queue again at once', () =>
    plane.diagnose(async () => {
      const duel = await Promise.all([
        readyPlayer(plane.apiUrl(0), 'first@api0'),
        readyPlayer(plane.apiUrl(1), 'second@api1'),
      ]);
      players.push(...duel);
      const tickets = await Promise.all(duel.map((player) => player.enqueue()));
      const [matchId, otherMatchId] = await Promise.all(duel.map((p) => p.waitForMatch()));
      expect(otherMatchId).toBe(matchId);
      await Promise.all(duel.map((player) => player.waitForAssignment()));
      await Promise.all(duel.map((player) => player.join()));
      for (const player of duel) await player.log.waitForState(matchId as string, 'IN_PROGRESS');

      // The live server beats: it outlives the timeout untouched.
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS + 4 * RECONCILE_INTERVAL_MS));
      expect(await matchRow(plane.ds, matchId as string)).toMatchObject({ state: 'IN_PROGRESS' });
      const beaten = await plane.ds.query<{ last_heartbeat_at: Date | null }[]>(
        `SELECT last_heartbeat_at FROM allocations WHERE match_id = $1`,
        [matchId],
      );
      expect(beaten[0]?.last_heartbeat_at).toBeInstanceOf(Date);

      const { pid } = await allocationRow(plane.ds, matchId as string);
      expect(pid).not.toBeNull();
      const killedAt = Date.now();
      process.kill(pid as number, 'SIGKILL');
      await waitFor(() => Promise.resolve(processAlive(pid as number) ? undefined : true), {
        what: 'the game server to die',
      });

      // Each player is free to queue again once the timeout passed: 201, not 409.
      const freeAt = await Promise.all(duel.map((player) => enqueueOnceFree(player)));
      const failed = await matchRow(plane.ds, matchId as string);
      expect(failed).toMatchObject({ state: 'FAILED', failure_reason: 'SERVER_LOST', revision: 5 });
      for (const at of freeAt) expect(at - killedAt).toBeLessThanOrEqual(TIMEOUT_MS + 2_000);

      // Served ahead: the new ticket keeps the lost one's enqueue time. No penalty either.
      duel.forEach((player, index) => {
        expect(player.ticket?.state).toBe('SEARCHING');
        expect(player.ticket?.enqueuedAt).toBe(tickets[index]?.enqueuedAt);
      });
      for (const [index, player] of duel.entries()) {
        expect(await lastTicketChange(plane.ds, tickets[index]!.id)).toMatchObject({
          from: 'CONNECTED',
          to: 'FAILED',
          reason: 'MATCH_FAILED',
          matchId,
        });
        await player.cancel();
      }

      // The allocation is released through the allocator's release path.
      await waitFor(
        async () =>
          (await allocationRow(plane.ds, matchId as string)).state === 'RELEASED'
            ? true
            : undefined,
        { what: `the allocation of ${matchId} to be released` },
      );

      // Every client was told, in order, over its notification socket; the assignment says why.
      for (const player of duel) {
        await player.log.waitForState(matchId as string, 'FAILED');
        player.log.assertOrdered(matchId as string, [
          'ALLOCATING',
          'PROCESS_READY',
          'ASSIGNMENT_READY',
          'IN_PROGRESS',
          'FAILED',
        ]);
        const unavailable = await rejectionOf(
          player.client.waitForAssignment(matchId as string, { timeoutMs: 5_000 }),
        );
        expect(unavailable).toBeInstanceOf(AssignmentUnavailableError);
        expect(unavailable).toMatchObject({ state: 'FAILED', reason: 'SERVER_LOST' });
      }
    }));
});
