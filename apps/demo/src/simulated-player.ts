import type { AssignmentResponse, MatchEventMessage } from '@matchplane/contracts';
import {
  MatchPlay,
  MatchplaneApiError,
  PlayerClient,
  type GameConnection,
  type GameEnded,
  type GameServerMessage,
  type HeartbeatHandle,
  type NotificationSubscription,
} from '@matchplane/sdk/node';
import { DemoFailure, describeError, within, type StackApp } from './failure';
import { simulatedFetch } from './locations';
import type { MatchBoard } from './match-board';
import { MatchFeed } from './match-feed';
import type { PlayerOutcome, PlayerSettings } from './player-settings';
import { explainWhileSearching, untilAssigned } from './ticket-watch';
import { short, type Timeline } from './timeline';

export type { PlayerOutcome, PlayerSettings } from './player-settings';

const TERMINAL: ReadonlySet<string> = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);
const JOINABLE: ReadonlySet<string> = new Set(['ASSIGNMENT_READY', 'IN_PROGRESS']);
/** A moment's thought before a simulated player accepts its ready check. */
const READY_CHECK_THINK_MS = 400;

/**
 * One simulated player, driven through the SDK the way a game client would: guest session,
 * notification subscription, latency probes, ticket and heartbeats, then — told by notifications —
 * its assignment, the game server, and the result. Each step is a line of the timeline.
 */
export class SimulatedPlayer {
  private readonly feed = new MatchFeed();
  private readonly client: PlayerClient;
  private subscription: NotificationSubscription | undefined;
  private heartbeats: HeartbeatHandle | undefined;
  private connection: GameConnection | undefined;
  private lastHeartbeatState: string | undefined;
  private ticks = 0;
  /** Set for a dropping player until its game starts. */
  private dropLater: (() => void) | undefined;
  private onMatched: (matchId: string) => void = () => undefined;
  /** The match this player was put in, once it was. */
  readonly matchId = new Promise<string>((resolve) => (this.onMatched = resolve));

  constructor(
    private readonly settings: PlayerSettings,
    private readonly timeline: Timeline,
    private readonly board: MatchBoard,
  ) {
    this.client = new PlayerClient({
      baseUrl: settings.apiUrl,
      fetch: simulatedFetch(settings.edgeRoutes, { onHeartbeat: (state) => this.heartbeat(state) }),
    });
  }

  async play(): Promise<PlayerOutcome> {
    const { label, location, mode } = this.settings;
    const session = await this.step(this.client.createSession(), 10_000, 'a session', 'api');
    this.log(
      `signed in as guest ${short(session.playerId)} (simulated location: ${location.city})`,
    );

    this.subscription = this.client.subscribe({
      onEvent: (event) => this.notified(event),
      onResync: (resync) => {
        this.log(
          `notified: resync of match ${short(resync.matchId)} to ${resync.state} (rev ${resync.revision}, ${resync.reason})`,
        );
        this.feed.push(resync);
        this.board.observed(resync);
      },
      onConnection: (event) =>
        this.log(
          event.state === 'connected'
            ? 'notifications connected'
            : `notifications dropped (${event.code}${event.reason ? ` ${event.reason}` : ''}); reconnecting in ${event.delayMs} ms`,
        ),
      onError: (error) => this.log(`notification error: ${error.message}`),
    });
    await this.step(this.subscription.ready, 10_000, 'the notification socket', 'api');

    // No region list: probeAll reads this client's queue options, and with them each region's edge.
    const probes = await this.client.probeAll(undefined, { samples: this.settings.samples });
    const measured = Object.values(probes.measured)
      .sort((a, b) => a.estimateMs - b.estimateMs)
      .map((answer) => `${answer.region} ${answer.estimateMs} ms`);
    for (const [region, error] of Object.entries(probes.failed))
      this.log(`probe of ${region} failed: ${describeError(error)}`);
    if (measured.length === 0)
      throw new DemoFailure(`${label} could not measure any region`, 'api');
    this.log(
      `probed: ${measured.join(', ')} (server-measured RTT, median of ${this.settings.samples})`,
    );

    const ticket = await this.step(this.client.enqueue(mode), 10_000, 'a ticket', 'api');
    this.log(`queued for ${mode}: ticket ${short(ticket.id)} ${ticket.state}`);
    this.heartbeats = this.client.startHeartbeats(ticket.id, {
      onError: (error) => this.log(`heartbeat failed: ${describeError(error)}`),
    });
    void this.heartbeats.done.then((end) => {
      if (end.reason === 'left-queue')
        this.log(`heartbeats stop: ticket left the queue (${end.ticket.state})`);
      else if (end.reason === 'finished') this.log(`heartbeats stop: ${describeError(end.error)}`);
    });
    void explainWhileSearching(
      this.client,
      ticket.id,
      () => this.feed.any(),
      (line) => this.log(line),
    );

    const matched = await this.step(
      this.feed.first(() => true),
      this.settings.matchTimeoutMs,
      'a match',
      'matcher',
    );
    const matchId = matched.matchId;
    const mine = await this.client.ticket(ticket.id);
    if (mine.matchId !== matchId)
      throw new DemoFailure(
        `${label} was notified of match ${short(matchId)} but its ticket is ${mine.state} ${mine.matchId ? `in ${short(mine.matchId)}` : 'without a match'}`,
        'matcher',
      );
    this.log(
      `ticket ${short(ticket.id)} ${mine.state} into match ${short(matchId)} after ${mine.waitSeconds.toFixed(1)} s in the queue${this.settings.role === 'late' ? ' (a backfill: the match is already under way)' : ''}`,
    );
    this.board.matched(matchId, { label, predictedRttMs: mine.predictedRttMs });
    this.onMatched(matchId);
    if (this.settings.readyCheck) await this.acceptReadyCheck(matchId);

    const ready = await this.step(
      this.feed.first(
        (e) => e.matchId === matchId && (JOINABLE.has(e.state) || TERMINAL.has(e.state)),
      ),
      30_000,
      `a game server for match ${short(matchId)}`,
      'allocator',
    );
    if (!JOINABLE.has(ready.state))
      await this.ended(matchId, ready.state, 'before it could be joined');
    // A backfilled player is told to connect by its ticket going ASSIGNED: the game server has
    // verified and accepted the roster revision that carries it.
    if (this.settings.role === 'late')
      await untilAssigned(this.client, ticket.id, this.settings.label, (line) => this.log(line));

    const assignment = await this.step(
      this.client.assignment(matchId),
      10_000,
      'the assignment',
      'api',
    );
    this.log(
      `assignment: server ${assignment.serverId} at ${assignment.endpoint}, team ${assignment.team}`,
    );
    this.board.assigned(matchId, this.boardLabel(), assignment.team, assignment.region);
    if (this.settings.role === 'no-show') return this.noShow(matchId, ticket.id, assignment.team);

    const game = await this.step(
      this.joinGame(matchId, assignment),
      15_000,
      'joining the game server',
      'allocator',
    );
    this.log(`joined the game server as team ${game.team}`);

    const ended = await this.step(
      game.ended,
      this.settings.matchDurationMs + 30_000,
      'the end of the game',
      'allocator',
    );
    const won = ended.winningTeam === game.team;
    this.log(
      ended.outcome === 'COMPLETED'
        ? `game over after ${this.ticks} ticks: team ${ended.winningTeam} won (${won ? 'a win' : 'a loss'} for ${label})`
        : `game over: ${ended.outcome}`,
    );
    if (ended.outcome !== 'COMPLETED') await this.ended(matchId, ended.outcome, 'during play');
    const closed = await this.step(
      game.connection().closed,
      5_000,
      'the game server to close',
      'allocator',
    );
    if (closed.code !== 1000)
      this.log(
        `game connection closed with ${closed.code}${closed.reason ? ` ${closed.reason}` : ''}`,
      );
    this.board.finished(matchId, ended);

    const final = await this.step(
      this.feed.first((e) => e.matchId === matchId && TERMINAL.has(e.state)),
      15_000,
      `the result of match ${short(matchId)} to be notified`,
      'dispatcher',
    );
    if (final.state !== 'COMPLETED') await this.ended(matchId, final.state, 'after play');
    const after = await this.client.ticket(ticket.id);
    this.log(`ticket ${short(ticket.id)} ${after.state}`);
    this.close();
    await this.client.endSession().catch(() => undefined);
    this.log('signed out');
    return { matchId, team: game.team, won };
  }

  /** Ends the subscription, the heartbeats and the game connection (idempotent). */
  close(): void {
    this.heartbeats?.stop();
    this.subscription?.close();
    this.connection?.close();
  }

  // ---- Internals ----------------------------------------------------------------------------

  private log(what: string): void {
    this.timeline.player(this.settings.label, what);
  }

  private step<T>(
    promise: Promise<T>,
    timeoutMs: number,
    what: string,
    suspect: StackApp,
  ): Promise<T> {
    return within(promise, timeoutMs, `${what} (${this.settings.label})`, suspect).catch(
      (error: unknown) => {
        if (error instanceof DemoFailure) throw error;
        throw new DemoFailure(`${this.settings.label}: ${describeError(error)}`, suspect, {
          cause: error,
        });
      },
    );
  }

  private notified(event: MatchEventMessage): void {
    // A state change says itself; another event (players added, presence) is named.
    const other = event.event === 'match.state_changed' ? '' : `, ${event.event}`;
    this.log(
      `notified: match ${short(event.matchId)} ${event.state} (rev ${event.revision}${other})`,
    );
    this.feed.push(event);
    this.board.observed(event);
  }

  private heartbeat(state: string): void {
    if (state === this.lastHeartbeatState) return;
    this.lastHeartbeatState = state;
    this.log(`heartbeat: ticket ${state}`);
  }

  /**
   * Joins the game server; resolves, once joined, with the game's end. A player that drops plays
   * through the SDK's MatchPlay, which rejoins by itself after the drop (a fresh join token).
   */
  private async joinGame(
    matchId: string,
    assignment: AssignmentResponse,
  ): Promise<{ team: number; ended: Promise<GameEnded>; connection: () => GameConnection }> {
    const onMessage = (message: GameServerMessage): void => this.game(message);
    if (this.settings.role !== 'drops') {
      const connection = await this.client.joinMatch(assignment, { onMessage });
      this.connection = connection;
      return { team: connection.team, ended: connection.ended, connection: () => connection };
    }
    const play = await MatchPlay.start(this.client, matchId, {
      onMessage,
      onRejoined: (connection) => {
        this.connection = connection;
        this.log(
          `rejoined the game server as team ${connection.team}, its assignment fetched anew`,
        );
      },
    });
    this.connection = play.connection;
    this.dropLater = () => {
      this.log('game connection lost (simulated); the SDK rejoins by itself');
      play.drop();
    };
    return {
      team: play.connection.team,
      ended: play.ended.then((result) => result.ended),
      connection: () => play.connection,
    };
  }

  private game(message: GameServerMessage): void {
    switch (message.type) {
      case 'started':
        this.log(
          `game ${this.settings.role === 'late' ? 'under way' : 'started'} (${message.durationMs} ms${this.settings.role === 'late' ? ' left' : ''})`,
        );
        // A third of the way in, the dropping player loses its connection (once).
        if (this.dropLater) setTimeout(this.dropLater, message.durationMs / 3).unref();
        this.dropLater = undefined;
        return;
      case 'tick':
        this.ticks += 1;
        return;
      case 'joined':
      case 'ended':
        return;
    }
  }

  private boardLabel(): string {
    const { label, role } = this.settings;
    return role === 'no-show'
      ? `${label} (no-show)`
      : role === 'late'
        ? `${label} (backfill)`
        : role === 'drops'
          ? `${label} (reconnects)`
          : label;
  }

  /** Never connects; waits for the match to end and shows what became of its ticket. */
  private async noShow(matchId: string, ticketId: string, team: number): Promise<PlayerOutcome> {
    this.log('does not connect to the game server (a no-show)');
    const final = await this.step(
      this.feed.first((e) => e.matchId === matchId && TERMINAL.has(e.state)),
      this.settings.matchDurationMs + 60_000,
      `the end of match ${short(matchId)}`,
      'allocator',
    );
    const after = await this.client.ticket(ticketId);
    this.log(
      `match ${short(matchId)} ${final.state} without it; ticket ${short(ticketId)} ${after.state}${after.endReason ? ` (${after.endReason})` : ''}`,
    );
    this.close();
    await this.client.endSession().catch(() => undefined);
    return { matchId, team, won: false };
  }

  /** The ready check: notified AWAITING_ACCEPTANCE, the player accepts after a moment. */
  private async acceptReadyCheck(matchId: string): Promise<void> {
    const asked = await this.step(
      this.feed.first(
        (e) =>
          e.matchId === matchId && (e.state === 'AWAITING_ACCEPTANCE' || TERMINAL.has(e.state)),
      ),
      10_000,
      `the ready check of match ${short(matchId)}`,
      'matcher',
    );
    if (asked.state !== 'AWAITING_ACCEPTANCE')
      await this.ended(matchId, asked.state, 'before its ready check');
    this.log(`ready check: match ${short(matchId)} waits for every player to accept`);
    await new Promise((resolve) => setTimeout(resolve, READY_CHECK_THINK_MS));
    const answer = await this.step(
      this.client.readyCheck.accept(matchId),
      10_000,
      'the ready check answer',
      'api',
    );
    this.log(
      `accepted match ${short(matchId)}: ${
        answer.matchState === 'ALLOCATING'
          ? 'the last to accept, so a game server is asked for now'
          : answer.matchState === 'AWAITING_ACCEPTANCE'
            ? 'others still to answer'
            : `the match is ${answer.matchState}`
      }`,
    );
  }

  /**
   * The match ended otherwise than COMPLETED: a failure, with the control plane's reason, which
   * the player API gives an ended match's participant (its assignment: 410 MATCH_ENDED).
   */
  private async ended(matchId: string, state: string, when: string): Promise<never> {
    const end = await this.client.assignment(matchId).then(
      () => undefined,
      (error: unknown) => (error instanceof MatchplaneApiError ? error.problem : undefined),
    );
    const reason = end?.endReason ? ` (${end.endReason})` : '';
    throw new DemoFailure(
      `match ${short(matchId)} ended ${end?.matchState ?? state}${reason} ${when}`,
      'allocator',
    );
  }
}
