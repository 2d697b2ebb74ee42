import type { DataSource } from 'typeorm';
import {
  matchRow,
  readyPlayer,
  useControlPlane,
  withTimeout,
  type JourneyPlayer,
} from '../support/journey';

/*
 * A 2v2 (mode pair) where one player never joins: the match goes on IN_PROGRESS one player short
 * (MATCH_MIN_CONNECTED_PER_TEAM 1), the real game server requests a backfill for that team, a
 * player who queues late is matched into the running match, the allocator publishes roster
 * revision 2, the game server verifies and accepts it, the late player is served its assignment,
 * joins mid-game, the server reports it connected, and the match completes with it scored.
 */
describe('journey: a no-show is backfilled by a late player while the match plays', () => {
  const plane = useControlPlane({
    apis: 1,
    env: { QUEUE_MODES: 'duel:1x2,pair:2x2' },
    gameServerEnv: { CONNECT_DEADLINE_MS: '4000', MATCH_DURATION_MS: '12000' },
  });
  const players: JourneyPlayer[] = [];

  afterAll(() => {
    for (const player of players) player.close();
  });

  it('fills the empty place from the queue and the late player plays the rest of the match', () =>
    plane.diagnose(async () => {
      const four = await Promise.all(
        ['a', 'b', 'c', 'absent'].map((name) => readyPlayer(plane.apiUrl(0), name)),
      );
      players.push(...four);
      await Promise.all(four.map((player) => player.enqueue('pair')));
      const [matchId] = await Promise.all(four.map((player) => player.waitForMatch()));
      const absent = four[3]!;
      const came = four.slice(0, 3);
      await Promise.all(four.map((player) => player.waitForAssignment()));
      const games = await Promise.all(came.map((player) => player.join()));

      // Initial-connect leaves the absent player's team one short; the match plays on.
      await came[0]!.log.waitForState(matchId!, 'IN_PROGRESS');
      const late = await readyPlayer(plane.apiUrl(0), 'late');
      players.push(late);
      await late.enqueue('pair');
      expect(await late.waitForMatch()).toBe(matchId);
      const assignment = await late.waitForAssignment();
      expect(assignment.team).toBe(absent.assignment?.team);
      const game = await late.join();
      expect(game.team).toBe(absent.assignment?.team);

      const ended = await withTimeout(game.ended, 30_000, 'the game to end');
      expect(ended.outcome).toBe('COMPLETED');
      expect(game.ticks().length).toBeGreaterThan(0);
      for (const other of games) await expect(other.ended).resolves.toEqual(ended);

      const row = await matchRow(plane.ds, matchId!);
      expect(row.state).toBe('COMPLETED');
      expect(await backfillStates(plane.ds, matchId!)).toEqual([
        { state: 'FILLED', playerIds: [late.playerId] },
      ]);
      const scores = await resultScores(plane.ds, matchId!);
      expect(scores[late.playerId]).toBeGreaterThan(0);
      expect((await late.waitForTicket((t) => t.state === 'COMPLETED')).state).toBe('COMPLETED');
      expect((await absent.waitForTicket((t) => t.state !== 'ASSIGNED')).state).toBe('FAILED');

      const output = plane.allocator?.output() ?? '';
      expect(output).toMatch(/roster revision 2 verified/);
      expect(output).toMatch(/FILLED: no-shows \[\]/);
    }));
});

async function backfillStates(
  ds: DataSource,
  matchId: string,
): Promise<{ state: string; playerIds: string[] }[]> {
  const rows: { state: string; player_ids: string[] }[] = await ds.query(
    `SELECT state, player_ids FROM backfill_requests WHERE match_id = $1 ORDER BY created_at`,
    [matchId],
  );
  return rows.map((row) => ({ state: row.state, playerIds: row.player_ids }));
}

async function resultScores(ds: DataSource, matchId: string): Promise<Record<string, number>> {
  const rows: { reported_result: { scores?: Record<string, number> } | null }[] = await ds.query(
    `SELECT reported_result FROM allocations WHERE match_id = $1`,
    [matchId],
  );
  return rows[0]?.reported_result?.scores ?? {};
}
