import {
  ErrorCode,
  matchEventsPath,
  PlayerRoutes,
  type AssignmentResponse,
  type MatchEventsResponse,
} from '@matchplane/contracts';
import type { ApiEndpoints } from './api-endpoints';
import { GameConnection, type GameAssignment, type GameConnectionOptions } from './game-connection';
import {
  NotificationSubscriber,
  type NotificationHandlers,
  type NotificationSubscriberOptions,
  type NotificationSubscription,
} from './notification-subscriber';
import { sleep, type PlayerCalls } from './player-calls';
import { MatchplaneApiError } from './sdk.errors';
import type { WebSocketConnector } from './web-socket';

export interface WaitForAssignmentOptions {
  /** Default 30_000. */
  timeoutMs?: number;
  /** Default 250. */
  pollMs?: number;
}

/** Options of `subscribe` beyond what the client supplies (its base URL and session token). */
export type SubscribeOptions = Omit<NotificationSubscriberOptions, 'baseUrl' | 'token'>;

/** `waitForAssignment` ran out of time while the match was still being set up (`lastState`). */
export class AssignmentWaitTimeoutError extends Error {
  override name = 'AssignmentWaitTimeoutError';

  constructor(
    readonly matchId: string,
    readonly lastState: string | undefined,
    timeoutMs: number,
  ) {
    super(
      `match ${matchId} had no assignment within ${timeoutMs} ms (last state ${lastState ?? 'unknown'})`,
    );
  }
}

/**
 * The match ended (FAILED, CANCELLED, COMPLETED) before this player could be assigned to it, or
 * while it waited; `reason` is the match's end reason when the API gave one (e.g. NO_SHOW).
 */
export class AssignmentUnavailableError extends Error {
  override name = 'AssignmentUnavailableError';

  constructor(
    readonly matchId: string,
    readonly state: string,
    readonly reason?: string,
  ) {
    super(
      `match ${matchId} is ${state}${reason ? ` (${reason})` : ''}: it will never have an assignment to join`,
    );
  }
}

/** Match states after which no assignment is ever served. */
const TERMINAL_MATCH_STATES: ReadonlySet<string> = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

/** PlayerClient's matches: notifications, history, assignment, joining (documented there). */
export class MatchCalls {
  constructor(
    private readonly calls: PlayerCalls,
    private readonly endpoints: ApiEndpoints,
    private readonly token: () => string | undefined,
    private readonly webSocket: WebSocketConnector | undefined,
  ) {}

  subscribe(
    handlers: NotificationHandlers,
    options: SubscribeOptions = {},
  ): NotificationSubscription {
    return new NotificationSubscriber({
      ...this.socketOption(),
      ...options,
      baseUrl: this.endpoints,
      token: this.token,
    }).subscribe(handlers);
  }

  matchEvents(matchId: string, after = 0): Promise<MatchEventsResponse> {
    if (!Number.isInteger(after) || after < 0)
      throw new Error('after must be a non-negative integer');
    return this.calls.required<MatchEventsResponse>({
      method: 'GET',
      path: `${matchEventsPath(matchId)}?after=${after}`,
      retry: 'safe',
    });
  }

  assignment(matchId: string): Promise<AssignmentResponse> {
    return this.calls.required<AssignmentResponse>({
      method: 'GET',
      path: PlayerRoutes.assignment(matchId),
      retry: 'safe',
    });
  }

  async waitForAssignment(
    matchId: string,
    options: WaitForAssignmentOptions = {},
  ): Promise<AssignmentResponse> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const pollMs = options.pollMs ?? 250;
    const deadline = Date.now() + timeoutMs;
    let lastState: string | undefined;
    let lastRevision = 0;
    for (;;) {
      try {
        return await this.assignment(matchId);
      } catch (err) {
        if (err instanceof MatchplaneApiError && err.code === ErrorCode.MATCH_ENDED) {
          const { matchState, endReason } = err.problem ?? {};
          throw new AssignmentUnavailableError(matchId, matchState ?? 'ENDED', endReason);
        }
        if (!(err instanceof MatchplaneApiError && err.code === ErrorCode.ASSIGNMENT_NOT_READY))
          throw err;
      }
      // Not ready: is the match still on its way, or over? Only new events are fetched.
      const events = await this.matchEvents(matchId, lastRevision);
      lastState = events.state;
      lastRevision = Math.max(lastRevision, events.revision);
      if (TERMINAL_MATCH_STATES.has(events.state))
        throw new AssignmentUnavailableError(matchId, events.state);
      if (Date.now() + pollMs > deadline)
        throw new AssignmentWaitTimeoutError(matchId, lastState, timeoutMs);
      await sleep(pollMs);
    }
  }

  joinMatch(
    assignment: GameAssignment,
    options: GameConnectionOptions = {},
  ): Promise<GameConnection> {
    return GameConnection.join(assignment, { ...this.socketOption(), ...options });
  }

  /** The client's connector, where it was given one (the caller's own option still wins). */
  private socketOption(): { webSocket?: WebSocketConnector } {
    return this.webSocket ? { webSocket: this.webSocket } : {};
  }
}
