import type { LobbyResponse } from '@matchplane/contracts';
import {
  HAPPY_PATH_STATES,
  matchRow,
  playJourneyPlayer,
  readyPlayer,
  useControlPlane,
  type JourneyPlayer,
  type JourneyResult,
} from '../support/journey';

/*
 * Lobbies through the whole control plane as processes, with no matcher running: an owner creates
 * a lobby, the others join with its invite code through the SDK, the owner arranges the teams and
 * starts it; the match is allocated (local provider, reference game server), every member gets its
 * assignment and join token, joins, and the match COMPLETES. The unranked lobby changes no rating;
 * a ranked one, played beside it, does (so the first check can fail).
 */
describe('lobby: a custom game played to COMPLETED without the matcher', () => {
  const plane = useControlPlane({
    apis: 2,
    matchers: 0,
    env: { QUEUE_MODES: 'duel:1x2,pair:2x2' },
  });
  const players: JourneyPlayer[] = [];

  afterAll(() => {
    for (const player of players) player.close();
  });

  interface RatingRow {
    id: string;
    rating: number;
    rating_mu: number;
    rating_sigma: number;
  }

  async function ratings(ids: readonly string[]): Promise<RatingRow[]> {
    return plane.ds.query<RatingRow[]>(
      `SELECT id, rating, rating_mu, rating_sigma FROM players WHERE id = ANY($1::uuid[]) ORDER BY id`,
      [ids],
    );
  }

  async function ratingEvents(matchId: string): Promise<number> {
    const [row] = await plane.ds.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM outbox WHERE event = 'rating.updated' AND payload->>'matchId' = $1`,
      [matchId],
    );
    return row?.count ?? 0;
  }

  /** A member's way once the owner started: its own ticket, then the queue's path to the end. */
  async function playMember(player: JourneyPlayer): Promise<JourneyResult> {
    const ticketId = await player.client.lobbies.waitForStart({ timeoutMs: 30_000, pollMs: 100 });
    player.ticket = await player.client.ticket(ticketId);
    return playJourneyPlayer(player, { queued: true });
  }

  it('creates, joins by code, arranges, starts, allocates, plays and completes; unranked changes no rating', () =>
    plane.diagnose(async () => {
      const names = ['owner@api0', 'a@api1', 'b@api0', 'c@api1', 'duelOwner@api0', 'duelist@api1'];
      const all = await Promise.all(names.map((name, i) => readyPlayer(plane.apiUrl(i), name)));
      players.push(...all);
      const [owner, a, b, c, duelOwner, duelist] = all as [
        JourneyPlayer,
        JourneyPlayer,
        JourneyPlayer,
        JourneyPlayer,
        JourneyPlayer,
        JourneyPlayer,
      ];
      const pair = [owner, a, b, c];
      const before = await ratings(pair.map((p) => p.playerId));

      const created = await owner.client.lobbies.create({ mode: 'pair' });
      expect(created).toMatchObject({ state: 'OPEN', ranked: false, size: 4 });
      for (const member of [a, b, c]) {
        await member.client.lobbies.join(created.inviteCode as string);
      }
      await owner.client.lobbies.setTeams([
        [owner.playerId, c.playerId],
        [a.playerId, b.playerId],
      ]);
      const ranked = await duelOwner.client.lobbies.create({ mode: 'duel', ranked: true });
      await duelist.client.lobbies.join(ranked.inviteCode as string);

      const playing = [...pair, duelOwner, duelist].map((player) => playMember(player));
      const started: LobbyResponse = await owner.client.lobbies.start();
      const rankedStarted = await duelOwner.client.lobbies.start();
      expect(started.state).toBe('STARTED');
      const results = await Promise.all(playing);
      const matchId = started.matchId as string;
      const rankedMatchId = rankedStarted.matchId as string;

      // The lobby's match, its teams as the owner arranged them, each member its own join token.
      const pairResults = results.slice(0, 4);
      for (const result of pairResults) expect(result.matchId).toBe(matchId);
      const teamOf = (player: JourneyPlayer) => pairResults[pair.indexOf(player)]?.assignment.team;
      expect([owner, c, a, b].map(teamOf)).toEqual([0, 0, 1, 1]);
      expect(new Set(pairResults.map((r) => r.assignment.joinToken)).size).toBe(4);
      pair.forEach((player, index) => {
        const result = pairResults[index];
        expect(result?.game.playerId).toBe(player.playerId);
        expect(result?.ended).toEqual({ outcome: 'COMPLETED', winningTeam: expect.any(Number) });
        expect(result?.ticket).toMatchObject({ state: 'COMPLETED', matchId });
      });
      expect(await matchRow(plane.ds, matchId)).toMatchObject({ state: 'COMPLETED', mode: 'pair' });
      for (const player of pair) {
        await player.log.waitForState(matchId, 'COMPLETED');
        player.log.assertOrdered(matchId, HAPPY_PATH_STATES);
      }

      // Unranked: no rating moved, no rating event. The ranked duel beside it did rate.
      expect(await ratings(pair.map((p) => p.playerId))).toEqual(before);
      expect(await ratingEvents(matchId)).toBe(0);
      expect(await matchRow(plane.ds, rankedMatchId)).toMatchObject({ state: 'COMPLETED' });
      expect(await ratingEvents(rankedMatchId)).toBe(2);

      // The match over, the owner is free to make another lobby.
      const next = await owner.client.lobbies.create({ mode: 'duel' });
      expect(next.state).toBe('OPEN');
      expect((await owner.client.lobbies.current()).lobbyId).toBe(next.lobbyId);
    }));
});
