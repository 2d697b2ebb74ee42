import type { MatchEventMessage } from '@matchplane/contracts';
import {
  HAPPY_PATH_STATES,
  matchRow,
  playJourneyPlayer,
  readyPlayer,
  useControlPlane,
  type ControlPlane,
  type JourneyPlayer,
  type NotificationLog,
} from '../support/journey';
import { waitFor } from '../support/processes';

/*
 * The happy-path journey (two API replicas, dispatcher, matcher, allocator with the local provider
 * launching real game servers; players through the SDK only, one subscribed on each replica) with a
 * process crashing (SIGKILL) in the middle of it:
 *
 * 1. the dispatcher, right after the match was formed (ALLOCATING seen), restarted 1.5 s later;
 * 2. the API replica one player is connected to. The player's PlayerClient was given both
 *    replicas: its HTTP calls (heartbeats, assignment polls) and its notification socket move to
 *    the other replica by themselves, the socket resuming from the last revision it delivered.
 *
 * Either way the match completes and each client's notifications of it are revisions 1..5, once,
 * in lifecycle order.
 */

/**
 * The dispatcher is down this long; its claims are taken over by the restarted one because its
 * heartbeat fell silent (OUTBOX_OWNER_TIMEOUT_MS, 1.5 s), not after the default 60 s claim lease.
 */
const DISPATCHER_DOWN_MS = 1_500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The first event `log` got in `state` (any match), once it has one. */
function firstEventIn(log: NotificationLog, state: string, timeoutMs = 60_000) {
  return waitFor(() => Promise.resolve(log.events.find((event) => event.state === state)), {
    timeoutMs,
    intervalMs: 5,
    what: `${log.label} to be notified of a match in ${state}`,
  });
}

async function outboxInFlight(plane: ControlPlane, matchId: string) {
  return plane.ds.query<{ revision: string; status: string; claimed: boolean }[]>(
    `SELECT revision, status, claimed_at IS NOT NULL AS claimed FROM outbox
      WHERE aggregate_id = $1 AND status = 'pending' ORDER BY revision`,
    [matchId],
  );
}

describe('journey failover: the dispatcher is killed mid-journey', () => {
  const plane = useControlPlane({ apis: 2 });
  const players: JourneyPlayer[] = [];

  afterAll(() => {
    for (const player of players) player.close();
  });

  it('completes the match, each client notified of revisions 1..5 once and in order', () =>
    plane.diagnose(async () => {
      const [a, b] = await Promise.all([
        readyPlayer(plane.apiUrl(0), 'a@api0'),
        readyPlayer(plane.apiUrl(1), 'b@api1'),
      ]);
      players.push(a, b);
      const dispatcher = plane.dispatchers[0]!;

      // The crash: as soon as either client hears the match formed, SIGKILL; back 1.5 s later.
      const crash = (async () => {
        const formed = await Promise.race([
          firstEventIn(a.log, 'ALLOCATING'),
          firstEventIn(b.log, 'ALLOCATING'),
        ]);
        expect(await dispatcher.kill()).toBe('SIGKILL');
        const left = await outboxInFlight(plane, formed.matchId);
        await sleep(DISPATCHER_DOWN_MS);
        await dispatcher.start();
        return { formed, left };
      })();
      crash.catch(() => undefined); // awaited below

      const [ra, rb] = await Promise.all([playJourneyPlayer(a), playJourneyPlayer(b)]);
      const { formed, left } = await crash;
      const matchId = ra.matchId;
      expect(rb.matchId).toBe(matchId);
      expect(formed.matchId).toBe(matchId);
      expect(dispatcher.running()).toBe(true);

      for (const result of [ra, rb]) {
        expect(result.ended).toEqual({ outcome: 'COMPLETED', winningTeam: expect.any(Number) });
        expect(result.ticket.state).toBe('COMPLETED');
      }
      expect(await matchRow(plane.ds, matchId)).toMatchObject({ state: 'COMPLETED', revision: 5 });

      for (const player of [a, b]) {
        await player.log.waitForState(matchId, 'COMPLETED', 30_000);
        player.log.assertOrdered(matchId, HAPPY_PATH_STATES);
        expect(player.log.matchIds()).toEqual([matchId]);
      }
      // Every row of the match was delivered in the end. A row is acked after its subscribers got
      // it, so the clients may see COMPLETED a moment before its row is marked published.
      await waitFor(
        async () => ((await outboxInFlight(plane, matchId)).length === 0 ? true : undefined),
        { timeoutMs: 10_000, what: `every outbox row of ${matchId} to be acked` },
      );
      expect(await outboxInFlight(plane, matchId)).toEqual([]);
      console.log(
        `dispatcher killed after ${formed.state} r${formed.revision}; match rows pending at the kill: ` +
          JSON.stringify(left),
      );
    }));
});

describe('journey failover: an API replica is killed with a client connected to it', () => {
  // The game servers report to api#0; api#1 is the one that dies.
  const plane = useControlPlane({ apis: 2, gameServerApi: 0 });
  const players: JourneyPlayer[] = [];

  afterAll(() => {
    for (const player of players) player.close();
  });

  it('the SDK fails over to the other replica by itself and resumes without a missing revision; the match completes', () =>
    plane.diagnose(async () => {
      // b knows both replicas and starts on api#1; nothing in the test moves it.
      const [a, b] = await Promise.all([
        readyPlayer(plane.apiUrl(0), 'a@api0'),
        readyPlayer([plane.apiUrl(1), plane.apiUrl(0)], 'b@api1+api0'),
      ]);
      players.push(a, b);
      const doomed = plane.apis[1]!;

      await Promise.all([a.enqueue(), b.enqueue()]);
      const aJourney = playJourneyPlayer(a, { queued: true });
      const bJourney = playJourneyPlayer(b, { queued: true });
      aJourney.catch(() => undefined); // awaited below
      bJourney.catch(() => undefined);

      const formed = await firstEventIn(b.log, 'ALLOCATING');
      const matchId = formed.matchId;

      // Crash b's replica while b is connected to it, heartbeating and waiting for its server.
      expect(await doomed.kill()).toBe('SIGKILL');
      const seenAtCrash = b.subscription!.lastSeen()[matchId]!;
      const deliveredBefore = b.log.forMatch(matchId).length;
      expect(seenAtCrash).toBeGreaterThanOrEqual(1);

      const [ra, rb] = await Promise.all([aJourney, bJourney]);

      expect(ra.matchId).toBe(matchId);
      expect(rb.matchId).toBe(matchId);
      expect(rb.ended).toEqual({ outcome: 'COMPLETED', winningTeam: expect.any(Number) });
      expect(rb.ended).toEqual(ra.ended);
      expect(rb.ticket.state).toBe('COMPLETED');
      expect(ra.ticket.state).toBe('COMPLETED');
      expect(b.heartbeatErrors).toEqual([]);
      expect(await matchRow(plane.ds, matchId)).toMatchObject({ state: 'COMPLETED', revision: 5 });

      // Both clients saw 1..5 once, in order; b's arrived across two replicas.
      for (const player of [a, b]) {
        await player.log.waitForState(matchId, 'COMPLETED', 30_000);
        player.log.assertOrdered(matchId, HAPPY_PATH_STATES);
      }
      const resumed: MatchEventMessage[] = b.log.forMatch(matchId).slice(deliveredBefore);
      expect(resumed.map((event) => event.revision)).toEqual(
        [1, 2, 3, 4, 5].filter((revision) => revision > seenAtCrash),
      );
      expect(b.subscription!.lastSeen()).toEqual({ [matchId]: 5 });
      const bConnections = b.log.connections.map((event) => event.state);
      expect(bConnections[0]).toBe('connected');
      expect(bConnections).toContain('reconnecting');
      expect(bConnections.at(-1)).toBe('connected');
      expect(a.log.connections).toEqual([{ state: 'connected', playerId: a.playerId }]);
      expect(doomed.running()).toBe(false);
      console.log(
        `api#1 killed with b at r${seenAtCrash}; the SDK resumed on api#0 with ${JSON.stringify(
          resumed.map((event) => [event.revision, event.state]),
        )}`,
      );
    }));
});
