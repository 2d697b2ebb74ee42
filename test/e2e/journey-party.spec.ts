import {
  HAPPY_PATH_STATES,
  matchRow,
  matchTicketIds,
  playJourneyPlayer,
  readyPlayer,
  useControlPlane,
  type JourneyPlayer,
} from '../support/journey';

/*
 * A party through the whole control plane as processes, with the SDK alone: a leader creates a
 * party, a friend joins with the invite code, the leader queues the party for a 2v2, two solo
 * players queue too; the party lands on one team, and every member is notified, gets its own
 * assignment and join token, joins the game server and sees the match COMPLETED.
 */
describe('journey: a party of two and two solos play a 2v2', () => {
  const plane = useControlPlane({ apis: 2, env: { QUEUE_MODES: 'duel:1x2,pair:2x2' } });
  const players: JourneyPlayer[] = [];

  afterAll(() => {
    for (const player of players) player.close();
  });

  it('keeps the party on one team and takes every member to COMPLETED', () =>
    plane.diagnose(async () => {
      const [leader, friend, soloA, soloB] = await Promise.all([
        readyPlayer(plane.apiUrl(0), 'leader@api0'),
        readyPlayer(plane.apiUrl(1), 'friend@api1'),
        readyPlayer(plane.apiUrl(0), 'soloA@api0'),
        readyPlayer(plane.apiUrl(1), 'soloB@api1'),
      ]);
      players.push(leader, friend, soloA, soloB);

      const party = await leader.client.createParty();
      const joined = await friend.client.joinParty(party.inviteCode as string);
      expect(joined.members.map((m) => [m.playerId, m.probed])).toEqual([
        [leader.playerId, true],
        [friend.playerId, true],
      ]);
      const queued = await leader.client.enqueueParty('pair');
      expect(queued.tickets).toHaveLength(2);
      const [leaderTicket, friendTicket] = await Promise.all([
        leader.followPartyTicket(),
        friend.followPartyTicket(),
      ]);
      expect(leaderTicket.partyTicketId).toBe(queued.partyTicketId);
      expect(friendTicket.partyTicketId).toBe(queued.partyTicketId);
      await Promise.all([soloA.enqueue('pair'), soloB.enqueue('pair')]);

      const results = await Promise.all(
        [leader, friend, soloA, soloB].map((player) => playJourneyPlayer(player, { queued: true })),
      );
      const [rl, rf, ra, rb] = results;
      const matchId = rl?.matchId as string;
      for (const result of results) expect(result.matchId).toBe(matchId);
      expect(await matchTicketIds(plane.ds, matchId)).toEqual(
        [leader, friend, soloA, soloB].map((p) => p.ticketId).sort(),
      );

      // The party on one team, the solos on the other; each member its own join token.
      expect(rf?.assignment.team).toBe(rl?.assignment.team);
      expect(ra?.assignment.team).toBe(rb?.assignment.team);
      expect(ra?.assignment.team).not.toBe(rl?.assignment.team);
      expect(new Set(results.map((r) => r.assignment.joinToken)).size).toBe(4);
      [leader, friend, soloA, soloB].forEach((player, index) => {
        const result = results[index];
        expect(result?.game.playerId).toBe(player.playerId);
        expect(result?.game.team).toBe(result?.assignment.team);
        expect(result?.ended).toEqual({ outcome: 'COMPLETED', winningTeam: expect.any(Number) });
        expect(result?.ticket).toMatchObject({ state: 'COMPLETED', matchId });
      });

      // Every member was told every step of the match, once, in order.
      expect(await matchRow(plane.ds, matchId)).toMatchObject({ state: 'COMPLETED' });
      for (const player of [leader, friend, soloA, soloB]) {
        await player.log.waitForState(matchId, 'COMPLETED');
        player.log.assertOrdered(matchId, HAPPY_PATH_STATES);
      }

      // The party may queue again once its match is over.
      const again = await leader.client.enqueueParty('pair');
      expect(again.tickets.map((t) => t.state)).toEqual(['SEARCHING', 'SEARCHING']);
      await friend.followPartyTicket();
      // A member's cancel takes the whole party out of the queue.
      expect(await friend.cancel()).toMatchObject({ state: 'CANCELLED' });
      const leaderAgain = again.tickets.find((t) => t.playerId === leader.playerId);
      expect(await leader.client.ticket(leaderAgain?.id as string)).toMatchObject({
        state: 'CANCELLED',
        endReason: 'PARTY_MEMBER_CANCELLED',
      });
    }));
});
