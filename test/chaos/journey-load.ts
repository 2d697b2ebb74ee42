import type { MatchEventMessage, ResyncMessage } from '@matchplane/contracts';
import {
  GameConnectionClosedError,
  PlayerClient,
  type FetchLike,
  type GameConnection,
  type HeartbeatHandle,
  type NotificationSubscription,
} from '@matchplane/sdk';
import { sleep } from '../bench/bench.processes';

/*
 * Simulated players playing full journeys through the SDK (guest session, notification socket on
 * either API replica with failover, probes, ticket and heartbeats, assignment, the game server,
 * the result), back to back, while the chaos run breaks things. Every notification the SDK hands
 * the application is recorded with its arrival time, for comparison with the outbox afterwards.
 */

const TERMINAL: ReadonlySet<string> = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);
const JOINABLE: ReadonlySet<string> = new Set(['ASSIGNMENT_READY', 'IN_PROGRESS']);

/** What one player's subscription delivered, per match. */
export class PlayerFeed {
  /** matchId -> revision -> first arrival (epoch ms). */
  readonly arrivals = new Map<string, Map<number, number>>();
  /** matchId -> highest revision a resync jumped to (the ones below were superseded, not lost). */
  readonly resyncedTo = new Map<string, number>();
  private readonly last = new Map<string, number>();
  private readonly states = new Map<string, string>();
  private readonly waiters = new Set<() => void>();
  duplicates = 0;
  orderViolations = 0;
  /** Epoch ms the journey closed the subscription (its match ended). */
  closedAt: number | undefined;

  constructor(readonly playerId: string) {}

  /** The highest revision of `matchId` this feed has seen (event or resync). */
  lastRevision(matchId: string): number {
    return this.last.get(matchId) ?? 0;
  }

  event(event: MatchEventMessage): void {
    const at = Date.now();
    let revisions = this.arrivals.get(event.matchId);
    if (!revisions) this.arrivals.set(event.matchId, (revisions = new Map()));
    if (revisions.has(event.revision)) {
      this.duplicates += 1;
      return;
    }
    revisions.set(event.revision, at);
    // The SDK promises each match's revisions once, in order, without a gap (a resync excepted).
    const last = this.last.get(event.matchId) ?? 0;
    if (event.revision !== last + 1) this.orderViolations += 1;
    this.last.set(event.matchId, Math.max(last, event.revision));
    this.states.set(event.matchId, event.state);
    this.wake();
  }

  resync(resync: ResyncMessage): void {
    this.resyncedTo.set(
      resync.matchId,
      Math.max(this.resyncedTo.get(resync.matchId) ?? 0, resync.revision),
    );
    this.last.set(resync.matchId, Math.max(this.last.get(resync.matchId) ?? 0, resync.revision));
    this.states.set(resync.matchId, resync.state);
    this.wake();
  }

  /** The first match notified (any state) but those `done`, once there is one. */
  async nextMatch(done: ReadonlySet<string>, timeoutMs: number): Promise<string | undefined> {
    return this.until(
      () =>
        [...this.arrivals.keys(), ...this.resyncedTo.keys()].find((matchId) => !done.has(matchId)),
      timeoutMs,
    );
  }

  /** The match's state once `accept` takes it. */
  state(
    matchId: string,
    accept: (state: string) => boolean,
    timeoutMs: number,
  ): Promise<string | undefined> {
    return this.until(() => {
      const state = this.states.get(matchId);
      return state !== undefined && accept(state) ? state : undefined;
    }, timeoutMs);
  }

  private async until<T>(read: () => T | undefined, timeoutMs: number): Promise<T | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = read();
      if (value !== undefined) return value;
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(left, 1_000));
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.waiters.add(done);
      });
    }
  }

  private wake(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const waiter of waiters) waiter();
  }
}

export interface JourneyLoadOptions {
  apiUrls: string[];
  players: number;
  mode: string;
  /** How long a journey waits for each step before it is given up (and counted unfinished). */
  stepTimeoutMs: number;
  /** How long a journey waits for its match's game server (allocation and start-up). */
  serverTimeoutMs: number;
  /** The game's length (the game servers' MATCH_DURATION_MS). */
  gameMs: number;
}

export interface JourneyCounts {
  started: number;
  /** Saw its match reach a terminal state through notifications. */
  finished: number;
  completed: number;
  /** Finished otherwise than COMPLETED (FAILED, CANCELLED): the match still ended cleanly. */
  endedOtherwise: number;
  /** Gave up on a step; its ticket was cancelled where possible. */
  abandoned: number;
  abandonReasons: Record<string, number>;
}

/** Counts the HTTP answers the SDK got, by status class, including its retries. */
export class HttpTally {
  readonly byStatus = new Map<number, number>();
  networkErrors = 0;

  get serverErrors(): number {
    let count = 0;
    for (const [status, n] of this.byStatus) if (status >= 500) count += n;
    return count;
  }

  fetch: FetchLike = async (url, init) => {
    try {
      const response = await fetch(url, init);
      this.byStatus.set(response.status, (this.byStatus.get(response.status) ?? 0) + 1);
      return response;
    } catch (error) {
      this.networkErrors += 1;
      throw error;
    }
  };
}

export class JourneyLoad {
  readonly feeds: PlayerFeed[] = [];
  readonly counts: JourneyCounts = {
    started: 0,
    finished: 0,
    completed: 0,
    endedOtherwise: 0,
    abandoned: 0,
    abandonReasons: {},
  };
  readonly http = new HttpTally();
  /**
   * Players whose game connection closed before the match ended (their server died): when their
   * next enqueue, tried at once and retried until accepted, was accepted (epoch ms).
   */
  readonly requeuedAfterLoss = new Map<string, number>();
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly open = new Set<{ close(): void }>();
  private active = 0;

  constructor(private readonly options: JourneyLoadOptions) {}

  get activeJourneys(): number {
    return this.active;
  }

  start(): void {
    this.running = true;
    this.loops = Array.from({ length: this.options.players }, (_, i) => this.loop(i));
  }

  /** No new journeys; resolves once the ones under way ended (finished or given up). */
  async finish(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Closes every subscription still open (abandoned journeys keep theirs until the end). */
  close(): void {
    for (const handle of this.open) handle.close();
    this.open.clear();
  }

  private async loop(index: number): Promise<void> {
    // Spread the first journeys so the load is steady rather than in waves.
    await sleep((index * 400) % 4_000);
    while (this.running) {
      this.counts.started += 1;
      this.active += 1;
      try {
        await this.journey();
      } finally {
        this.active -= 1;
      }
    }
  }

  /** Enqueues until accepted (409 TICKET_ALREADY_LIVE while the lost match is still live), then leaves. */
  private async requeueAfterLoss(client: PlayerClient, playerId: string): Promise<void> {
    const deadline = Date.now() + this.options.serverTimeoutMs;
    while (Date.now() < deadline) {
      try {
        const again = await client.enqueue(this.options.mode);
        this.requeuedAfterLoss.set(playerId, Date.now());
        await client.cancel(again.id).catch(() => undefined);
        return;
      } catch {
        await sleep(100);
      }
    }
  }

  private abandon(reason: string): void {
    this.counts.abandoned += 1;
    this.counts.abandonReasons[reason] = (this.counts.abandonReasons[reason] ?? 0) + 1;
  }

  private async journey(): Promise<void> {
    const { stepTimeoutMs } = this.options;
    const client = new PlayerClient({
      baseUrl: this.options.apiUrls,
      fetch: this.http.fetch,
      requestTimeoutMs: 5_000,
      retries: { retries: 8, baseDelayMs: 250, maxDelayMs: 2_000 },
    });
    let subscription: NotificationSubscription | undefined;
    let heartbeats: HeartbeatHandle | undefined;
    let ticketId: string | undefined;
    const progress = { step: 'session' };
    try {
      const session = await client.createSession();
      const feed = new PlayerFeed(session.playerId);
      progress.step = 'subscribe';
      const sub = client.subscribe({
        onEvent: (event) => feed.event(event),
        onResync: (resync) => feed.resync(resync),
      });
      subscription = sub;
      await withTimeout(sub.ready, stepTimeoutMs, 'subscribe');
      // Recorded only once subscribed: its events from here on must all arrive.
      this.feeds.push(feed);
      progress.step = 'probe';
      const options = await client.queueOptions();
      await client.probeAll(options.regions, { samples: 1 });
      progress.step = 'enqueue';
      const ticket = await client.enqueue(this.options.mode);
      ticketId = ticket.id;
      heartbeats = client.startHeartbeats(ticket.id);
      const played = new Set<string>();
      let final: string;
      // A match that fails before its players are assigned puts their tickets back in the queue:
      // the player waits for the next one, as a game client does.
      for (;;) {
        progress.step = 'match';
        const matchId = await feed.nextMatch(played, stepTimeoutMs * 2);
        if (!matchId) return this.abandon('no-match');
        played.add(matchId);
        const ended = await this.play(client, feed, heartbeats, matchId, progress);
        if ('abandoned' in ended) return this.abandon(ended.abandoned);
        final = ended.final;
        if (final === 'COMPLETED' || !ended.requeuable || !(await requeued(client, ticket.id)))
          break;
      }
      this.counts.finished += 1;
      if (final === 'COMPLETED') this.counts.completed += 1;
      else this.counts.endedOtherwise += 1;
      feed.closedAt = Date.now();
      subscription.close();
      subscription = undefined;
      await client.endSession().catch(() => undefined);
    } catch {
      this.abandon(`${progress.step}-error`);
    } finally {
      heartbeats?.stop();
      if (subscription) {
        // Given up: leave the ticket, keep listening (what is committed for it must still arrive).
        if (ticketId) await client.cancel(ticketId).catch(() => undefined);
        this.open.add(subscription);
      }
    }
  }

  /**
   * One match, from its first notification to the state it ended in (`requeuable` unless its game
   * server was lost: the player has queued again already), or why it was given up.
   */
  private async play(
    client: PlayerClient,
    feed: PlayerFeed,
    heartbeats: HeartbeatHandle,
    matchId: string,
    progress: { step: string },
  ): Promise<{ final: string; requeuable: boolean } | { abandoned: string }> {
    const { stepTimeoutMs } = this.options;
    let connection: GameConnection | undefined;
    let requeuable = true;
    try {
      progress.step = 'server';
      const ready = await feed.state(
        matchId,
        (state) => JOINABLE.has(state) || TERMINAL.has(state),
        this.options.serverTimeoutMs,
      );
      if (!ready) return { abandoned: 'no-server' };
      if (JOINABLE.has(ready)) {
        progress.step = 'join';
        try {
          const assignment = await client.waitForAssignment(matchId, { timeoutMs: stepTimeoutMs });
          connection = await withTimeout(client.joinMatch(assignment), stepTimeoutMs, 'join');
          await withTimeout(connection.ended, this.options.gameMs + stepTimeoutMs, 'game');
        } catch (error) {
          // The match may have ended meanwhile (a no-show deadline passed while the API was down):
          // the notification of how it ended is what counts below. A game whose server went away
          // sends its player back to the queue at once, as a game client would.
          if (error instanceof GameConnectionClosedError) {
            heartbeats.stop();
            requeuable = false;
            await this.requeueAfterLoss(client, feed.playerId);
          }
        }
      }
      progress.step = 'result';
      const final = await feed.state(matchId, (state) => TERMINAL.has(state), stepTimeoutMs * 2);
      return final === undefined ? { abandoned: 'no-result' } : { final, requeuable };
    } finally {
      connection?.close();
    }
  }
}

/** Whether the ticket is back in the queue (its match failed before the player was assigned). */
async function requeued(client: PlayerClient, ticketId: string): Promise<boolean> {
  const { state } = await client.ticket(ticketId);
  return state === 'SEARCHING' || state === 'MATCHED';
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
