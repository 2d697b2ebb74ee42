import { runInTransaction } from '@matchplane/persistence';
import { MatchLifecycle, MatchStore, BackfillStore } from '@matchplane/matches';
import { PlayerStore } from '@matchplane/players';
import { CandidateProjection, TicketStore } from '@matchplane/tickets';
import { commitMatch, queuePlayers } from '../support/allocation-harness';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { OutboxSignal, OutboxWriter } from '@matchplane/outbox';

/*
 * What a match's ending does to its players' tickets. Tickets come from the real queue routes; the
 * match is formed by the allocation harness's commitMatch, exactly as the matcher commits one.
 */
describe(MatchLifecycle.name, () => {
  let api: PlayerApi;
  let lifecycle: MatchLifecycle;
  let matches: MatchStore;
  let tickets: TicketStore;
  let projection: CandidateProjection;

  beforeAll(async () => {
    api = await startPlayerApi();
    // The API does not form matches, so the store is assembled here over the API's own signal.
    const signal = api.app.get(OutboxSignal);
    tickets = api.app.get(TicketStore);
    projection = api.app.get(CandidateProjection);
    matches = new MatchStore(api.ds, new OutboxWriter(), signal);
    lifecycle = new MatchLifecycle(
      api.ds,
      matches,
      tickets,
      new PlayerStore(),
      new BackfillStore(new OutboxWriter(), signal),
    );
  });
  afterAll(() => api.close());

  /** Two players queued through the routes, matched as the matcher commits a match. */
  async function matchedPair() {
    const players = await queuePlayers(api, 2, 'duel');
    const matchId = await commitMatch(api, players, 'duel');
    return { matchId, queued: players.map((player) => player.ticket) };
  }

  const ticketRows = (ids: string[]) =>
    api.ds.query<{ id: string; state: string; match_id: string | null; enqueued_at: Date }[]>(
      `SELECT id, state, match_id, enqueued_at FROM queue_tickets WHERE id = ANY($1::uuid[]) ORDER BY id`,
      [ids],
    );

  it('an allocation failure requeues every ticket at its original enqueue time and tells each player', async () => {
    const { matchId, queued } = await matchedPair();
    const before = await ticketRows(queued.map((t) => t.id));
    expect(await projection.candidate(queued[0]!.id)).toBeUndefined();

    const ending = await lifecycle.failNow(matchId, 'ALLOCATION_FAILED');
    expect(ending.change.match.state).toBe('FAILED');

    const after = await ticketRows(queued.map((t) => t.id));
    expect(after.map((t) => [t.state, t.match_id])).toEqual([
      ['SEARCHING', null],
      ['SEARCHING', null],
    ]);
    expect(after.map((t) => t.enqueued_at.getTime())).toEqual(
      before.map((t) => t.enqueued_at.getTime()),
    );
    for (const t of queued) {
      const candidate = await projection.candidate(t.id);
      expect(candidate?.enqueuedAt.getTime()).toBe(new Date(t.enqueuedAt).getTime());
      const [event] = await api.ds.query<
        { payload: { to: string; reason: string; matchId: string } }[]
      >(`SELECT payload FROM outbox WHERE aggregate_id = $1 ORDER BY revision DESC LIMIT 1`, [
        t.id,
      ]);
      expect(event?.payload).toMatchObject({ to: 'SEARCHING', reason: 'MATCH_FAILED', matchId });
    }
    const [matchEvent] = await api.ds.query<{ player_ids: string[]; payload: { to: string } }[]>(
      `SELECT player_ids, payload FROM outbox WHERE aggregate_id = $1 ORDER BY revision DESC LIMIT 1`,
      [matchId],
    );
    expect(matchEvent?.payload.to).toBe('FAILED');
    expect([...(matchEvent?.player_ids ?? [])].sort()).toEqual(
      queued.map((t) => t.playerId).sort(),
    );
  });

  it('a failure after the players were handed a server ends their tickets instead', async () => {
    const { matchId, queued } = await matchedPair();
    await matches.transitionNow(matchId, { to: 'PROCESS_READY' });
    await matches.transitionNow(matchId, { to: 'ASSIGNMENT_READY' });
    await lifecycle.failNow(matchId, 'SERVER_LOST');
    const after = await ticketRows(queued.map((t) => t.id));
    expect(after.map((t) => t.state)).toEqual(['FAILED', 'FAILED']);
  });

  it('a ticket its player already cancelled is left as it is', async () => {
    const { matchId, queued } = await matchedPair();
    await runInTransaction(api.ds, async (manager, unit) => {
      const current = (await tickets.load(manager, queued[0]!.id, { forUpdate: true }))!;
      await tickets.transition(
        unit,
        current,
        { to: 'CANCELLED', reason: 'PLAYER_CANCELLED' },
        new Date(),
      );
    });
    const ending = await lifecycle.cancelNow(matchId, 'OPERATOR_CANCELLED');
    expect(ending.tickets.map((t) => t.id)).toEqual([queued[1]!.id]);
    const after = await ticketRows(queued.map((t) => t.id));
    expect(after.find((t) => t.id === queued[0]!.id)?.state).toBe('CANCELLED');
    // Its partner, not yet in a game, searches again with its place (an operator cancel is no
    // player's doing).
    expect(after.find((t) => t.id === queued[1]!.id)?.state).toBe('SEARCHING');
  });
});
