import { GameCloseCode } from '@matchplane/sdk';
import { JoinCloseCode } from '@matchplane/contracts';
import {
  allocationRow,
  HAPPY_PATH_STATES,
  matchRow,
  matchTicketIds,
  playJourneyPlayer,
  processAlive,
  readyPlayer,
  useControlPlane,
  type JourneyPlayer,
} from '../support/journey';
import { waitFor } from '../support/processes';

/*
 * The happy path through real processes: two API replicas, a dispatcher, a matcher and the
 * allocator with the local provider (which launches the reference game server). Two players, one
 * on each replica, go from sign-in to the end of a duel with the SDK alone; each one's
 * notifications show the whole match once, in order.
 */
describe('journey: two players play a duel through the whole control plane', () => {
  const plane = useControlPlane({ apis: 2 });
  const players: JourneyPlayer[] = [];

  afterAll(() => {
    for (const player of players) player.close();
  });

  it('the SDK speaks the close codes of the reference game server', () => {
    expect(GameCloseCode).toEqual(JoinCloseCode);
  });

  it('queues, matches, allocates, joins, plays and completes, notifying both replicas in order', () =>
    plane.diagnose(async () => {
      const [a, b] = await Promise.all([
        readyPlayer(plane.apiUrl(0), 'a@api0'),
        readyPlayer(plane.apiUrl(1), 'b@api1'),
      ]);
      players.push(a, b);
      const [ra, rb] = await Promise.all([playJourneyPlayer(a), playJourneyPlayer(b)]);

      // One match, both tickets on its roster, each player on its own team of the duel.
      expect(rb.matchId).toBe(ra.matchId);
      const matchId = ra.matchId;
      expect(await matchTicketIds(plane.ds, matchId)).toEqual([a.ticketId, b.ticketId].sort());
      // The local provider here serves any region: the server runs in the match's own.
      expect(ra.assignment).toMatchObject({ matchId, region: 'eu-west', serverRegion: 'eu-west' });
      expect(['ASSIGNMENT_READY', 'IN_PROGRESS']).toContain(ra.assignment.state);
      expect(rb.assignment.endpoint).toBe(ra.assignment.endpoint);
      expect(rb.assignment.serverId).toBe(ra.assignment.serverId);
      expect(new Set([ra.assignment.team, rb.assignment.team])).toEqual(new Set([0, 1]));
      expect(ra.game.team).toBe(ra.assignment.team);
      expect(ra.game.playerId).toBe(a.playerId);
      expect(rb.game.playerId).toBe(b.playerId);

      // The server played: started, ticks, and one deterministic winner for both.
      for (const result of [ra, rb]) {
        expect(result.game.messages[0]).toMatchObject({ type: 'started' });
        expect(result.game.ticks().length).toBeGreaterThan(0);
        expect(result.ended).toEqual({ outcome: 'COMPLETED', winningTeam: expect.any(Number) });
        expect(result.ticket.state).toBe('COMPLETED');
        expect(result.ticket.matchId).toBe(matchId);
      }
      expect(rb.ended).toEqual(ra.ended);
      await expect(ra.game.closed).resolves.toMatchObject({ code: GameCloseCode.NORMAL });

      // The match is COMPLETED at revision 5, and each client was told every step of it, once,
      // in order, on its own replica.
      expect(await matchRow(plane.ds, matchId)).toMatchObject({
        state: 'COMPLETED',
        revision: 5,
        failure_reason: null,
      });
      for (const player of [a, b]) {
        await player.log.waitForState(matchId, 'COMPLETED');
        player.log.assertOrdered(matchId, HAPPY_PATH_STATES);
        // From PROCESS_READY on, every notification says where the match's server runs.
        expect(player.log.forMatch(matchId).map((event) => event.serverRegion)).toEqual([
          undefined,
          'eu-west',
          'eu-west',
          'eu-west',
          'eu-west',
        ]);
        expect(player.log.matchIds()).toEqual([matchId]);
        expect(player.log.connections).toEqual([{ state: 'connected', playerId: player.playerId }]);
      }

      // The server's allocation is released and the launched process exits by itself.
      const allocation = await allocationRow(plane.ds, matchId);
      expect(allocation).toMatchObject({ state: 'RELEASED', server_id: `local-${matchId}` });
      if (allocation.pid !== null) {
        const pid = allocation.pid;
        await waitFor(() => Promise.resolve(processAlive(pid) ? undefined : true), {
          timeoutMs: 20_000,
          what: 'the game server to exit',
        });
      }

      // After a completed match both may queue again at once.
      for (const player of [a, b]) {
        expect((await player.enqueue()).state).toBe('SEARCHING');
        await player.cancel();
      }
    }));
});
