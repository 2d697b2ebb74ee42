import {
  ServerRoutes,
  SERVER_PROTOCOL_VERSION,
  type MatchEventsResponse,
  type ServerHandOff,
} from '@matchplane/contracts';
import { loadConfig } from '@matchplane/config';
import {
  AbandonmentStage,
  BackfillStore,
  MatchLifecycle,
  MatchPresenceService,
  MatchStore,
} from '@matchplane/matches';
import { OutboxSignal, OutboxWriter } from '@matchplane/outbox';
import { PlayerStore } from '@matchplane/players';
import { TicketStore } from '@matchplane/tickets';
import { MaintenanceConfig } from '../../apps/maintenance/src/maintenance.config';
import { reconciliationOptions } from '../../apps/maintenance/src/reconciliation/reconciliation.module';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import {
  CapturingHandOff,
  commitMatch,
  KeyFiles,
  matchState,
  queuePlayers,
  serverCall,
  startDispatcherFor,
  startStaticAllocator,
  waitForHandOff,
  type InProcessAllocator,
  type QueuedPlayer,
} from '../support/allocation-harness';

/*
 * Reconnect and leavers (issue 30) over the real game-server routes: a duel allocated by the real
 * allocator (static provider), registered and connected through the routes, then its players'
 * leaves and rejoins reported through POST /v1/servers/{id}/players/{playerId}/left|rejoined.
 */

const REGISTER = { protocolVersion: SERVER_PROTOCOL_VERSION, imageDigest: 'sha256:test' };
const GRACE_MS = 30_000;
/** The `quick` mode's window: short enough to pass in real time, never by editing a timestamp. */
const QUICK_GRACE_MS = 1_000;
const COOLDOWN_BASE_MS = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface PresenceEvent {
  event: string;
  revision: string;
  player_ids: string[];
  payload: { playerId?: string; presence?: string; rejoinDeadline?: string; state?: string };
}

describe(MatchPresenceService.name, () => {
  const keys = new KeyFiles();
  const handOff = new CapturingHandOff();
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let allocator: InProcessAllocator;

  beforeAll(async () => {
    api = await startPlayerApi({
      QUEUE_MODES: 'duel:1x2,quick:1x2',
      QUEUE_REJOIN_GRACE: `duel=${GRACE_MS},quick=${QUICK_GRACE_MS}`,
      NO_SHOW_COOLDOWN_BASE_SECONDS: String(COOLDOWN_BASE_MS / 1_000),
    });
    dispatcher = await startDispatcherFor(api);
    allocator = await startStaticAllocator(api, keys, handOff, { servers: 6, firstPort: 7400 });
  });

  afterAll(async () => {
    await allocator?.close();
    await dispatcher?.close();
    await api?.close();
    keys.remove();
  });

  interface RunningMatch {
    matchId: string;
    players: QueuedPlayer[];
    server: ServerHandOff;
  }

  async function inProgress(mode = 'duel'): Promise<RunningMatch> {
    const players = await queuePlayers(api, 2, mode);
    const matchId = await commitMatch(api, players, mode);
    const server = await waitForHandOff(handOff, matchId);
    const call = (route: string, body: unknown) =>
      serverCall(api, 'POST', route, server.credential, body);
    expect((await call(ServerRoutes.register(server.serverId), REGISTER)).statusCode).toBe(200);
    const connected = await call(ServerRoutes.initialConnect(server.serverId), {
      connectedPlayerIds: players.map((p) => p.playerId),
    });
    expect(connected.json()).toMatchObject({ state: 'IN_PROGRESS' });
    return { matchId, players, server };
  }

  const report = (match: RunningMatch, what: 'left' | 'rejoined', playerId: string) =>
    serverCall(
      api,
      'POST',
      what === 'left'
        ? ServerRoutes.playerLeft(match.server.serverId, playerId)
        : ServerRoutes.playerRejoined(match.server.serverId, playerId),
      match.server.credential,
    );

  const presenceEvents = (matchId: string) =>
    api.ds.query<PresenceEvent[]>(
      `SELECT event, revision, player_ids, payload FROM outbox
        WHERE aggregate_id = $1 AND event = 'match.presence_changed' ORDER BY revision`,
      [matchId],
    );

  it('records a leave with its grace deadline and a rejoin, each once, as match events to every participant in order', async () => {
    const match = await inProgress();
    const [leaver, other] = match.players as [QueuedPlayer, QueuedPlayer];
    const before = (await matchState(api.ds, match.matchId)).revision;
    const started = Date.now();

    const left = await report(match, 'left', leaver.playerId);
    expect(left.statusCode).toBe(200);
    const leftBody = left.json<{ rejoinDeadline: string }>();
    expect(leftBody).toMatchObject({
      matchId: match.matchId,
      playerId: leaver.playerId,
      presence: 'LEFT',
      leaveCount: 1,
      matchRevision: before + 1,
    });
    const deadline = Date.parse(leftBody.rejoinDeadline);
    expect(deadline).toBeGreaterThanOrEqual(started + GRACE_MS - 1_000);
    expect(deadline).toBeLessThanOrEqual(Date.now() + GRACE_MS + 1_000);

    // A repeat answers the same and writes nothing.
    const repeat = await report(match, 'left', leaver.playerId);
    expect(repeat.statusCode).toBe(200);
    expect(repeat.json()).toEqual(leftBody);

    const back = await report(match, 'rejoined', leaver.playerId);
    expect(back.statusCode).toBe(200);
    expect(back.json()).toEqual({
      matchId: match.matchId,
      playerId: leaver.playerId,
      presence: 'REJOINED',
      leaveCount: 1,
      matchRevision: before + 2,
    });
    expect((await report(match, 'rejoined', leaver.playerId)).json()).toEqual(back.json());

    // The other player never left: a rejoin contradicts what is recorded.
    const conflict = await report(match, 'rejoined', other.playerId);
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toMatchObject({ code: 'PRESENCE_CONFLICT' });

    expect(await matchState(api.ds, match.matchId)).toMatchObject({
      state: 'IN_PROGRESS',
      revision: before + 2,
    });
    const events = await presenceEvents(match.matchId);
    expect(events.map((e) => [Number(e.revision), e.payload.presence])).toEqual([
      [before + 1, 'LEFT'],
      [before + 2, 'REJOINED'],
    ]);
    for (const event of events) {
      expect(event.payload).toMatchObject({ playerId: leaver.playerId, state: 'IN_PROGRESS' });
      expect([...event.player_ids].sort()).toEqual(match.players.map((p) => p.playerId).sort());
    }
    expect(events[0]?.payload.rejoinDeadline).toBe(leftBody.rejoinDeadline);

    // A client catching up over the leave and the rejoin (GET .../events, a socket's gap-fill)
    // gets both, in order, with the match still IN_PROGRESS.
    const caughtUp = await api.request(
      'GET',
      `/v1/matches/${match.matchId}/events?after=${before}`,
      { token: other.token },
    );
    expect(caughtUp.statusCode).toBe(200);
    expect(caughtUp.json<MatchEventsResponse>().messages).toEqual([
      expect.objectContaining({
        type: 'event',
        event: 'match.presence_changed',
        revision: before + 1,
        state: 'IN_PROGRESS',
      }),
      expect.objectContaining({
        type: 'event',
        event: 'match.presence_changed',
        revision: before + 2,
        state: 'IN_PROGRESS',
      }),
    ]);
  });

  it('serves a player who left a freshly signed join token from its assignment (the allocator signs it), and the first one again to the others', async () => {
    const match = await inProgress();
    const [leaver, other] = match.players as [QueuedPlayer, QueuedPlayer];
    const assignment = async (player: QueuedPlayer) =>
      (
        await api.request('GET', `/v1/matches/${match.matchId}/assignment`, { token: player.token })
      ).json<{ joinToken: string; expiresAt: string; team: number; endpoint: string }>();
    const before = await assignment(leaver);
    const otherBefore = await assignment(other);
    await sleep(20); // the fresh token is issued later than the first
    expect((await report(match, 'left', leaver.playerId)).statusCode).toBe(200);

    let after = before;
    for (let i = 0; i < 200 && after.joinToken === before.joinToken; i += 1) {
      await sleep(50);
      after = await assignment(leaver);
    }
    expect(after.joinToken).not.toBe(before.joinToken);
    expect(Date.parse(after.expiresAt)).toBeGreaterThan(Date.parse(before.expiresAt));
    expect(after).toMatchObject({ team: before.team, endpoint: before.endpoint });
    expect(await assignment(other)).toEqual(otherBefore);
    // The roster the server verifies is untouched: its manifest still commits to the first tokens.
    const roster = await serverCall(
      api,
      'GET',
      ServerRoutes.roster(match.server.serverId),
      match.server.credential,
    );
    const entries = roster.json<{ entries: { playerId: string; joinToken: string }[] }>().entries;
    expect(entries.find((e) => e.playerId === leaver.playerId)?.joinToken).toBe(before.joinToken);
  });

  it("shows each mode's rejoin window in the queue options", async () => {
    const [player] = await queuePlayers(api, 1, 'duel');
    const options = await api.request('GET', '/v1/queue/options', { token: player!.token });
    const modes = options.json<{ modes: { mode: string; rejoinGraceMs?: number }[] }>().modes;
    expect(modes.map((m) => [m.mode, m.rejoinGraceMs])).toEqual([
      ['duel', GRACE_MS],
      ['quick', QUICK_GRACE_MS],
    ]);
  });

  it('answers 404 for a player not in the match and 400 for a malformed id', async () => {
    const match = await inProgress();
    const [stranger] = await queuePlayers(api, 1, 'duel');
    expect((await report(match, 'left', stranger!.playerId)).statusCode).toBe(404);
    const malformed = await report(match, 'left', 'not-a-uuid');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json<{ detail: string }>().detail).toContain('player id');
  });

  it('refuses a report without the workload credential of that server', async () => {
    const match = await inProgress();
    const answer = await serverCall(
      api,
      'POST',
      ServerRoutes.playerLeft(match.server.serverId, match.players[0]!.playerId),
      'not-the-credential',
    );
    expect(answer.statusCode).toBe(401);
  });

  /** The maintenance app's abandonment stage, built as its reconciliation module builds it. */
  function abandonmentStage(): AbandonmentStage {
    const signal = api.app.get(OutboxSignal);
    const matches = new MatchStore(api.ds, new OutboxWriter(), signal);
    const lifecycle = new MatchLifecycle(
      api.ds,
      matches,
      api.app.get(TicketStore),
      new PlayerStore(),
      new BackfillStore(new OutboxWriter(), signal),
    );
    const presence = new MatchPresenceService(
      api.ds,
      matches,
      lifecycle,
      new OutboxWriter(),
      signal,
    );
    return new AbandonmentStage(api.ds, lifecycle, presence, {
      ...reconciliationOptions(loadConfig(MaintenanceConfig, {})),
      noShowPenalty: { baseMs: COOLDOWN_BASE_MS, capMs: 3_600_000, decayMs: 86_400_000 },
    });
  }

  const ticketOf = async (ticketId: string) =>
    (
      await api.ds.query<{ state: string; end_reason: string | null }[]>(
        `SELECT state, end_reason FROM queue_tickets WHERE id = $1`,
        [ticketId],
      )
    )[0];
  const cooldownOf = async (playerId: string) =>
    (
      await api.ds.query<{ cooldown_until: Date | null }[]>(
        `SELECT cooldown_until FROM players WHERE id = $1`,
        [playerId],
      )
    )[0]?.cooldown_until;

  it('abandons a leaver past its window once: event, ticket FAILED ABANDONED, cooldown, then a rated loss when the match completes', async () => {
    const match = await inProgress('quick');
    const [leaver, stayer] = match.players as [QueuedPlayer, QueuedPlayer];
    expect((await report(match, 'left', leaver.playerId)).statusCode).toBe(200);

    // Within the window the stage leaves the leaver alone.
    expect((await abandonmentStage().batch(new Date(), new Set())).taken).toBe(0);
    await sleep(QUICK_GRACE_MS + 200);
    const first = await abandonmentStage().batch(new Date(), new Set());
    expect(first).toMatchObject({ taken: 1, reconciled: { player_abandoned: 1 }, failures: [] });
    expect((await abandonmentStage().batch(new Date(), new Set())).taken).toBe(0);

    const presence = (await presenceEvents(match.matchId)).map((e) => e.payload.presence);
    expect(presence).toEqual(['LEFT', 'ABANDONED']);
    expect(await ticketOf(leaver.ticket.id)).toEqual({ state: 'FAILED', end_reason: 'ABANDONED' });
    expect(await ticketOf(stayer.ticket.id)).toEqual({ state: 'CONNECTED', end_reason: null });
    const cooldown = await cooldownOf(leaver.playerId);
    expect(cooldown!.getTime()).toBeGreaterThan(Date.now() + COOLDOWN_BASE_MS - 5_000);
    expect(await cooldownOf(stayer.playerId)).toBeNull();

    // Final: a late rejoin or leave is 410.
    const late = await report(match, 'rejoined', leaver.playerId);
    expect(late.statusCode).toBe(410);
    expect(late.json()).toMatchObject({ code: 'PLAYER_ABANDONED' });
    expect((await report(match, 'left', leaver.playerId)).statusCode).toBe(410);

    // The leaver's team "wins": the abandoner still loses rating; the opponent, alone, is not rated.
    const leaverTeam = await api.ds.query<{ team: number }[]>(
      `SELECT team FROM match_participants WHERE match_id = $1 AND player_id = $2`,
      [match.matchId, leaver.playerId],
    );
    const result = await serverCall(
      api,
      'POST',
      ServerRoutes.result(match.server.serverId),
      match.server.credential,
      { outcome: 'COMPLETED', winningTeam: leaverTeam[0]!.team },
    );
    expect(result.json()).toMatchObject({ state: 'COMPLETED' });
    const ratings = await api.ds.query<
      { aggregate_id: string; payload: { rating: number; previousRating: number } }[]
    >(
      `SELECT aggregate_id, payload FROM outbox WHERE event = 'rating.updated' AND payload->>'matchId' = $1`,
      [match.matchId],
    );
    expect(ratings.map((r) => r.aggregate_id)).toEqual([leaver.playerId]);
    expect(ratings[0]!.payload.rating).toBeLessThan(ratings[0]!.payload.previousRating);
  });

  it('answers a rejoin past the deadline 410 and abandons the player there and then', async () => {
    const match = await inProgress('quick');
    const [leaver] = match.players as [QueuedPlayer];
    expect((await report(match, 'left', leaver.playerId)).statusCode).toBe(200);
    await sleep(QUICK_GRACE_MS + 200);
    const late = await report(match, 'rejoined', leaver.playerId);
    expect(late.statusCode).toBe(410);
    expect((await presenceEvents(match.matchId)).map((e) => e.payload.presence)).toEqual([
      'LEFT',
      'ABANDONED',
    ]);
    expect(await ticketOf(leaver.ticket.id)).toEqual({ state: 'FAILED', end_reason: 'ABANDONED' });
    expect(await cooldownOf(leaver.playerId)).not.toBeNull();
    expect((await abandonmentStage().batch(new Date(), new Set())).taken).toBe(0);
  });
});
