import { NotificationCloseCode, ResyncReason, type SessionResponse } from '@matchplane/contracts';
import { MatchStore } from '@matchplane/matches';
import { SocketBuffer } from '../../apps/api/src/notifications/socket-buffer';
import {
  dispatcherEnv,
  startInProcessDispatcher,
  type InProcessDispatcher,
} from '../support/outbox-fixtures';
import { MatchDriver, TestSocket, listen, notificationsUrl } from '../support/notification-clients';
import { startPlayerApi, type PlayerApi } from '../support/player-api';

const BUFFER = 8;

/**
 * One slow client never delays the others: a socket whose client stops reading is closed with
 * 4008 once BUFFER messages are unread, while another participant of the same matches keeps
 * receiving every event at once.
 */
describe(SocketBuffer.name, () => {
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let matches: MatchDriver;
  let url: string;

  beforeAll(async () => {
    api = await startPlayerApi({ NOTIFY_SOCKET_BUFFER: String(BUFFER) });
    await listen(api.app);
    url = notificationsUrl(api.app);
    dispatcher = await startInProcessDispatcher(await dispatcherEnv(api.db, api.prefix));
    matches = new MatchDriver(api.ds, api.app.get(MatchStore, { strict: false }));
  });

  afterAll(async () => {
    await dispatcher?.close();
    await api?.close();
  });

  it('closes a client that stops reading with 4008 after a resync, while another keeps receiving promptly', async () => {
    const [slowPlayer, fastPlayer] = await Promise.all([api.newPlayer(), api.newPlayer()]);
    const players: SessionResponse[] = [slowPlayer, fastPlayer];
    const slow = await TestSocket.ready(url, slowPlayer.token);
    const fast = await TestSocket.ready(url, fastPlayer.token);
    // Stops reading from the TCP socket: the kernel buffers fill, no pong goes back.
    slow.socket.pause();

    const latenciesMs: number[] = [];
    const ids: string[] = [];
    // Three matches of five revisions: 15 events, well past the slow client's 8.
    for (let m = 0; m < 3; m += 1) {
      const started = performance.now();
      const matchId = await matches.create(players.map((p) => p.playerId));
      ids.push(matchId);
      await fast.waitForRevision(matchId, 1, 5_000);
      latenciesMs.push(performance.now() - started);
      for (let revision = 2; revision <= 5; revision += 1) {
        const before = performance.now();
        await matches.advance(matchId);
        await fast.waitForRevision(matchId, revision, 5_000);
        latenciesMs.push(performance.now() - before);
      }
    }
    expect(ids.map((id) => fast.revisions(id))).toEqual(ids.map(() => [1, 2, 3, 4, 5]));
    // Each event reached the fast client within a second of its commit, slow client or not.
    expect(Math.max(...latenciesMs)).toBeLessThan(1_000);

    // The slow client, reading again, finds the events that fit, the resync, then the close.
    slow.socket.resume();
    const closed = await slow.closed;
    expect(closed.code).toBe(NotificationCloseCode.SLOW_CONSUMER);
    const received = slow.messages.filter((m) => m.type !== 'ready');
    const resync = received[received.length - 1];
    expect(resync).toMatchObject({ type: 'resync', reason: ResyncReason.BUFFER_OVERFLOW });
    // The ready message and BUFFER - 1 events were unread when the next one did not fit.
    expect(received.filter((m) => m.type === 'event')).toHaveLength(BUFFER - 1);
    expect(fast.socket.readyState).toBe(fast.socket.OPEN);
    fast.close();
  });
});
