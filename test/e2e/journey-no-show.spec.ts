import { ErrorCode } from '@matchplane/contracts';
import {
  AssignmentUnavailableError,
  GameCloseCode,
  GameConnectError,
  GameJoinRefusedError,
} from '@matchplane/sdk';
import {
  allocationRow,
  apiErrorOf,
  JOURNEY_GAME_SERVER_ENV,
  lastTicketChange,
  matchRow,
  readyPlayer,
  rejectionOf,
  useControlPlane,
  withTimeout,
  type JourneyPlayer,
} from '../support/journey';

/*
 * A duel (1x2) where one player never joins (docs/architecture/allocation-and-joining.md ("No-show plan")): at the game
 * server's connect deadline the no-show's team is empty, so the match fails NO_SHOW. The no-show is
 * penalised (FAILED NO_SHOW, then 429 COOLDOWN_ACTIVE with Retry-After when it queues again); the
 * player who came sees the match end FAILED, its ticket ends without penalty and it queues again at
 * once. Both were told ALLOCATING -> PROCESS_READY -> ASSIGNMENT_READY -> FAILED, in order.
 */
describe('journey: a no-show fails the duel and is penalised, the player who came is not', () => {
  const plane = useControlPlane({ apis: 2 });
  const players: JourneyPlayer[] = [];

  afterAll(() => {
    for (const player of players) player.close();
  });

  it('fails the match NO_SHOW at the connect deadline', () =>
    plane.diagnose(async () => {
      const [came, absent] = await Promise.all([
        readyPlayer(plane.apiUrl(0), 'came@api0'),
        readyPlayer(plane.apiUrl(1), 'absent@api1'),
      ]);
      players.push(came, absent);
      await Promise.all([came.enqueue(), absent.enqueue()]);
      const [matchId, otherMatchId] = await Promise.all([
        came.waitForMatch(),
        absent.waitForMatch(),
      ]);
      expect(otherMatchId).toBe(matchId);

      // Both are assigned; only one joins.
      await Promise.all([came.waitForAssignment(), absent.waitForAssignment()]);
      const game = await came.join();
      const deadlineMs = Number(JOURNEY_GAME_SERVER_ENV.CONNECT_DEADLINE_MS);
      const ended = await withTimeout(game.ended, deadlineMs + 30_000, 'the game to end');
      expect(ended).toEqual({ outcome: 'FAILED' });
      await expect(game.closed).resolves.toMatchObject({ code: GameCloseCode.NORMAL });
      expect(game.ticks()).toEqual([]);

      // The match and both tickets ended, each ticket with its own reason.
      expect(await matchRow(plane.ds, matchId)).toMatchObject({
        state: 'FAILED',
        revision: 4,
        failure_reason: 'NO_SHOW',
      });
      const absentTicket = await absent.waitForTicket((t) => t.state !== 'ASSIGNED');
      const cameTicket = await came.waitForTicket((t) => t.state !== 'ASSIGNED');
      expect(absentTicket.state).toBe('FAILED');
      expect(cameTicket.state).toBe('FAILED');
      expect(await lastTicketChange(plane.ds, absent.ticketId)).toMatchObject({
        from: 'ASSIGNED',
        to: 'FAILED',
        reason: 'NO_SHOW',
        matchId,
      });
      expect(await lastTicketChange(plane.ds, came.ticketId)).toMatchObject({
        to: 'FAILED',
        reason: 'MATCH_FAILED',
        matchId,
      });
      expect((await allocationRow(plane.ds, matchId)).state).toBe('RELEASED');

      // Too late for the no-show: no assignment any more, and the server takes nobody.
      const unavailable = await rejectionOf(absent.waitForAssignment(5_000));
      expect(unavailable).toBeInstanceOf(AssignmentUnavailableError);
      expect(unavailable).toMatchObject({ matchId, state: 'FAILED' });
      const lateJoin = await rejectionOf(absent.join());
      expect(
        lateJoin instanceof GameConnectError ||
          (lateJoin instanceof GameJoinRefusedError &&
            lateJoin.code === GameCloseCode.JOINING_CLOSED),
      ).toBe(true);

      // Each client was told the whole failed match, once, in order.
      for (const player of [came, absent]) {
        await player.log.waitForState(matchId, 'FAILED');
        player.log.assertOrdered(matchId, [
          'ALLOCATING',
          'PROCESS_READY',
          'ASSIGNMENT_READY',
          'FAILED',
        ]);
      }

      // The no-show is cooling down; the player who came queues again at once.
      const refused = await apiErrorOf(absent.enqueue());
      expect(refused).toMatchObject({ status: 429, code: ErrorCode.COOLDOWN_ACTIVE });
      expect(refused.retryAfterSeconds).toBeGreaterThan(0);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60); // NO_SHOW_COOLDOWN_BASE_SECONDS
      const requeued = await came.enqueue();
      expect(requeued).toMatchObject({ state: 'SEARCHING' });
      expect(requeued.id).not.toBe(cameTicket.id);
      expect((await came.cancel()).state).toBe('CANCELLED');
    }));
});
