import { ErrorCode } from '@matchplane/contracts';
import { MatchplaneApiError } from '@matchplane/sdk';
import {
  HAPPY_PATH_STATES,
  matchesOfTicket,
  matchTicketIds,
  playJourneyPlayer,
  readyPlayer,
  useControlPlane,
  type JourneyPlayer,
} from '../support/journey';

/*
 * Cancelling while matching: a searching player cancels at the moment a partner queues. Either
 * the cancel wins (the ticket is CANCELLED and never on any match; the partner keeps searching and
 * is matched with the next player) or the matcher won (the cancel answers 409
 * TICKET_NOT_CANCELLABLE and the two play their match). Never both. The race is run until the
 * cancel has won once; whatever the matcher won is played to the end.
 */
describe('journey: a player cancels while a partner queues', () => {
  const plane = useControlPlane({ apis: 2 });
  const players: JourneyPlayer[] = [];
  const MAX_ROUNDS = 5;

  afterAll(() => {
    for (const player of players) player.close();
  });

  async function ready(api: number, name: string): Promise<JourneyPlayer> {
    const player = await readyPlayer(plane.apiUrl(api), name);
    players.push(player);
    return player;
  }

  it('never matches a cancelled ticket; the partner stays searching and is matched with a third player', () =>
    plane.diagnose(async () => {
      const cancelled: JourneyPlayer[] = [];
      let partner: JourneyPlayer | undefined;

      for (let round = 1; round <= MAX_ROUNDS && !partner; round += 1) {
        const [leaver, joiner] = await Promise.all([
          ready(0, `leaver${round}@api0`),
          ready(1, `joiner${round}@api1`),
        ]);
        await leaver.enqueue();
        // The matcher has looked at the leaver alone: it is a live candidate when the race starts.
        await leaver.waitForTicket((t) => t.explanation !== undefined);

        const [queued, cancel] = await Promise.allSettled([joiner.enqueue(), leaver.cancel()]);
        if (queued.status === 'rejected') throw queued.reason;
        const raceEndedAt = Date.now();

        if (cancel.status === 'fulfilled') {
          expect(cancel.value.state).toBe('CANCELLED');
          cancelled.push(leaver);
          // Matcher passes after the cancel still find the joiner alone.
          const waiting = await joiner.waitForTicket(
            (t) =>
              t.state !== 'SEARCHING' ||
              (t.explanation !== undefined &&
                Date.parse(t.explanation.evaluatedAt) > raceEndedAt + 500),
          );
          expect(waiting).toMatchObject({
            state: 'SEARCHING',
            explanation: { code: 'NOT_ENOUGH_PLAYERS' },
          });
          expect((await leaver.refreshTicket()).state).toBe('CANCELLED');
          partner = joiner;
        } else {
          // The matcher got there first: the cancel is refused and the two play their match.
          const refusal: unknown = cancel.reason;
          expect(refusal).toBeInstanceOf(MatchplaneApiError);
          expect(refusal).toMatchObject({ status: 409, code: ErrorCode.TICKET_NOT_CANCELLABLE });
          const [a, b] = await Promise.all([
            playJourneyPlayer(leaver, { queued: true }),
            playJourneyPlayer(joiner, { queued: true }),
          ]);
          expect(b.matchId).toBe(a.matchId);
          expect(await matchTicketIds(plane.ds, a.matchId)).toEqual(
            [leaver.ticketId, joiner.ticketId].sort(),
          );
          expect([a.ticket.state, b.ticket.state]).toEqual(['COMPLETED', 'COMPLETED']);
        }
      }
      if (!partner) throw new Error(`the cancel never won the race in ${MAX_ROUNDS} rounds`);

      // The partner is matched with the next player, and that match runs to the end.
      const third = await ready(0, 'third@api0');
      const [p, t] = await Promise.all([
        playJourneyPlayer(partner, { queued: true }),
        playJourneyPlayer(third),
      ]);
      expect(t.matchId).toBe(p.matchId);
      expect(await matchTicketIds(plane.ds, p.matchId)).toEqual(
        [partner.ticketId, third.ticketId].sort(),
      );
      expect([p.ended.outcome, t.ended.outcome]).toEqual(['COMPLETED', 'COMPLETED']);
      for (const player of [partner, third]) {
        await player.log.waitForState(p.matchId, 'COMPLETED');
        player.log.assertOrdered(p.matchId, HAPPY_PATH_STATES);
      }

      // No match anywhere holds a cancelled ticket, and its player was told of none.
      for (const leaver of cancelled) {
        expect(await matchesOfTicket(plane.ds, leaver.ticketId)).toEqual([]);
        expect(leaver.log.events).toEqual([]);
        expect((await leaver.refreshTicket()).state).toBe('CANCELLED');
      }
    }));
});
