import { MatchPlay } from '@matchplane/sdk';
import { waitFor } from '../support/processes';
import {
  lastTicketChange,
  matchRow,
  readyPlayer,
  useControlPlane,
  type JourneyPlayer,
} from '../support/journey';

/*
 * Reconnect and leavers (issue 30) through real processes: duels played on the reference game
 * server the local provider launched. One player's notification socket and game connection drop
 * mid-match and come back within the grace window (the SDK's MatchPlay rejoins by itself, with the
 * assignment's fresh token): same team, scored. In the `quick` mode (a short window) a player
 * drops for good: the maintenance app abandons it (ABANDONED, cooldown), and when the match
 * completes it takes a rated loss.
 */

const QUICK_GRACE_MS = 1_500;

describe('reconnect and leavers', () => {
  const plane = useControlPlane({
    maintenance: true,
    env: {
      QUEUE_MODES: 'duel:1x2,quick:1x2',
      QUEUE_REJOIN_GRACE: `duel=30000,quick=${QUICK_GRACE_MS}`,
      NO_SHOW_COOLDOWN_BASE_SECONDS: '60',
    },
    appEnv: { maintenance: { RECONCILE_INTERVAL_MS: '200' } },
    gameServerEnv: { MATCH_DURATION_MS: '8000' },
  });
  const players: JourneyPlayer[] = [];
  const plays: MatchPlay[] = [];

  afterAll(() => {
    for (const play of plays) play.stop();
    for (const player of players) player.close();
  });

  /** Two players matched in `mode`, each playing through MatchPlay, the match IN_PROGRESS. */
  async function playing(
    mode: string,
  ): Promise<{ matchId: string; duel: JourneyPlayer[]; play: MatchPlay[] }> {
    const duel = await Promise.all([
      readyPlayer(plane.apiUrl(0), `first-${mode}`),
      readyPlayer(plane.apiUrl(0), `second-${mode}`),
    ]);
    players.push(...duel);
    await Promise.all(duel.map((player) => player.enqueue(mode)));
    const [matchId] = await Promise.all(duel.map((p) => p.waitForMatch()));
    await Promise.all(duel.map((player) => player.waitForAssignment()));
    const play = await Promise.all(
      duel.map((player) =>
        MatchPlay.start(player.client, matchId as string, { retryDelayMs: 200 }),
      ),
    );
    plays.push(...play);
    for (const player of duel) await player.log.waitForState(matchId as string, 'IN_PROGRESS');
    return { matchId: matchId as string, duel, play };
  }

  const presenceEvents = (matchId: string) =>
    plane.ds.query<{ payload: { playerId: string; presence: string } }[]>(
      `SELECT payload FROM outbox WHERE aggregate_id = $1 AND event = 'match.presence_changed' ORDER BY revision`,
      [matchId],
    );

  it('takes a player whose socket and game connection dropped back on its team within the window, and it scores', () =>
    plane.diagnose(async () => {
      const { matchId, duel, play } = await playing('duel');
      const [leaver] = duel as [JourneyPlayer];
      const leaverPlay = play[0]!;
      const team = leaverPlay.connection.team;
      await new Promise((resolve) => setTimeout(resolve, 1_000));

      // Both connections drop; the notification socket comes back, the game connection by itself.
      leaver.subscription?.close();
      leaverPlay.drop();
      await leaver.subscribe();
      leaver.subscription?.follow(matchId);
      await waitFor(
        async () =>
          (await presenceEvents(matchId)).some((e) => e.payload.presence === 'REJOINED') ||
          undefined,
        { what: 'the rejoin to be recorded', timeoutMs: 20_000 },
      );
      expect(leaverPlay.connection.team).toBe(team);

      const results = await Promise.all(play.map((p) => p.ended));
      expect(results[0]).toMatchObject({ rejoins: 1, ended: { outcome: 'COMPLETED' } });
      expect(
        (await presenceEvents(matchId)).map((e) => [e.payload.playerId, e.payload.presence]),
      ).toEqual([
        [leaver.session!.playerId, 'LEFT'],
        [leaver.session!.playerId, 'REJOINED'],
      ]);
      const [result] = await plane.ds.query<
        { reported_result: { scores: Record<string, number> } }[]
      >(`SELECT reported_result FROM allocations WHERE match_id = $1`, [matchId]);
      expect(result!.reported_result.scores[leaver.session!.playerId]).toBeGreaterThan(0);
      expect(await matchRow(plane.ds, matchId)).toMatchObject({ state: 'COMPLETED' });
      // The notification socket that came back saw the match through to its end.
      await leaver.log.waitForState(matchId, 'COMPLETED');
    }));

  it('abandons a player who does not come back within the window: ABANDONED, cooldown, rated loss', () =>
    plane.diagnose(async () => {
      const { matchId, duel, play } = await playing('quick');
      const [leaver, stayer] = duel as [JourneyPlayer, JourneyPlayer];
      const leaverId = leaver.session!.playerId;
      play[0]!.stop(); // gone for good

      await waitFor(
        async () =>
          (await presenceEvents(matchId)).some((e) => e.payload.presence === 'ABANDONED') ||
          undefined,
        { what: 'the leaver to be abandoned', timeoutMs: 20_000 },
      );
      expect(await lastTicketChange(plane.ds, leaver.ticket!.id)).toMatchObject({
        to: 'FAILED',
        reason: 'ABANDONED',
      });
      const [penalty] = await plane.ds.query<{ cooldown_until: Date | null }[]>(
        `SELECT cooldown_until FROM players WHERE id = $1`,
        [leaverId],
      );
      expect(penalty!.cooldown_until!.getTime()).toBeGreaterThan(Date.now() + 30_000);
      // The stayer's notification socket was told, in order.
      await stayer.log.waitForState(matchId, 'IN_PROGRESS');

      await play[1]!.ended;
      await waitFor(
        async () => ((await matchRow(plane.ds, matchId)).state === 'COMPLETED' ? true : undefined),
        { what: 'the match to complete' },
      );
      const ratings = await plane.ds.query<
        { aggregate_id: string; payload: { rating: number; previousRating: number } }[]
      >(
        `SELECT aggregate_id, payload FROM outbox WHERE event = 'rating.updated' AND payload->>'matchId' = $1`,
        [matchId],
      );
      const loss = ratings.find((r) => r.aggregate_id === leaverId);
      expect(loss!.payload.rating).toBeLessThan(loss!.payload.previousRating);
    }));
});
